// `quickfill doctor`: one screen a user can read and paste into a bug report.
//
// collect_doctor() gathers checks, each a section, a name, a status (ok,
// info, warn, fail), what was found, and for a problem what to do about it:
// the build, the CPU and the kernel level the engine picks, the GPU (device,
// driver and the self-check's verdicts, device_verdicts.h), the model the
// server would load and what it contains (architecture, weights, context,
// FIM tokens), the daemon (asked with its status probe: pid, version,
// sessions, engines), the user config file and the settings it sets, the
// models and cache folders with their sizes, and the daemon log's last
// problems. Nothing is changed and no model is loaded onto a device.
#pragma once

#include <string>
#include <vector>

#include <boost/json/value.hpp>

namespace qf::cli {

struct doctor_check {
  std::string section;  // "quickfill", "cpu", "gpu", "model", "daemon", "config", "folders", "log"
  std::string name;
  std::string status;   // "ok", "info", "warn", "fail"
  std::string value;    // what was found
  std::string fix;      // what to do ("" when nothing)
};

struct doctor_options {
  std::string model;       // --model (else the user config's, else the bundled one)
  std::string socket_dir;  // --socket-dir (else the default)
  bool probe_gpu = true;   // false: do not initialize a CUDA device
};

std::vector<doctor_check> collect_doctor(const doctor_options& o);
std::string render_doctor_text(const std::vector<doctor_check>& checks);
boost::json::value render_doctor_json(const std::vector<doctor_check>& checks);

}  // namespace qf::cli
