// quickfill eval's scoring on models whose answer is known: the real
// pipeline (prompt layout, post-processing, gate) on a scripted model
// (tests/server/completion/fake_lm.h) that reads the task from its prompt
// and writes a chosen text, then EOS. Writing the reference middle must
// score pass@1 and exact match 100 %; writing code that exits early with
// status 0 (os._exit(0) in the function) must score 0 % -- so the scoring
// cannot silently be wrong either way. HumanEval-infilling's first
// single-line tasks; skipped without the shared data.
#include <gtest/gtest.h>

#include <filesystem>

#include "indexing/syntax_index.h"
#include "server/cli/eval_report.h"
#include "server/cli/eval_runner.h"
#include "server/cli/eval_sandbox.h"
#include "server/cli/eval_score.h"
#include "server/cli/eval_tasks.h"
#include "server/completion/pipeline/pipeline.h"
#include "tests/server/completion/fake_lm.h"
#include "tests/shared_test_data.h"

namespace qf::cli {
namespace {

using qf::test::fake_backend;
using qf::test::fake_vocab;

// The model: finds the task whose hole the prompt shows (the end of its
// prompt and the start of its suffix both in the prompt), and writes what
// `answer` gives for it, byte by byte after the middle token, then EOS.
class answering_model {
 public:
  answering_model(const std::vector<eval_task>& tasks, std::function<std::string(const eval_task&)> answer)
      : tasks_(tasks), answer_(std::move(answer)) {}

  int32_t next(std::span<const int32_t> h) const {
    // The prompt's parts: <PRE> prefix <SUF> suffix <MID> cursor line head + written so far.
    std::string text;
    size_t pre = std::string::npos, suf = std::string::npos, mid = std::string::npos;
    for (int32_t t : h) {
      if (t == fake_vocab::k_pre) pre = text.size();
      if (t == fake_vocab::k_suf) suf = text.size();
      if (t == fake_vocab::k_mid) mid = text.size();
      text += t >= 300 ? std::string("\x01") : vocab_.piece(t);  // a special token: one marker byte
    }
    if (pre == std::string::npos || suf == std::string::npos || mid == std::string::npos || !(pre < suf && suf < mid))
      return fake_vocab::k_eos;
    const std::string prefix = text.substr(pre + 1, suf - pre - 1), suffix = text.substr(suf + 1, mid - suf - 1);
    const std::string after = text.substr(mid + 1);
    for (const eval_task& t : tasks_) {
      const std::string line_head = t.prompt.substr(t.prompt.rfind('\n') + 1);
      if (after.compare(0, line_head.size(), line_head) != 0) continue;
      const std::string before_cursor = prefix + line_head;
      const std::string p_tail = t.prompt.substr(t.prompt.size() - std::min<size_t>(200, t.prompt.size()));
      const std::string s_head = t.suffix.substr(0, std::min<size_t>(40, t.suffix.size()));
      if (!before_cursor.ends_with(p_tail) || !suffix.starts_with(s_head)) continue;
      const std::string written = after.substr(line_head.size());
      const std::string want = answer_(t);
      if (written.size() >= want.size() || want.compare(0, written.size(), written) != 0) return fake_vocab::k_eos;
      return static_cast<unsigned char>(want[written.size()]);
    }
    return fake_vocab::k_eos;
  }

 private:
  const std::vector<eval_task>& tasks_;
  std::function<std::string(const eval_task&)> answer_;
  fake_vocab vocab_;
};

class EvalKnownAnswer : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string data = qf::test::shared_test_data(QUICKFILL_TEST_DATA_DEFAULT) + "/humaneval-infilling";
    std::string error;
    if (!std::filesystem::exists(data + "/" + humaneval_file("humaneval-single")))
      GTEST_SKIP() << "HumanEval-infilling not found in the shared data (QUICKFILL_TEST_DATA)";
    if (find_python().empty()) GTEST_SKIP() << "no python3 on PATH";
    ASSERT_TRUE(load_humaneval(data + "/" + humaneval_file("humaneval-single"), "humaneval-single", 6, tasks_, &error))
        << error;
  }

  // Runs every task with both trigger kinds through the pipeline on `model`.
  std::vector<eval_record> run(const answering_model& model) {
    server::completion::completion_settings s;
    s.sampling_explicit.temperature = 0;  // the scripted model's one answer, for both kinds
    s.sampling_explicit.candidates = 1;
    s.max_tokens_auto = 128;  // the scripted model writes a byte per token, a real one about four
    s.sampling_auto.min_confidence = s.sampling_explicit.min_confidence = -100;
    s.sampling_auto.min_confidence_given = s.sampling_explicit.min_confidence_given = true;
    auto backend = std::make_unique<fake_backend>([&model](std::span<const int32_t> h) { return model.next(h); });
    server::completion::pipeline p(std::move(backend), s);
    index::syntax_index syntax;
    eval_request_options ro;
    ro.auto_deadline_ms = ro.explicit_deadline_ms = 60000;  // no deadline cuts: a loaded machine changes nothing
    ro.gate_auto = -1.8;
    sandbox_limits limits;
    limits.cpu_seconds = 5;
    limits.wall_ms = 10000;
    std::vector<eval_record> out;
    for (const eval_task& t : tasks_)
      for (bool expl : {false, true}) out.push_back(eval_one(p, syntax, nullptr, t, expl, ro, limits));
    return out;
  }
  std::vector<eval_task> tasks_;
};

