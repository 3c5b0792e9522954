// The checks of `quickfill doctor` and their two renderings (see the header).
#include "server/cli/doctor.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <boost/json.hpp>

#include "indexing/definition_cache.h"
#include "inference/backend/backend.h"
#include "inference/backend/backend_select.h"
#include "inference/backend/cpu/ops.h"
#include "inference/gguf/gguf.h"
#include "inference/tokenizer/tokenizer.h"
#include "server/completion/decode/device_verdicts.h"
#include "server/completion/decode/engine_backend.h"
#include "server/completion/prompt/fim_format.h"
#include "server/daemon/socket_dir.h"
#include "server/daemon/status_probe.h"
#include "server/core/model_locator.h"
#include "server/core/model_store.h"
#include "server/core/settings.h"
#include "server/core/user_config.h"

namespace qf::cli {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

std::string human_bytes(std::uint64_t b) {
  char buf[32];
  if (b >= (1ull << 30)) std::snprintf(buf, sizeof buf, "%.1f GiB", double(b) / double(1ull << 30));
  else if (b >= (1ull << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", double(b) / double(1ull << 20));
  else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", double(b) / 1024.0);
  else std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  return buf;
}

// Files and bytes under `dir` (symbolic links not followed).
std::pair<std::size_t, std::uint64_t> folder_size(const std::string& dir) {
  std::size_t files = 0;
  std::uint64_t bytes = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2) && !it->is_symlink(e2)) {
      ++files;
      bytes += it->file_size(e2);
    }
  }
  return {files, bytes};
}

std::string cpu_model_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      const auto c = line.find(':');
      return c == std::string::npos ? line : line.substr(c + 2);
    }
  return "unknown";
}

struct collector {
  std::vector<doctor_check> out;
  void add(const char* section, std::string name, std::string status, std::string value, std::string fix = {}) {
    out.push_back({section, std::move(name), std::move(status), std::move(value), std::move(fix)});
  }
};

void check_build(collector& c) {
  std::string build = std::string("quickfill ") + QUICKFILL_VERSION;
#if defined(NDEBUG)
  build += ", release build";
#else
  build += ", debug build";
#endif
#if defined(QUICKFILL_HAVE_CUDA)
  build += ", CUDA built in";
#else
  build += ", without CUDA (nvcc was not found when it was built)";
#endif
  build += ", " __VERSION__;
  c.add("quickfill", "build", "info", build);
  c.add("quickfill", "executable", "info", server::executable_dir() + "/quickfill");
}

void check_cpu(collector& c) {
  const infer::cpu::cpu_features& f = infer::cpu::detect_cpu();
  std::string feats;
  auto add = [&](bool on, const char* n) {
    if (on) feats.append(feats.empty() ? "" : " ").append(n);
  };
  add(f.avx2, "avx2");
  add(f.fma, "fma");
  add(f.f16c, "f16c");
  add(f.avx512f, "avx512f");
  add(f.avx512bw, "avx512bw");
  add(f.avx512vl, "avx512vl");
  add(f.avx512vnni, "avx512vnni");
  c.add("cpu", "processor", "info",
        cpu_model_name() + ", " + std::to_string(std::thread::hardware_concurrency()) + " hardware threads");
  c.add("cpu", "features", "info", feats.empty() ? "none of AVX2/AVX-512" : feats);
  const std::string level(infer::cpu::kernel_level());
  c.add("cpu", "kernel level", level == "scalar" ? "warn" : "ok", level,
        level == "scalar" ? "this CPU has no AVX2: the engine runs its scalar kernels, several times slower" : "");
}

void check_gpu(collector& c, bool probe) {
#if defined(QUICKFILL_HAVE_CUDA)
  if (!probe) {
    c.add("gpu", "device", "info", "not probed (--no-gpu)");
  } else {
    try {
      std::unique_ptr<infer::backend> be = infer::select_backend("cuda", 1, nullptr);
      c.add("gpu", "device", "ok", be->describe());
    } catch (const std::exception& e) {
      c.add("gpu", "device", "info", std::string("none usable: ") + e.what(),
            "completions run on the CPU; for a GPU, install the NVIDIA driver (nvidia-smi must work)");
    }
  }
#else
  (void)probe;
  c.add("gpu", "device", "info", "this build has no CUDA backend",
        "to use an NVIDIA GPU, install the CUDA toolkit (nvcc) and build again (scripts/setup.sh)");
#endif
  const std::string file = server::completion::default_device_verdicts_file();
  const auto verdicts = server::completion::all_device_verdicts(file);
  if (verdicts.empty()) c.add("gpu", "self-check", "info", "no model has been loaded on a GPU yet");
  for (const auto& [key, v] : verdicts) {
    const std::string what = v.model + " on " + v.device + " (" + v.checked_at + ")";
    if (v.passed)
      c.add("gpu", "self-check", "ok", "passed: " + what);
    else
      c.add("gpu", "self-check", "fail", "FAILED: " + what + ": " + v.failure,
            "completions of this model run on the CPU; report it with this screen. To check again after a driver "
            "update, delete " + file);
  }
}

