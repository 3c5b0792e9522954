// Parsing of the server-mode command line (see server_args.h).
#include "server/core/server_args.h"

#include <charconv>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>

#include "server/core/model_store.h"

namespace qf::server {

namespace {

template <class T>
bool parse_number(const char* s, T& out) {
  const char* end = s + std::strlen(s);
  auto [p, ec] = std::from_chars(s, end, out);
  return ec == std::errc() && p == end;
}

// The options whose value is kept as given.
constexpr std::pair<std::string_view, std::string server_args::*> k_text_options[] = {
    {"--model", &server_args::model_path},   {"--log-file", &server_args::log_file},
    {"--log-level", &server_args::log_level}, {"--socket-dir", &server_args::socket_dir},
    {"--http", &server_args::http_listen},    {"--api-key-file", &server_args::http_api_key_file},
};

std::string server_args::* text_option(std::string_view name) {
  for (const auto& [option, member] : k_text_options)
    if (option == name) return member;
  return nullptr;
}

}  // namespace

bool parse_server_args(std::span<char*> args, server_args& out, std::string* error) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    std::string value;
    bool has_inline_value = false;
    if (a.rfind("--", 0) == 0) {
      std::size_t eq = a.find('=');
      if (eq != std::string::npos) {
        value = a.substr(eq + 1);
        a = a.substr(0, eq);
        has_inline_value = true;
      }
    }
    auto need_value = [&](std::string& dst) {
      if (has_inline_value) {
        dst = value;
        return true;
      }
      if (i + 1 >= args.size()) {
        *error = a + " needs a value";
        return false;
      }
      dst = args[++i];
      return true;
    };
    // The option's value as a number of at least `min`; `expected` is what
    // the error says it should have been.
    auto need_number = [&]<class T>(T& dst, T min, const char* expected) {
      std::string v;
      if (!need_value(v)) return false;
      if (!parse_number(v.c_str(), dst) || dst < min) {
        *error = a + ": expected " + expected + ", got '" + v + "'";
        return false;
      }
      return true;
    };
    if (a == "--stdio") continue;
    if (std::string server_args::*member = text_option(a)) {
      if (!need_value(out.*member)) return false;
    } else if (a == "--help" || a == "-h") {
      out.help = true;
    } else if (a == "--version") {
      out.version = true;
    } else if (a == "--device") {
      if (!need_value(out.device)) return false;
      if (out.device != "auto" && out.device != "cpu" && out.device != "cuda") {
        *error = "--device: expected auto, cpu or cuda, got '" + out.device + "'";
        return false;
      }
    } else if (a == "--threads") {
      if (!need_number(out.threads, 0, "a non-negative integer")) return false;
    } else if (a == "--max-message-size") {
      if (!need_number(out.max_message_bytes, std::size_t{1}, "a positive number of bytes")) return false;
    } else if (a == "--max-open-documents" || a == "--max-document-bytes") {
      std::size_t& dst = a == "--max-open-documents" ? out.max_open_documents : out.max_document_bytes;
      if (!need_number(dst, std::size_t{1}, "a positive number")) return false;
    } else if (a == "--no-background") {
      out.background = false;
    } else if (a == "--no-daemon") {
      out.no_daemon = true;
    } else if (a == "--idle-timeout") {
      if (!need_number(out.idle_timeout_s, 0, "a non-negative number of seconds")) return false;
    } else if (a == "--client-timeout" || a == "--max-sessions") {
      int& dst = a == "--client-timeout" ? out.client_timeout_s : out.max_sessions;
      if (!need_number(dst, 1, "a positive number")) return false;
    } else {
      *error = "unknown option '" + a + "' (see --help)";
      return false;
    }
  }
  // Relative paths mean this process's working directory: made absolute here,
  // before they travel to the daemon (which runs in /). A model name becomes
  // its file in this process's models folder (model_store.h), the folder of
  // the environment the editor started quickfill with, not the daemon's.
  if (is_model_name(out.model_path)) {
    if (std::string file = resolve_model_argument(out.model_path); !file.empty()) out.model_path = file;
  }
  for (std::string* p : {&out.model_path, &out.log_file, &out.socket_dir, &out.http_api_key_file}) {
    if (p->empty() || (p == &out.model_path && is_model_name(*p)) || (*p)[0] == '/') continue;
    std::error_code ec;
    std::filesystem::path abs = std::filesystem::absolute(*p, ec);
    if (ec) {
      *error = "cannot make " + *p + " an absolute path: " + ec.message();
      return false;
    }
    *p = abs.lexically_normal().string();
  }
  return true;
}

