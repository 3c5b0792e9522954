// `quickfill model pull REF` and `quickfill model list`: models in the models
// folder (server/core/model_store.h), fetched by model_pull.* over net/.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "inference/gguf/gguf.h"
#include "server/net/sha256.h"
#include "server/cli/cli_args.h"
#include "server/cli/commands.h"
#include "server/cli/model_pull.h"
#include "server/cli/model_ref.h"
#include "server/cli/progress_meter.h"
#include "server/core/model_store.h"

namespace qf::cli {

namespace fs = std::filesystem;

namespace {

constexpr const char* usage =
    "usage: quickfill model SUBCOMMAND ...\n"
    "  pull REF [--name NAME] [--sha256 HEX] [--force] [--ca-file FILE]\n"
    "      download a GGUF model into the models folder; REF is owner/repo:file.gguf[@revision]\n"
    "      (a Hugging Face file) or an https:// URL\n"
    "  list\n"
    "      the pulled models: name, size, architecture\n"
    "Models live in $XDG_DATA_HOME/quickfill/models (default ~/.local/share/quickfill/models);\n"
    "--model NAME and the model setting accept a pulled model's name. Each subcommand takes --help.\n";

int model_pull(std::span<char*> args) {
  std::string ref, name, sha, ca_file;
  bool force = false;
  int64_t read_timeout_ms = 30000, connect_timeout_ms = 15000;
  arg_parser p("quickfill model pull",
               "Downloads a GGUF model into the models folder (resumable; SHA-256 checked when the server gives "
               "one).");
  p.add_positional("REF", &ref, "owner/repo:file.gguf[@revision] (Hugging Face) or an http(s) URL");
  p.add_string({"--name"}, &name, "install as NAME.gguf (default: the file name)");
  p.add_string({"--sha256"}, &sha, "expected SHA-256 (64 hex digits); wins over the server's");
  p.add_flag({"--force"}, &force, "replace an installed model of that name");
  p.add_string({"--ca-file"}, &ca_file, "trust the certificates in FILE instead of the system store");
  p.add_int({"--read-timeout-ms"}, &read_timeout_ms, "longest wait for data", true);
  p.add_int({"--connect-timeout-ms"}, &connect_timeout_ms, "longest connect", true);
  if (!p.parse(args)) return p.exit_code();
  if (!sha.empty() && !net::is_sha256_hex(sha)) {
    std::fprintf(stderr, "quickfill model pull: --sha256 wants 64 hex digits, got '%s'\n", sha.c_str());
    return 2;
  }
  std::string error;
  const std::string endpoint = hugging_face_endpoint();
  std::optional<model_ref> r = parse_model_ref(ref, endpoint, &error);
  if (!r) {
    std::fprintf(stderr, "quickfill model pull: %s\n", error.c_str());
    return 2;
  }
  if (!name.empty()) {
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".gguf") == 0) name.resize(name.size() - 5);
    if (!valid_model_name(name)) {
      std::fprintf(stderr, "quickfill model pull: bad --name '%s'\n", name.c_str());
      return 2;
    }
    r->name = name;
  }
  // A file size limit (RLIMIT_FSIZE) must fail the write with EFBIG, not kill the process.
  std::signal(SIGXFSZ, SIG_IGN);