void check_model(collector& c, const doctor_options& o, const std::string& setting_model) {
  const server::model_choice choice = server::choose_model(o.model, setting_model);
  if (!choice.error.empty()) c.add("model", "setting", "fail", choice.error, "give a model name or an absolute path");
  if (choice.path.empty()) {
    std::string searched;
    for (const auto& p : choice.searched) searched += " " + p;
    c.add("model", "file", "fail", "no model found (looked in" + searched + ")",
          "pull one (`quickfill model pull owner/repo:file.gguf`) or pass --model PATH; docs/models.md");
    return;
  }
  std::error_code ec;
  const auto size = fs::file_size(choice.path, ec);
  if (ec) {
    c.add("model", "file", "fail", choice.path + " (from " + choice.source + "): " + ec.message(),
          "check the path, or pull the model again");
    return;
  }
  c.add("model", "file", "ok", choice.path + " (from " + choice.source + ", " + human_bytes(size) + ")");
  try {
    auto f = infer::gguf::file::open(choice.path, infer::gguf::data_storage::mapped);
    const std::string arch = f->get_string("general.architecture").value_or("?");
    std::string desc = "architecture " + arch;
    if (auto n = f->get_string("general.name")) desc = *n + ", " + desc;
    c.add("model", "metadata", "ok", desc);
    std::map<std::string, std::uint64_t> by_type;
    for (const auto& t : f->tensors())
      if (t.ne.size() >= 2) by_type[std::string(infer::traits(t.type).name)] += t.n_bytes;
    std::string types;
    std::vector<std::pair<std::uint64_t, std::string>> sorted;
    for (const auto& [n, b] : by_type) sorted.emplace_back(b, n);
    std::sort(sorted.rbegin(), sorted.rend());
    for (const auto& [b, n] : sorted) types += (types.empty() ? "" : ", ") + n + " " + human_bytes(b);
    c.add("model", "weights", "info", types.empty() ? "no matrices" : types);
    if (auto ctx = f->get_int(arch + ".context_length"))
      c.add("model", "context", "info", std::to_string(*ctx) + " tokens (trained)");
    auto tok = infer::tokenizer::from_gguf(*f);
    auto vocab = server::completion::make_engine_vocab(*tok);
    const server::completion::fim_format fim = server::completion::detect_fim_format(*vocab);
    if (fim.has_fim)
      c.add("model", "FIM tokens", "ok",
            "found (" + fim.family + " format" + (fim.repo_level() ? ", repo-level context" : "") + ")");
    else
      c.add("model", "FIM tokens", "warn", "not found: completions see only the text before the cursor",
            "use a code model trained for fill-in-the-middle (docs/models.md lists some)");
  } catch (const std::exception& e) {
    c.add("model", "metadata", "fail", std::string("cannot read the file: ") + e.what(),
          "the file is damaged or not a GGUF model: pull it again");
  }
}

void check_daemon(collector& c, const doctor_options& o) {
  const std::string dir = server::daemon::default_socket_dir(o.socket_dir);
  const std::string socket = dir + "/daemon.sock";
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    c.add("daemon", "socket folder", "info", dir + " (not made yet: no editor has started the daemon)");
    return;
  }
  const bool private_dir = S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() && (st.st_mode & 077) == 0;
  c.add("daemon", "socket folder", private_dir ? "ok" : "fail", dir,
        private_dir ? "" : "it must be a folder of yours closed to others: chmod 700 " + dir + " (or remove it)");
  std::string err;
  if (auto s = server::daemon::probe_daemon(socket, 2000, &err)) {
    const bool same = s->version == QUICKFILL_VERSION;
    c.add("daemon", "running", same ? "ok" : "warn",
          "pid " + std::to_string(s->pid) + ", version " + s->version + ", " + std::to_string(s->sessions) +
              " session(s), " + std::to_string(s->engines) + " engine(s), " + s->socket,
          same ? "" : "another version: it drains and a new one starts with the next editor");
  } else if (err.find("not a quickfill hello") != std::string::npos) {
    c.add("daemon", "running", "warn", "yes, an older version without a status probe, at " + socket,
          "it drains when an editor of this version connects; or stop it: kill $(cat " + dir + "/daemon.pid)");
  } else {
    c.add("daemon", "running", "info", "no (" + err + "); the first editor window starts it");
  }
  // The daemon log's last problems.
  const std::string log = dir + "/daemon.log";
  std::ifstream f(log, std::ios::binary);
  if (!f) return;
  f.seekg(0, std::ios::end);
  const std::streamoff n = f.tellg();
  f.seekg(std::max<std::streamoff>(0, n - (256 << 10)));
  std::vector<std::string> problems;
  std::string line;
  while (std::getline(f, line))
    if (line.find("[error]") != std::string::npos || line.find("[warning]") != std::string::npos ||
        line.find("[critical]") != std::string::npos)
      problems.push_back(line.size() > 300 ? line.substr(0, 300) + "..." : line);
  if (problems.empty()) {
    c.add("log", "daemon log", "ok", log + ": no warnings or errors in its last 256 KiB");
    return;
  }
  const size_t first = problems.size() > 5 ? problems.size() - 5 : 0;
  // Past problems are reported, not failed: the checks above say what holds now.
  for (size_t i = first; i < problems.size(); ++i) c.add("log", "daemon log", "warn", problems[i]);
}