TEST_F(EvalKnownAnswer, TheReferenceMiddleScoresEverything) {
  const answering_model model(tasks_, [](const eval_task& t) { return t.middle; });
  const std::vector<eval_record> rs = run(model);
  for (bool expl : {false, true}) {
    const eval_summary s = summarize(rs, expl, -1.8, "default");
    EXPECT_EQ(s.tasks, 6);
    EXPECT_EQ(s.suggested, 6);
    EXPECT_EQ(s.shown, 6);  // the scripted model is sure of every token: its scores are near 0
    EXPECT_EQ(s.executed, 6);
    EXPECT_EQ(s.passed, 6) << s.trigger;
    EXPECT_EQ(s.exact, 6) << s.trigger;
    EXPECT_DOUBLE_EQ(s.similarity, 1.0);
    EXPECT_EQ(s.syntax_ok, 6);
  }
  // Byte for byte, except where the hole is an empty line's text: the suggestion fills the
  // line and leaves its line break to the document (task L5: "return True" before an empty line).
  for (const eval_record& r : rs) {
    EXPECT_TRUE(exact_match(r.middle, r.task->middle)) << r.task->id;
    if (r.task->suffix.rfind("\n", 0) != 0) {
      EXPECT_EQ(r.middle, r.task->middle) << r.task->id;
    }
  }
}

TEST_F(EvalKnownAnswer, AnEarlyExitScoresNothing) {
  // The middle's indentation, then a statement that ends the process with status 0 when the function runs.
  const answering_model model(tasks_, [](const eval_task& t) {
    return t.middle.substr(0, t.middle.find_first_not_of(' ')) + "import os; os._exit(0)\n";
  });
  const std::vector<eval_record> rs = run(model);
  for (bool expl : {false, true}) {
    const eval_summary s = summarize(rs, expl, -1.8, "default");
    EXPECT_EQ(s.suggested, 6);
    EXPECT_EQ(s.passed, 0) << s.trigger;
    EXPECT_EQ(s.exact, 0);
    EXPECT_LT(s.similarity, 0.9);
  }
}

TEST_F(EvalKnownAnswer, NoSuggestionIsJudgedAsTheEmptyHole) {
  const answering_model model(tasks_, [](const eval_task&) { return std::string(); });
  const std::vector<eval_record> rs = run(model);
  const eval_summary s = summarize(rs, false, -1.8, "default");
  EXPECT_EQ(s.suggested, 0);
  EXPECT_EQ(s.shown, 0);
  EXPECT_EQ(s.exact, 0);
  EXPECT_EQ(s.syntax_checked, 0);  // syntax is judged on suggestions only
  EXPECT_EQ(s.executed, 6);        // the program with the hole left empty still runs
  for (const eval_record& r : rs) EXPECT_EQ(r.middle, "");
}

}  // namespace
}  // namespace qf::cli

namespace qf::cli {
namespace {

// The pipeline gates automatic suggestions with the calibrated value unless
// the setting was given, and says which applied.
TEST(CalibratedGate, PipelineUsesItUnlessTheSettingIsGiven) {
  server::completion::completion_settings s;
  s.type_through = false;
  auto answer = [](std::span<const int32_t>) { return static_cast<int32_t>('x'); };
  server::completion::pipeline p(std::make_unique<fake_backend>(answer), s);
  server::completion_request req;
  req.uri = "file:///w/a.py";
  req.text = std::string("def f(x):\n    return x\n\n");
  req.cursor = server::text_pos{3, 0};
  auto ask = [&] {
    const server::completion_result r = p.complete(req, cancel_token{});
    p.document_closed(req.uri);
    return r;
  };
  server::completion_result r = ask();
  ASSERT_EQ(r.items.size(), 1u);  // the scripted model's score is near 0: above the default -1.8
  EXPECT_EQ(p.gate(false).origin, "default");

  p.set_calibrated_gate(server::completion::calibrated_gate{-0.0001, "/m/x.gguf.gate.json"});
  EXPECT_EQ(p.gate(false).origin, "calibrated /m/x.gguf.gate.json");
  EXPECT_EQ(p.gate(true).origin, "default");  // explicit invocations keep their setting
  r = ask();
  EXPECT_TRUE(r.items.empty());
  EXPECT_EQ(r.metrics.gated, 1);
  const auto e = p.explain(req);
  ASSERT_TRUE(e);
  ASSERT_EQ(e->gates.size(), 2u);
  EXPECT_EQ(e->gates[0].trigger, "automatic");
  EXPECT_DOUBLE_EQ(e->gates[0].threshold, -0.0001);
  EXPECT_EQ(e->gates[0].origin, "calibrated /m/x.gguf.gate.json");

  s.sampling_auto.min_confidence_given = true;  // the user set -1.8 themselves
  p.configure(s);
  EXPECT_EQ(p.gate(false).origin, "setting");
  r = ask();
  EXPECT_EQ(r.items.size(), 1u);
}

}  // namespace
}  // namespace qf::cli