  pull_request req;
  req.url = r->url;
  req.name = r->name;
  req.models_dir = server::models_dir();
  req.sha256 = sha;
  req.force = force;
  req.http.ca_file = ca_file;
  req.http.read_timeout = std::chrono::milliseconds(read_timeout_ms);
  req.http.connect_timeout = std::chrono::milliseconds(connect_timeout_ms);
  req.http.user_agent = std::string("quickfill/") + QUICKFILL_VERSION;
  if (r->hugging_face) {
    req.hint_404 = "check that the repository " + r->repo + " exists and has this file; names are case-sensitive";
    req.hint_auth = "a gated or private repository needs a token in HF_TOKEN";
    if (const char* tok = std::getenv("HF_TOKEN"); tok && *tok)
      req.http.headers.push_back({"Authorization", std::string("Bearer ") + tok});
  }
  std::fprintf(stderr, "pulling %s\n  from %s\n  into %s\n", req.name.c_str(), req.url.c_str(), req.models_dir.c_str());
  progress_meter meter(stderr, ::isatty(STDERR_FILENO) == 1);
  try {
    pull_report rep = pull_model(req, meter);
    if (rep.already_present) {
      std::fprintf(stderr, "%s is already pulled (%s); --force downloads it again\n", rep.path.c_str(),
                   format_bytes(rep.size).c_str());
    } else {
      std::fprintf(stderr, "sha256 %s (%s)\n", rep.sha256.c_str(),
                   rep.checked_against.empty() ? "not checked: the server gave no hash"
                                               : ("matches " + rep.checked_against).c_str());
      std::fprintf(stderr, "pulled %s: %s, %s%s\n", req.name.c_str(), format_bytes(rep.size).c_str(),
                   rep.architecture.empty() ? "architecture unknown" : rep.architecture.c_str(),
                   rep.resumed_from > 0 ? (", resumed at byte " + std::to_string(rep.resumed_from)).c_str() : "");
      std::fprintf(stderr, "use it with --model %s or \"quickfill.model\": \"%s\"\n", req.name.c_str(),
                   req.name.c_str());
    }
    std::printf("%s\n", rep.path.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "quickfill model pull: %s\n", e.what());
    return 1;
  }
}

int model_list(std::span<char*> args) {
  arg_parser p("quickfill model list", "Lists the models in the models folder.");
  if (!p.parse(args)) return p.exit_code();
  const std::string dir = server::models_dir();
  std::error_code ec;
  struct row {
    std::string name, size, arch;
  };
  std::vector<row> rows;
  if (!dir.empty() && fs::is_directory(dir, ec)) {
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string file = e.path().filename().string();
      const bool part = file.size() > 10 && file.compare(file.size() - 10, 10, ".gguf.part") == 0;
      if (!e.is_regular_file(ec) || (e.path().extension() != ".gguf" && !part)) continue;
      row r;
      r.name = file.substr(0, file.size() - (part ? 10 : 5));
      r.size = format_bytes(e.file_size(ec));
      if (part) {
        r.arch = "(partial download: `quickfill model pull` resumes it)";
      } else {
        try {
          auto g = infer::gguf::file::open(e.path().string(), infer::gguf::data_storage::mapped);
          r.arch = g->get_string("general.architecture").value_or("?");
        } catch (const std::exception& ex) {
          r.arch = std::string("(unreadable: ") + ex.what() + ")";
        }
      }
      rows.push_back(std::move(r));
    }
  }
  std::sort(rows.begin(), rows.end(), [](const row& a, const row& b) { return a.name < b.name; });
  std::fprintf(stderr, "models folder: %s\n", dir.empty() ? "(none: HOME is not set)" : dir.c_str());
  if (rows.empty()) {
    std::fprintf(stderr, "no models pulled yet (quickfill model pull REF)\n");
    return 0;
  }
  size_t wn = 4, ws = 4;
  for (const auto& r : rows) wn = std::max(wn, r.name.size()), ws = std::max(ws, r.size.size());
  std::printf("%-*s  %*s  %s\n", static_cast<int>(wn), "NAME", static_cast<int>(ws), "SIZE", "ARCHITECTURE");
  for (const auto& r : rows)
    std::printf("%-*s  %*s  %s\n", static_cast<int>(wn), r.name.c_str(), static_cast<int>(ws), r.size.c_str(),
                r.arch.c_str());
  return 0;
}

}  // namespace

int cmd_model(std::span<char*> args) {
  static constexpr subcommand subcommands[] = {{"pull", model_pull}, {"list", model_list}};
  return run_subcommand(args, "quickfill model", usage, subcommands);
}

}  // namespace qf::cli
