// `quickfill doctor` on the real binary, in a home of its own (HOME and the
// XDG folders point into a scratch folder): a clean machine passes; a user
// config file others can write, a file that is no model and a failed GPU
// self-check each show as a problem with what to do, and the exit code says
// so; a running daemon (started by the test) is found and described through
// its status probe.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include <boost/json.hpp>

#include "tests/server/cli/tool_runner.h"
#include "tests/server_process.h"

namespace qf::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

struct doctor_home {
  std::string root = scratch_dir("doctor");
  doctor_home() {
    ::setenv("HOME", root.c_str(), 1);
    ::setenv("XDG_CONFIG_HOME", (root + "/config").c_str(), 1);
    ::setenv("XDG_CACHE_HOME", (root + "/cache").c_str(), 1);
    ::setenv("XDG_DATA_HOME", (root + "/data").c_str(), 1);
    ::setenv("QUICKFILL_SOCKET_DIR", (root + "/run").c_str(), 1);
    ::unsetenv("QUICKFILL_MODELS_DIR");
  }
};

struct report {
  int exit_code = -1;
  json::object root;
  // The checks of `section` (and `name`, when given).
  std::vector<json::object> checks(const std::string& section, const std::string& name = "") const {
    std::vector<json::object> out;
    for (const auto& c : root.at("checks").as_array()) {
      const auto& o = c.as_object();
      if (o.at("section").as_string() == section && (name.empty() || o.at("name").as_string() == name))
        out.push_back(o);
    }
    return out;
  }
  bool any(const std::string& section, const std::string& status, const std::string& value_part) const {
    for (const auto& o : checks(section))
      if (o.at("status").as_string() == status &&
          std::string(o.at("value").as_string()).find(value_part) != std::string::npos)
        return true;
    return false;
  }
};

report doctor(std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"doctor", "--json", "--no-gpu"};
  args.insert(args.end(), extra.begin(), extra.end());
  run_result r = run_quickfill(args);
  report rep;
  rep.exit_code = r.exit_code;
  boost::system::error_code ec;
  json::value v = json::parse(r.out, ec);
  EXPECT_FALSE(ec) << "not JSON: " << r.out << r.err;
  if (!ec && v.is_object()) rep.root = v.as_object();
  return rep;
}

}  // namespace

TEST(doctor, a_clean_home_passes_and_names_what_it_found) {
  doctor_home home;
  report r = doctor();
  ASSERT_FALSE(r.root.empty());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.root.at("ok").as_bool());
  for (const char* s : {"quickfill", "cpu", "gpu", "config", "model", "daemon", "folders"})
    EXPECT_FALSE(r.checks(s).empty()) << s;
  ASSERT_EQ(r.checks("cpu", "kernel level").size(), 1u);
  const std::string level(r.checks("cpu", "kernel level")[0].at("value").as_string());
  EXPECT_TRUE(level == "scalar" || level == "avx2" || level == "avx512") << level;
  // The bundled model, read: its architecture and FIM tokens.
  EXPECT_TRUE(r.any("model", "ok", "quickfill-tiny-code.gguf"));
  EXPECT_TRUE(r.any("model", "ok", "architecture llama"));
  EXPECT_EQ(r.checks("model", "FIM tokens").size(), 1u);
  EXPECT_TRUE(r.any("config", "info", "config.json (absent"));
  EXPECT_TRUE(r.any("daemon", "info", "not made yet"));

  // The same as text, for people.
  run_result text = run_quickfill({"doctor", "--no-gpu"});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("kernel level"), std::string::npos);
  EXPECT_NE(text.out.find("0 problem(s)"), std::string::npos) << text.out;
}

TEST(doctor, problems_say_what_to_do_and_set_the_exit_code) {
  doctor_home home;
  // A user config file others may write: refused.
  fs::create_directories(home.root + "/config/quickfill");
  const std::string cfg = home.root + "/config/quickfill/config.json";
  write_file(cfg, R"({"quickfill": {"completion": {"maxTokens": 16}}})");
  ::chmod(cfg.c_str(), 0666);
  // A file that is no model.
  const std::string bogus = home.root + "/not-a-model.gguf";
  write_file(bogus, "this is not a GGUF file");
  // A GPU self-check that failed (as the server records it).
  fs::create_directories(home.root + "/cache/quickfill");
  const std::string verdicts = home.root + "/cache/quickfill/device-checks.json";
  write_file(verdicts,
             R"J({"k": {"passed": false, "failure": "its logits differ from the CPU's", "worstNmse": 0.5,
                "device": "cuda (Some GPU, driver 13.0)", "model": "/m.gguf", "checkedAt": "2026-12-07T10:00:00Z"}})J");
  ::chmod(verdicts.c_str(), 0600);

  report r = doctor({"--model", bogus});
  ASSERT_FALSE(r.root.empty());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(r.root.at("ok").as_bool());
  auto fix_of = [](const std::vector<json::object>& cs, const std::string& status) {
    for (const auto& c : cs)
      if (c.at("status").as_string() == status && c.contains("fix")) return std::string(c.at("fix").as_string());
    return std::string();
  };
  EXPECT_NE(fix_of(r.checks("config", "user config"), "fail").find("chmod 600"), std::string::npos);
  EXPECT_TRUE(r.any("model", "fail", "cannot read the file"));
  EXPECT_FALSE(fix_of(r.checks("model"), "fail").empty());
  EXPECT_TRUE(r.any("gpu", "fail", "its logits differ from the CPU's"));
  EXPECT_NE(fix_of(r.checks("gpu", "self-check"), "fail").find("CPU"), std::string::npos);

  // Fixed: the config is used and its keys are named.
  ::chmod(cfg.c_str(), 0600);
  fs::remove(verdicts);
  report fixed = doctor();
  EXPECT_EQ(fixed.exit_code, 0);
  EXPECT_TRUE(fixed.any("config", "ok", "sets: completion"));
}

TEST(doctor, a_running_daemon_is_found_through_its_status_probe) {
  doctor_home home;
  const std::string dir = home.root + "/run";
  pid_t d = spawn_child({QUICKFILL_BIN, "daemon", "--socket-dir", dir, "--idle-timeout", "60"}, home.root + "/d.log");
  ASSERT_GT(d, 0);
  for (int i = 0; i < 200 && !fs::exists(dir + "/daemon.sock"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  report r = doctor({"--socket-dir", dir});
  stop_child(d, SIGTERM);
  ASSERT_FALSE(r.root.empty());
  EXPECT_TRUE(r.any("daemon", "ok", dir));
  ASSERT_EQ(r.checks("daemon", "running").size(), 1u);
  const json::object running = r.checks("daemon", "running")[0];
  EXPECT_EQ(running.at("status").as_string(), "ok") << running.at("value").as_string();
  EXPECT_NE(std::string(running.at("value").as_string()).find("0 session(s), 0 engine(s)"), std::string::npos)
      << running.at("value").as_string();
  // The probe started no session: the daemon's log says none began.
  const std::string log = read_file(dir + "/daemon.log") + read_file(home.root + "/d.log");
  EXPECT_NE(log.find("daemon"), std::string::npos) << "the daemon logged nothing";
  EXPECT_EQ(log.find("session 1"), std::string::npos) << log;
}

}  // namespace qf::test