const char* server_usage() {
  return "usage: quickfill [--stdio] [options]          run the LSP server on stdin/stdout (default)\n"
         "       quickfill demo [--model PATH] [--chars N] [FILE]\n"
         "                                               type through a file against the real server\n"
         "       quickfill run|perplexity|bench|gguf ...  engine tools (see `quickfill <cmd> --help`)\n"
         "       quickfill settings --markdown            the settings reference (docs/configuration.md)\n"
         "       quickfill prompt FILE LINE COL           the prompt a completion there would use, part by part\n"
         "       quickfill model pull REF | list          download a GGUF model (owner/repo:file.gguf or a URL)\n"
         "       quickfill daemon [--socket-dir DIR] [--idle-timeout S] [--client-timeout S] [--max-sessions N]\n"
         "                                               the per-user daemon in the foreground (debugging);\n"
         "                                               --http HOST:PORT [--api-key-file F]: serve llama-server\n"
         "                                               clients from its engines too (quickfill serve)\n"
         "       quickfill report --from-stats FILE [--out FILE.html]\n"
         "                                               the dashboard page from quickfill/stats JSON\n"
         "       quickfill doctor [--json]                what quickfill finds here: build, CPU, GPU, model,\n"
         "                                               daemon, config, folders, the log's last problems\n"
         "       quickfill serve --http HOST:PORT [--model M] [--api-key-file F]\n"
         "                                               serve llama-server clients over HTTP (/infill)\n"
         "       quickfill eval --benchmark NAME --data DIR | --repo DIR [--model M] [--compare A B]\n"
         "                                               suggestion quality: pass@1, exact match, similarity\n"
         "\n"
         "server options:\n"
         "  --model PATH|NAME        GGUF model, or the name of a pulled one (default: the\n"
         "                           quickfill.model setting, then the\n"
         "                           bundled models/quickfill-tiny-code.gguf when present)\n"
         "  --device auto|cpu|cuda   where the model runs (default: the quickfill.device setting,\n"
         "                           which defaults to auto: CUDA when a GPU is present)\n"
         "  --threads N              inference threads (0: pick from the machine)\n"
         "  --log-file PATH          write logs to PATH instead of stderr (stdout is never used)\n"
         "  --log-level LEVEL        trace, debug, info (default), warn, error, off\n"
         "  --max-message-size N     largest accepted LSP message in bytes (default 67108864)\n"
         "  --max-open-documents N   documents tracked at once (default 1000)\n"
         "  --max-document-bytes N   bytes of text of all open documents together (default 268435456)\n"
         "  --no-background          do not run background cache work when idle\n"
         "  --no-daemon              keep the model in this process instead of sharing the per-user\n"
         "                           daemon (also QUICKFILL_NO_DAEMON=1, or daemon.enabled: false)\n"
         "  --socket-dir DIR         the daemon's directory (default $XDG_RUNTIME_DIR/quickfill,\n"
         "                           else /tmp/quickfill-UID)\n"
         "  --idle-timeout SECONDS   a daemon started from here exits this long after its last client\n"
         "  --client-timeout SECONDS (daemon) drop a client that reads nothing this long (default 60)\n"
         "  --max-sessions N         (daemon) clients served at once; more are refused (default 64)\n"
         "  --version, --help\n";
}

}  // namespace qf::server
