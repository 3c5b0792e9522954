// `quickfill doctor [--json] [--model PATH] [--socket-dir DIR] [--no-gpu]`:
// what quickfill finds on this machine, one screen (doctor.h). Exits 1 when a
// check failed, so that scripts and the editors' commands can tell.
#include <cstdio>
#include <cstring>
#include <string>

#include <boost/json.hpp>

#include "server/cli/commands.h"
#include "server/cli/doctor.h"

namespace qf::cli {

namespace {

constexpr const char* usage =
    "usage: quickfill doctor [--json] [--model PATH] [--socket-dir DIR] [--no-gpu]\n"
    "  what quickfill finds on this machine, for you and for bug reports: the build, the CPU\n"
    "  and the kernels the engine picks, the GPU and its self-check, the model the server\n"
    "  would load, the daemon, the user config file, the models and cache folders, the\n"
    "  daemon log's last problems. Each problem says what to do. Exits 1 when a check failed.\n"
    "  --json        the same as one JSON object (for tools)\n"
    "  --model PATH  check this model instead of the configured one\n"
    "  --socket-dir  the daemon's folder, as given to the server\n"
    "  --no-gpu      do not initialize a CUDA device\n";

}  // namespace

int cmd_doctor(std::span<char*> args) {
  doctor_options o;
  bool as_json = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string a = args[i];
    auto value = [&]() -> const char* { return i + 1 < args.size() ? args[++i] : nullptr; };
    if (a == "--json") {
      as_json = true;
    } else if (a == "--no-gpu") {
      o.probe_gpu = false;
    } else if (a == "--model" || a == "--socket-dir") {
      const char* v = value();
      if (!v) {
        std::fprintf(stderr, "quickfill doctor: %s needs a value\n%s", a.c_str(), usage);
        return 2;
      }
      (a == "--model" ? o.model : o.socket_dir) = v;
    } else if (a == "--help" || a == "-h") {
      std::fputs(usage, stdout);
      return 0;
    } else {
      std::fprintf(stderr, "quickfill doctor: unknown argument %s\n%s", a.c_str(), usage);
      return 2;
    }
  }
  const std::vector<doctor_check> checks = collect_doctor(o);
  bool failed = false;
  for (const doctor_check& c : checks) failed = failed || c.status == "fail";
  if (as_json)
    std::printf("%s\n", boost::json::serialize(render_doctor_json(checks)).c_str());
  else
    std::fputs(render_doctor_text(checks).c_str(), stdout);
  return failed ? 1 : 0;
}

}  // namespace qf::cli
