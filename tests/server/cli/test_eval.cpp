// `quickfill eval` through the real binary: the bundled model on a handful
// of HumanEval-infilling tasks (its scores are what they are: a smoke
// model; the figures must add up), a synthetic model whose answer is known
// (it ends every suggestion at once: nothing suggested, nothing exact), the
// trim oracle, the calibrated gate file as eval and `quickfill prompt` see
// it, FIM points of a repository, --compare and the HTML page, and bad
// input. Skipped without the shared data.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include <boost/json.hpp>

#include "tests/server/cli/file_sep_model.h"
#include "tests/server/cli/served_model.h"
#include "tests/server/cli/tool_runner.h"

namespace qf::test {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;

class EvalCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string d = test_data_dir();
    data_ = d.empty() ? "" : d + "/humaneval-infilling";
    if (data_.empty() || !fs::exists(data_ + "/HumanEval-SingleLineInfilling.jsonl.gz"))
      GTEST_SKIP() << "HumanEval-infilling not found in the shared data (QUICKFILL_TEST_DATA)";
  }
  run_result eval(std::vector<std::string> args) {
    std::vector<std::string> a = {"eval", "--data", data_, "--device", "cpu", "--threads", "1"};
    a.insert(a.end(), args.begin(), args.end());
    return run_quickfill(a);
  }
  static const json::object& summary(const json::value& doc, size_t run, const char* trigger) {
    for (const json::value& s : doc.at("runs").at(run).at("summaries").as_array())
      if (s.at("trigger").as_string() == trigger) return s.as_object();
    throw std::runtime_error("no summary");
  }
  std::string data_;
};

