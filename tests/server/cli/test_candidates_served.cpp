// Several candidates and the confidence gate through the real quickfill
// binary over LSP, on the bundled model: an explicit completion with three
// sampled candidates comes back as distinct items in order of their score,
// each with the score in its `data`, and quickfill/stats shows it; a gate
// above every possible score leaves the answer empty and counts it.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "tests/server/cli/served_model.h"
#include "tests/server/cli/tool_runner.h"

namespace qf::test {
namespace {

namespace fs = std::filesystem;

const std::string k_text = "import os\n\n\ndef list_python_files(root):\n    ";

TEST(CandidatesServed, ExplicitCandidatesAreDistinctItemsWithTheirScores) {
  const std::string model = source_dir() + "/models/quickfill-tiny-code.gguf";
  if (!fs::exists(model)) GTEST_SKIP() << "bundled model absent: " << model;
  const std::string dir = scratch_dir("candidates_served");
  served_model s;
  std::string error;
  ASSERT_TRUE(s.start(model, dir + "/server.log", &error,
                      json::object{{"candidatesExplicit", 3}, {"temperatureExplicit", 1.5}, {"topKExplicit", 0},
                                   {"minPExplicit", 0}, {"topPExplicit", 1}, {"minConfidenceExplicit", -100},
                                   {"maxTokensExplicit", 12}, {"typeThrough", false}}))
      << error;
  auto list = s.complete_list("file:///work/a.py", k_text);
  ASSERT_TRUE(list.has_value());
  const json::array& items = list->at("items").as_array();
  ASSERT_FALSE(items.empty());
  std::set<std::string> texts;
  double prev = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const json::object& it = items[i].as_object();
    texts.insert(std::string(it.at("textEdit").at("newText").as_string()));
    ASSERT_TRUE(it.contains("data")) << json::serialize(it);
    const double score = it.at("data").at("score").to_number<double>();
    EXPECT_LE(score, 0.0);
    if (i > 0) {
      EXPECT_LE(score, prev) << "items are ordered by score";
    }
    prev = score;
  }
  EXPECT_EQ(texts.size(), items.size()) << "duplicates are dropped: " << json::serialize(*list);

  auto st = s.call("quickfill/stats", nullptr);
  ASSERT_TRUE(st.has_value());
  const json::array& recent = st->at("recent").as_array();
  ASSERT_FALSE(recent.empty());
  const json::object& last = recent.back().as_object();
  EXPECT_EQ(last.at("candidates").as_int64(), 3) << json::serialize(last);
  EXPECT_DOUBLE_EQ(last.at("score").to_number<double>(),
                   items[0].at("data").at("score").to_number<double>());
  EXPECT_GE(st->at("confidence").at("score").at("count").to_number<int64_t>(), 1);
  EXPECT_EQ(s.stop(), 0);
}

TEST(CandidatesServed, AGateAboveEveryScoreLeavesTheAnswerEmptyAndIsCounted) {
  const std::string model = source_dir() + "/models/quickfill-tiny-code.gguf";
  if (!fs::exists(model)) GTEST_SKIP() << "bundled model absent: " << model;
  const std::string dir = scratch_dir("candidates_gated");
  served_model s;
  std::string error;
  // Scores are mean log-probabilities (< 0): a gate at -0.00001 drops every suggestion.
  ASSERT_TRUE(s.start(model, dir + "/server.log", &error,
                      json::object{{"minConfidenceExplicit", -0.00001}, {"maxTokensExplicit", 12}}))
      << error;
  auto list = s.complete_list("file:///work/a.py", k_text);
  ASSERT_TRUE(list.has_value());
  EXPECT_TRUE(list->at("items").as_array().empty()) << json::serialize(*list);
  auto st = s.call("quickfill/stats", nullptr);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->at("confidence").at("gated").to_number<int64_t>(), 1) << json::serialize(*st);
  const json::object& last = st->at("recent").as_array().back().as_object();
  EXPECT_GE(last.at("gated").as_int64(), 1);
  EXPECT_LT(last.at("score").to_number<double>(), -0.00001);
  EXPECT_EQ(s.stop(), 0);
}

}  // namespace
}  // namespace qf::test
