// quickfill eval's parts in process: the sandbox (a pass needs check() to
// return; early exits, syntax errors, endless loops, proxies and the network
// are handled), the measures (exact match, edit similarity, percentiles),
// the gate calibration on scores whose answer is known, and the gate file.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <boost/json.hpp>

#include "indexing/private_file.h"
#include "server/cli/eval_calibrate.h"
#include "server/cli/eval_sandbox.h"
#include "server/cli/eval_score.h"
#include "server/completion/postprocess/gate_file.h"
#include "server/report/eval_html.h"
#include "server/cli/eval_report.h"
#include "server/core/settings.h"
#include "tests/server/cli/tool_runner.h"

namespace qf::cli {
namespace {

const char* k_test = "def check(candidate):\n    assert candidate(2, 3) == 5\n";

sandbox_limits quick_limits() {
  sandbox_limits l;
  l.cpu_seconds = 2;
  l.wall_ms = 3000;
  return l;
}

class Sandbox : public ::testing::Test {
 protected:
  void SetUp() override {
    if (find_python().empty()) GTEST_SKIP() << "no python3 on PATH";
  }
};

TEST_F(Sandbox, RightProgramPassesWrongOneFails) {
  const sandbox_result ok = run_python_check("def add(a, b):\n    return a + b\n", k_test, "add", quick_limits());
  EXPECT_TRUE(ok.passed) << ok.error;
  EXPECT_TRUE(ok.syntax_ok);
  const sandbox_result wrong = run_python_check("def add(a, b):\n    return a - b\n", k_test, "add", quick_limits());
  EXPECT_FALSE(wrong.passed);
  EXPECT_TRUE(wrong.syntax_ok);
  EXPECT_NE(wrong.error.find("AssertionError"), std::string::npos) << wrong.error;
}

TEST_F(Sandbox, SyntaxErrorIsToldApart) {
  const sandbox_result r = run_python_check("def add(a, b):\nreturn a + b\n", k_test, "add", quick_limits());
  EXPECT_FALSE(r.passed);
  EXPECT_FALSE(r.syntax_ok);
}

TEST_F(Sandbox, ExitingEarlyWithStatusZeroIsNoPass) {
  for (const char* body : {"    import os\n    os._exit(0)\n", "    import sys\n    sys.exit(0)\n",
                           "    print('quickfill-passed 0')\n    raise SystemExit(0)\n"}) {
    const sandbox_result r = run_python_check(std::string("def add(a, b):\n") + body, k_test, "add", quick_limits());
    EXPECT_FALSE(r.passed) << body;
    EXPECT_TRUE(r.syntax_ok) << body;
  }
}

TEST_F(Sandbox, EndlessLoopIsKilled) {
  const sandbox_result r = run_python_check("def add(a, b):\n    while True:\n        pass\n", k_test, "add", quick_limits());
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(r.timed_out) << r.error;
}

TEST_F(Sandbox, ChildProcessesDieWithTheTimeout) {
  // The program starts a sleeper and loops: the whole group is killed at the wall limit.
  const std::string marker = qf::test::scratch_dir("sandbox-child") + "/alive";
  const std::string prog = "import subprocess\nsubprocess.Popen(['/bin/sh', '-c', 'sleep 3; touch " + marker +
                           "'])\ndef add(a, b):\n    while True:\n        pass\n";
  sandbox_limits l = quick_limits();
  l.cpu_seconds = 60;
  l.wall_ms = 1000;
  const sandbox_result r = run_python_check(prog, k_test, "add", l);
  EXPECT_TRUE(r.timed_out);
  ::sleep(4);
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST_F(Sandbox, EnvironmentHasNoProxyAndScratchIsItsOwn) {
  ::setenv("http_proxy", "http://proxy.invalid:3128", 1);
  ::setenv("HTTPS_PROXY", "http://proxy.invalid:3128", 1);
  const std::string prog =
      "import os\n"
      "def add(a, b):\n"
      "    assert not any('proxy' in k.lower() for k in os.environ), dict(os.environ)\n"
      "    assert os.getcwd() == os.environ['HOME'] == os.environ['TMPDIR']\n"
      "    assert sorted(os.listdir('.'))[:3] == ['program.py', 'runner.py', 'stderr.txt']\n"
      "    return a + b\n";
  const sandbox_result r = run_python_check(prog, k_test, "add", quick_limits());
  ::unsetenv("http_proxy");
  ::unsetenv("HTTPS_PROXY");
  EXPECT_TRUE(r.passed) << r.error;
}

TEST_F(Sandbox, NoNetworkWhereNamespacesAreAllowed) {
  std::string sentence;
  if (!sandbox_network(&sentence)) GTEST_SKIP() << sentence;
  // A listening socket of this test on 127.0.0.1: the sandboxed program cannot reach it.
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(s, 4), 0);
  socklen_t len = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string port = std::to_string(ntohs(a.sin_port));
  const std::string reach = "import socket\ndef add(a, b):\n    socket.create_connection(('127.0.0.1', " + port +
                            "), timeout=1).close()\n    return a + b\n";
  const sandbox_result r = run_python_check(reach, k_test, "add", quick_limits());
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(r.network_isolated);
  EXPECT_NE(r.error.find("Error"), std::string::npos) << r.error;
  ::close(s);
}

TEST(EvalScore, ExactMatchAndSimilarity) {
  EXPECT_TRUE(exact_match("    return x\n", "    return x"));
  EXPECT_TRUE(exact_match("    return x  \n", "    return x\n"));
  EXPECT_FALSE(exact_match("return x\n", "    return x\n"));
  EXPECT_DOUBLE_EQ(edit_similarity("abc", "abc"), 1.0);
  EXPECT_DOUBLE_EQ(edit_similarity("abd", "abc"), 1.0 - 1.0 / 3);
  EXPECT_DOUBLE_EQ(edit_similarity("", "abcd"), 0.0);
  EXPECT_DOUBLE_EQ(edit_similarity("", ""), 1.0);
  EXPECT_DOUBLE_EQ(edit_similarity("kitten", "sitting"), 1.0 - 3.0 / 7);
  EXPECT_DOUBLE_EQ(percentile({5, 1, 4, 2, 3}, 50), 3);
  EXPECT_DOUBLE_EQ(percentile({5, 1, 4, 2, 3}, 90), 5);
  EXPECT_DOUBLE_EQ(percentile({}, 50), 0);
}

// Records with known scores: passing ones at -0.1 .. -1.0, failing ones at -0.5 and -3.
std::vector<eval_record> scored_records(std::vector<eval_task>& keep) {
  keep.resize(1);
  std::vector<eval_record> rs;
  for (int i = 1; i <= 10; ++i) {
    eval_record r;
    r.task = &keep[0];
    r.suggested = r.executed = r.passed = true;
    r.score = -0.1 * i;
    rs.push_back(r);
  }
  for (double s : {-0.5, -3.0}) {
    eval_record r;
    r.task = &keep[0];
    r.suggested = r.executed = true;
    r.score = s;
    rs.push_back(r);
  }
  eval_record expl = rs.front();
  expl.explicit_trigger = true;
  expl.score = -50;  // explicit invocations do not count
  rs.push_back(expl);
  return rs;
}

TEST(EvalCalibrate, KeepsNinetyPercentOfThePassingSuggestions) {
  std::vector<eval_task> tasks;
  const gate_calibration c = calibrate_gate(scored_records(tasks));
  ASSERT_TRUE(c.ok) << c.why;
  EXPECT_EQ(c.basis, "pass@1");
  EXPECT_EQ(c.good, 10);
  EXPECT_NEAR(c.threshold, -0.9, 1e-9);  // 9 of the 10 passing scores are >= -0.9
  EXPECT_EQ(c.good_kept, 9);
  EXPECT_EQ(c.bad, 2);
  EXPECT_EQ(c.bad_dropped, 1);  // -3 dropped, -0.5 kept
  const gate_calibration few = calibrate_gate(scored_records(tasks), 0.9, 11);
  EXPECT_FALSE(few.ok);
  EXPECT_NE(few.why.find("only 10"), std::string::npos) << few.why;
}

TEST(GateFile, WrittenReadAndResolved) {
  const std::string dir = qf::test::scratch_dir("gate-file");
  const std::string model = dir + "/m.gguf";
  qf::test::write_file(model, std::string(1000, 'x'));
  std::string why;
  EXPECT_FALSE(server::completion::read_gate_file(model, &why));
  EXPECT_TRUE(why.empty());
  std::vector<eval_task> tasks;
  const gate_calibration c = calibrate_gate(scored_records(tasks));
  std::string error;
  ASSERT_TRUE(server::completion::write_gate_file(model, gate_file_json(c, model, "test", 10), &error)) << error;
  EXPECT_EQ(std::filesystem::status(model + ".gate.json").permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const auto g = server::completion::read_gate_file(model, &why);
  ASSERT_TRUE(g) << why;
  EXPECT_NEAR(g->threshold, -0.9, 1e-9);

  server::completion::completion_settings s;
  EXPECT_EQ(server::completion::resolve_gate(s, false, g).origin, "calibrated " + model + ".gate.json");
  EXPECT_NEAR(server::completion::resolve_gate(s, false, g).threshold, -0.9, 1e-9);
  EXPECT_EQ(server::completion::resolve_gate(s, false, std::nullopt).origin, "default");
  EXPECT_DOUBLE_EQ(server::completion::resolve_gate(s, false, std::nullopt).threshold, -1.8);
  EXPECT_EQ(server::completion::resolve_gate(s, true, g).origin, "default");  // explicit: the setting's
  s.sampling_auto.min_confidence = -2.5;
  s.sampling_auto.min_confidence_given = true;
  EXPECT_EQ(server::completion::resolve_gate(s, false, g).origin, "setting");
  EXPECT_DOUBLE_EQ(server::completion::resolve_gate(s, false, g).threshold, -2.5);

  // The model file replaced by one of another size: the file is not used, and says why.
  qf::test::write_file(model, std::string(2000, 'x'));
  EXPECT_FALSE(server::completion::read_gate_file(model, &why));
  EXPECT_NE(why.find("another file"), std::string::npos) << why;
  // Malformed.
  ASSERT_TRUE(server::completion::write_gate_file(model, "{\"minConfidence\": 3}", &error));
  EXPECT_FALSE(server::completion::read_gate_file(model, &why));
  EXPECT_NE(why.find("minConfidence"), std::string::npos) << why;
}

TEST(EvalHtml, DrawsTheSummariesAndRefusesWhatIsNotAnEvalRun) {
  std::vector<eval_task> tasks;
  std::vector<eval_record> rs = scored_records(tasks);
  tasks[0].id = "t<1>";
  eval_run run;
  run.label = "A";
  run.model = "m <b>";
  run.records = rs;
  run.summaries = {summarize(rs, false, -0.9, "calibrated /x.gate.json"), summarize(rs, true, -100, "default")};
  const boost::json::object doc = runs_to_json("humaneval-single", {run}, "no network", true);
  std::string error;
  const std::string page = server::report::render_eval_html(doc, &error);
  ASSERT_FALSE(page.empty()) << error;
  EXPECT_NE(page.find("<title>quickfill eval: humaneval-single</title>"), std::string::npos);
  EXPECT_NE(page.find("m &lt;b&gt;"), std::string::npos);  // escaped
  EXPECT_NE(page.find("-0.90 (calibrated /x.gate.json)"), std::string::npos);
  // 10 of the 12 automatic records passed: pass@1 83.3 %, drawn in a bar carrying its value.
  EXPECT_NE(page.find("83.3 %"), std::string::npos);
  EXPECT_NE(page.find("id=\"eval-pass@1\""), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  boost::json::object broken = doc;
  broken.erase("runs");
  EXPECT_TRUE(server::report::render_eval_html(broken, &error).empty());
  EXPECT_NE(error.find("eval.runs"), std::string::npos) << error;
}

TEST(GateFile, TheSettingsSayWhenTheUserSetTheGate) {
  namespace json = boost::json;
  const auto given = [](const char* payload) {
    const server::parsed_settings p = server::parse_settings(json::parse(payload));
    return std::pair(p.values.completion.sampling_auto.min_confidence_given,
                     p.values.completion.sampling_explicit.min_confidence_given);
  };
  EXPECT_EQ(given("{\"quickfill\": {}}"), std::pair(false, false));
  EXPECT_EQ(given("{\"quickfill\": {\"completion\": {\"maxTokens\": 8}}}"), std::pair(false, false));
  EXPECT_EQ(given("{\"quickfill\": {\"completion\": {\"minConfidence\": -1.8}}}"), std::pair(true, false));
  EXPECT_EQ(given("{\"quickfill\": {\"completion.minConfidenceExplicit\": -2}}"), std::pair(false, true));
  // A value that is not accepted takes the default and is not a choice of the user's.
  EXPECT_EQ(given("{\"quickfill\": {\"completion\": {\"minConfidence\": 5}}}"), std::pair(false, false));
  // The user config file's value counts as given too.
  std::vector<std::string> refused;
  const server::parsed_settings layered = server::parse_layered_settings(
      json::parse("{\"quickfill\": {\"completion\": {\"minConfidence\": -2}}}"), json::value(nullptr), &refused);
  EXPECT_TRUE(layered.values.completion.sampling_auto.min_confidence_given);
}

}  // namespace
}  // namespace qf::cli