TEST_F(EvalCommand, BundledModelFiguresAddUp) {
  const run_result r = eval({"--benchmark", "humaneval-single", "--limit", "4", "--json", "--records"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json::value doc = json::parse(r.out);
  EXPECT_EQ(doc.at("benchmark").as_string(), "humaneval-single");
  const json::array& recs = doc.at("runs").at(0).at("records").as_array();
  ASSERT_EQ(recs.size(), 8u);  // 4 tasks x 2 trigger kinds
  for (const char* trig : {"automatic", "explicit"}) {
    const json::object& s = summary(doc, 0, trig);
    EXPECT_EQ(s.at("tasks").as_int64(), 4);
    EXPECT_EQ(s.at("executed").as_int64(), 4);
    int64_t passed = 0, exact = 0, shown = 0;
    for (const json::value& v : recs) {
      const json::object& rec = v.as_object();
      if (rec.at("trigger").as_string() != trig) continue;
      EXPECT_TRUE(rec.at("id").as_string().starts_with("SingleLineInfilling/HumanEval/0/"));
      passed += rec.at("passed").as_bool();
      exact += rec.at("exact").as_bool();
      shown += rec.at("shown").as_bool();
      const double sim = rec.at("similarity").as_double();
      EXPECT_GE(sim, 0.0);
      EXPECT_LE(sim, 1.0);
      // A suggestion is shown only when its score reaches the gate.
      if (rec.at("shown").as_bool() && rec.at("score").is_double()) {
        EXPECT_GE(rec.at("score").as_double(), s.at("gate").at("threshold").as_double());
      }
    }
    EXPECT_EQ(s.at("passed").as_int64(), passed);
    EXPECT_EQ(s.at("exact").as_int64(), exact);
    EXPECT_EQ(s.at("shown").as_int64(), shown);
    EXPECT_GT(s.at("promptTokens").as_double(), 10);
    EXPECT_EQ(s.at("gate").at("origin").as_string(), "default");
  }
  EXPECT_DOUBLE_EQ(summary(doc, 0, "automatic").at("gate").at("threshold").as_double(), -1.8);
}

TEST_F(EvalCommand, ASyntheticModelThatEndsAtOnceSuggestsNothing) {
  const std::string dir = scratch_dir("eval-synth");
  const std::string model = dir + "/ends.gguf";
  write_file_sep_model(model);
  const run_result r = eval({"--benchmark", "humaneval-single", "--limit", "4", "--json", "--model", model});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json::value doc = json::parse(r.out);
  for (const char* trig : {"automatic", "explicit"}) {
    const json::object& s = summary(doc, 0, trig);
    EXPECT_EQ(s.at("suggested").as_int64(), 0) << trig;
    EXPECT_EQ(s.at("shown").as_int64(), 0);
    EXPECT_EQ(s.at("exact").as_int64(), 0);
    EXPECT_DOUBLE_EQ(s.at("editSimilarity").as_double(), 0.0);
    // The first four holes of HumanEval/0 left empty: each program fails (a name or an indented block is missing).
    EXPECT_EQ(s.at("passed").as_int64(), 0);
  }
}

TEST_F(EvalCommand, OracleScoresTheTrimRules) {
  const run_result r = eval({"--benchmark", "humaneval-single", "--limit", "200", "--oracle", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json::value doc = json::parse(r.out);
  const json::array& rows = doc.at("oracle").as_array();
  ASSERT_EQ(rows.size(), 2u);
  for (const json::value& row : rows) {
    EXPECT_EQ(row.at("tasks").as_int64(), 200);
    EXPECT_GT(row.at("sameLinesShare").as_double(), 0.9);  // 98 % over all 1,033 tasks (docs/benchmarks.md)
    EXPECT_LE(row.at("exactShare").as_double(), row.at("sameLinesShare").as_double());
  }
  const run_result text = eval({"--benchmark", "humaneval-span", "--limit", "20", "--oracle", "--trigger", "explicit"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("trim rules against the truth, humaneval-span, explicit trigger: "), std::string::npos)
      << text.out;
}

TEST_F(EvalCommand, CalibratedGateFileIsUsedUnlessTheSettingIsGiven) {
  const std::string dir = scratch_dir("eval-gate");
  const std::string model = dir + "/tiny.gguf";
  fs::copy_file(source_dir() + "/models/quickfill-tiny-code.gguf", model);
  // The bundled model passes none of these tasks: nothing to calibrate on, and it says so.
  const run_result cal = eval({"--benchmark", "humaneval-single", "--limit", "2", "--model", model, "--calibrate"});
  EXPECT_EQ(cal.exit_code, 1);
  EXPECT_NE(cal.err.find("not calibrated: only 0 automatic suggestion(s) were good"), std::string::npos) << cal.err;
  EXPECT_FALSE(fs::exists(model + ".gate.json"));

  write_file(model + ".gate.json", "{\"minConfidence\": -0.25, \"modelBytes\": " +
                                       std::to_string(fs::file_size(model)) + "}");
  fs::permissions(model + ".gate.json", fs::perms::owner_read | fs::perms::owner_write);
  const run_result e = eval({"--benchmark", "humaneval-single", "--limit", "2", "--model", model, "--json"});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  const json::value edoc = json::parse(e.out);
  const json::object& g = summary(edoc, 0, "automatic").at("gate").as_object();
  EXPECT_DOUBLE_EQ(g.at("threshold").as_double(), -0.25);
  EXPECT_EQ(g.at("origin").as_string(), "calibrated " + model + ".gate.json");

  const run_result set = eval({"--benchmark", "humaneval-single", "--limit", "2", "--model", model, "--json",
                               "--settings", "{\"completion\": {\"minConfidence\": -3}}"});
  ASSERT_EQ(set.exit_code, 0) << set.err;
  const json::value sdoc = json::parse(set.out);
  const json::object& gs = summary(sdoc, 0, "automatic").at("gate").as_object();
  EXPECT_DOUBLE_EQ(gs.at("threshold").as_double(), -3);
  EXPECT_EQ(gs.at("origin").as_string(), "setting");

  // The pipeline itself, as the server loads it: explain names the gate and its file.
  const std::string src = dir + "/a.py";
  write_file(src, "def f(x):\n    return x\n");
  const run_result p = run_quickfill({"prompt", src, "1", "4", "--model", model, "--json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const json::value pdoc = json::parse(p.out);
  const json::object& pg = pdoc.at("gate").as_object();
  EXPECT_DOUBLE_EQ(pg.at("automatic").at("threshold").as_double(), -0.25);
  EXPECT_EQ(pg.at("automatic").at("origin").as_string(), "calibrated " + model + ".gate.json");
  EXPECT_EQ(pg.at("explicit").at("origin").as_string(), "default");
}

TEST_F(EvalCommand, RepositoryPointsAndCompareAndHtml) {
  const std::string repo = scratch_dir("eval-repo");
  fs::create_directories(repo + "/pkg");
  fs::create_directories(repo + "/node_modules/x");
  write_file(repo + "/pkg/geometry.py",
             "import math\n\n\ndef area(w, h):\n    \"\"\"The area of a rectangle.\"\"\"\n    if w < 0 or h < 0:\n"
             "        raise ValueError('negative side')\n    return w * h\n\n\ndef circle(r):\n    result = math.pi * r * r\n"
             "    return round(result, 3)\n");
  write_file(repo + "/pkg/main.py", "from pkg.geometry import area, circle\n\n\ndef report(items):\n"
                                    "    total = 0\n    for w, h in items:\n        total += area(w, h)\n"
                                    "    print('total', total)\n    return total\n");
  fs::create_directories(repo + "/web");
  write_file(repo + "/web/app.js", "function total(items) {\n  let sum = 0;\n  for (const x of items) {\n    sum += x.price;\n"
                                   "  }\n  return sum;\n}\n\nfunction label(item) {\n  const name = item.name.trim();\n"
                                   "  return name + ' (' + item.price + ')';\n}\n");
  write_file(repo + "/.env", "API_KEY=secret-value-1234567890\nOTHER_KEY=another-secret-value\n");
  write_file(repo + "/node_modules/x/index.js", "function hidden(a, b) {\n  return a + b + 1234567;\n}\n");
  const std::string page = repo + "/../eval.html";
  const run_result r = run_quickfill({"eval", "--repo", repo, "--points", "6", "--json", "--records", "--device", "cpu",
                                      "--threads", "1", "--html", page, "--compare",
                                      "{\"completion\": {\"maxTokens\": 2}}", "{}"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json::value doc = json::parse(r.out);
  ASSERT_EQ(doc.at("runs").as_array().size(), 2u);
  EXPECT_EQ(doc.at("runs").at(0).at("label").as_string(), "A");
  EXPECT_EQ(doc.at("runs").at(1).at("settings").as_string(), "{}");
  std::set<std::string> kinds;
  for (const json::value& v : doc.at("runs").at(0).at("records").as_array()) {
    const std::string id(v.at("id").as_string());
    EXPECT_TRUE(id.starts_with("repo:pkg/") || id.starts_with("repo:web/")) << id;  // never .env, never node_modules
    kinds.insert(std::string(v.at("kind").as_string()));
    EXPECT_FALSE(v.as_object().contains("passed"));  // no test to run
    if (v.at("trigger").as_string() == "automatic") {
      EXPECT_LE(v.at("generatedTokens").as_int64(), 2);
    }
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"line", "span", "body"}));
  EXPECT_EQ(summary(doc, 0, "automatic").at("tasks").as_int64(), 6);
  // Two languages: a summary for each besides the whole, and they add up.
  int64_t per_language = 0;
  std::set<std::string> languages;
  for (const json::value& v : doc.at("runs").at(0).at("summaries").as_array())
    if (v.at("trigger").as_string() == "automatic" && v.at("language").is_string()) {
      languages.insert(std::string(v.at("language").as_string()));
      per_language += v.at("tasks").as_int64();
    }
  EXPECT_EQ(per_language, 6);
  EXPECT_LE(languages.size(), 2u);
  for (const std::string& l : languages) EXPECT_TRUE(l == "python" || l == "javascript") << l;
  EXPECT_TRUE(summary(doc, 0, "automatic").at("pass@1").is_null());
  const std::string html = read_file(page);
  EXPECT_NE(html.find("<title>quickfill eval: repo "), std::string::npos);
  EXPECT_NE(html.find("id=\"eval-exactMatch\""), std::string::npos);
  EXPECT_NE(html.find("<th>A automatic</th>"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST_F(EvalCommand, BadInputGetsAClearError) {
  run_result r = eval({"--benchmark", "humaneval-triple"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown benchmark 'humaneval-triple'"), std::string::npos) << r.err;
  r = run_quickfill({"eval", "--benchmark", "humaneval-single", "--data", "/nonexistent"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no such file: /nonexistent/HumanEval-SingleLineInfilling.jsonl.gz"), std::string::npos) << r.err;
  r = run_quickfill({"eval", "--repo", "/nonexistent"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent is not a directory"), std::string::npos) << r.err;
  r = run_quickfill({"eval"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("give either --benchmark NAME --data DIR or --repo DIR"), std::string::npos) << r.err;
  r = eval({"--benchmark", "humaneval-single", "--limit", "1", "--settings", "[1]"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--settings must be a JSON object"), std::string::npos) << r.err;
}

// The served model over LSP: a calibrated gate file next to the model gates its
// automatic suggestions (here one above every score: nothing is shown, and the
// stats count it), explainCompletion names it, and a minConfidence the user
// sets wins over it. No shared data needed.
TEST(CalibratedGateServed, TheServerGatesWithTheModelsFileUnlessTheSettingIsGiven) {
  const std::string bundled = source_dir() + "/models/quickfill-tiny-code.gguf";
  if (!fs::exists(bundled)) GTEST_SKIP() << "bundled model absent: " << bundled;
  const std::string dir = scratch_dir("gate-served");
  const std::string model = dir + "/tiny.gguf";
  fs::copy_file(bundled, model);
  write_file(model + ".gate.json", "{\"minConfidence\": -0.00001, \"modelBytes\": " +
                                       std::to_string(fs::file_size(model)) + "}");
  fs::permissions(model + ".gate.json", fs::perms::owner_read | fs::perms::owner_write);
  const std::string uri = "file:///work/a.py", text = "import os\n\n\ndef list_python_files(root):\n    ";
  auto automatic = [&](served_model& s) {
    s.notify("textDocument/didOpen", json::object{{"textDocument", json::object{{"uri", uri},
                                                                                {"languageId", "python"},
                                                                                {"version", 1},
                                                                                {"text", text}}}});
    return s.call("textDocument/completion",
                  json::object{{"textDocument", json::object{{"uri", uri}}},
                               {"position", json::object{{"line", 4}, {"character", 4}}},
                               {"context", json::object{{"triggerKind", 2}, {"triggerCharacter", " "}}}});
  };
  {
    served_model s;
    std::string error;
    ASSERT_TRUE(s.start(model, dir + "/gated.log", &error, json::object{{"typeThrough", false}})) << error;
    const auto list = automatic(s);
    ASSERT_TRUE(list.has_value());
    EXPECT_TRUE(list->at("items").as_array().empty()) << json::serialize(*list);
    const auto st = s.call("quickfill/stats", nullptr);
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->at("confidence").at("gated").to_number<int64_t>(), 1) << json::serialize(*st);
    const auto e = s.call("quickfill/explainCompletion",
                          json::object{{"textDocument", json::object{{"uri", uri}}},
                                       {"position", json::object{{"line", 4}, {"character", 4}}}});
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->at("gate").at("automatic").at("origin").as_string(), "calibrated " + model + ".gate.json");
    EXPECT_DOUBLE_EQ(e->at("gate").at("automatic").at("threshold").as_double(), -0.00001);
    EXPECT_EQ(s.stop(), 0);
  }
  {
    served_model s;
    std::string error;
    ASSERT_TRUE(s.start(model, dir + "/setting.log", &error,
                        json::object{{"typeThrough", false}, {"minConfidence", -100}}))
        << error;
    const auto list = automatic(s);
    ASSERT_TRUE(list.has_value());
    EXPECT_FALSE(list->at("items").as_array().empty()) << json::serialize(*list);
    const auto e = s.call("quickfill/explainCompletion",
                          json::object{{"textDocument", json::object{{"uri", uri}}},
                                       {"position", json::object{{"line", 4}, {"character", 4}}}});
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->at("gate").at("automatic").at("origin").as_string(), "setting");
    EXPECT_EQ(s.stop(), 0);
  }
}

}  // namespace
}  // namespace qf::test