// The user config file; returns the model it names ("" when none).
std::string check_config(collector& c) {
  const std::string path = server::default_user_config_path();
  if (path.empty()) {
    c.add("config", "user config", "warn", "neither XDG_CONFIG_HOME nor HOME is set: no user config file");
    return {};
  }
  const server::user_config uc = server::read_user_config(path);
  if (!uc.refused.empty()) {
    c.add("config", "user config", "fail", path + " is not used: " + uc.refused,
          "it must be a regular file of yours that only you can write: chmod 600 " + path);
    return {};
  }
  if (uc.payload.is_null()) {
    c.add("config", "user config", "info",
          path + " (absent: the defaults, and what the editor sends; privileged settings -- sources, audit -- "
                 "are only read from this file, docs/security.md)");
    return {};
  }
  std::vector<std::string> refused;
  const server::parsed_settings ps = server::parse_layered_settings(uc.payload, json::value(), &refused);
  std::string keys;
  const json::value& root = uc.payload.is_object() && uc.payload.as_object().contains("quickfill")
                                ? uc.payload.as_object().at("quickfill")
                                : uc.payload;
  if (root.is_object())
    for (const auto& [k, v] : root.as_object()) keys += (keys.empty() ? "" : ", ") + std::string(k);
  c.add("config", "user config", ps.problems.empty() ? "ok" : "warn",
        path + (keys.empty() ? " (empty)" : " sets: " + keys));
  for (const auto& p : ps.problems)
    c.add("config", "user config", p.level == server::settings_problem::severity::error ? "fail" : "warn", p.message,
          "edit " + path + "; docs/configuration.md lists every key");
  c.add("config", "editor settings", "info",
        "come with each editor window (initializationOptions, didChangeConfiguration) and may only choose among "
        "what this file allows; `quickfill/status` in the editor shows the effective values");
  return ps.values.server.model;
}

void check_folders(collector& c) {
  const std::string models = server::models_dir();
  if (models.empty()) {
    c.add("folders", "models", "warn", "no models folder (set XDG_DATA_HOME or HOME)");
  } else if (!fs::exists(models)) {
    c.add("folders", "models", "info", models + " (empty: no model pulled yet)");
  } else {
    const auto [files, bytes] = folder_size(models);
    std::string names;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(models, ec))
      if (e.path().extension() == ".gguf") names += (names.empty() ? ": " : ", ") + e.path().filename().string();
    c.add("folders", "models", "ok", models + ", " + std::to_string(files) + " file(s), " + human_bytes(bytes) + names);
  }
  const std::string cache = index::default_cache_dir();
  if (cache.empty()) {
    c.add("folders", "cache", "warn", "no cache folder (set XDG_CACHE_HOME or HOME): the workspace index is not kept");
  } else if (!fs::exists(cache)) {
    c.add("folders", "cache", "info", cache + " (empty)");
  } else {
    const auto [files, bytes] = folder_size(cache);
    c.add("folders", "cache", "ok", cache + ", " + std::to_string(files) + " file(s), " + human_bytes(bytes),
          "");
  }
}

}  // namespace

std::vector<doctor_check> collect_doctor(const doctor_options& o) {
  collector c;
  check_build(c);
  check_cpu(c);
  check_gpu(c, o.probe_gpu);
  const std::string setting_model = check_config(c);
  check_model(c, o, setting_model);
  check_daemon(c, o);
  check_folders(c);
  return c.out;
}

std::string render_doctor_text(const std::vector<doctor_check>& checks) {
  std::string out = "quickfill doctor\n";
  std::string section;
  size_t fails = 0, warns = 0;
  for (const doctor_check& k : checks) {
    if (k.section != section) {
      section = k.section;
      out += "\n" + section + "\n";
    }
    std::string tag = k.status == "fail" ? "FAIL" : k.status == "warn" ? "warn" : k.status == "ok" ? "ok" : "--";
    fails += k.status == "fail";
    warns += k.status == "warn";
    char head[64];
    std::snprintf(head, sizeof head, "  %-5s %-16s ", tag.c_str(), k.name.c_str());
    out += head + k.value + "\n";
    if (!k.fix.empty()) out += std::string(25, ' ') + "-> " + k.fix + "\n";
  }
  out.append("\n").append(std::to_string(fails)).append(" problem(s), ");
  out.append(std::to_string(warns)).append(" warning(s)\n");
  return out;
}

json::value render_doctor_json(const std::vector<doctor_check>& checks) {
  json::array a;
  bool ok = true;
  for (const doctor_check& k : checks) {
    ok = ok && k.status != "fail";
    json::object o{{"section", k.section}, {"name", k.name}, {"status", k.status}, {"value", k.value}};
    if (!k.fix.empty()) o["fix"] = k.fix;
    a.push_back(std::move(o));
  }
  return json::object{{"ok", ok}, {"version", QUICKFILL_VERSION}, {"checks", std::move(a)}};
}

}  // namespace qf::cli
