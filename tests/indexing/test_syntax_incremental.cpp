// Incremental reparsing against fresh parses: random LSP edits (insertions,
// deletions, replacements of code-ish text with multi-byte UTF-8, CRLF and
// lone CR; single changes, multi-change batches, whole-text replacements, and
// their undos) go through the document, edit_between() and syntax_document;
// after each reparse the tree must print exactly like a fresh parse of the
// same text (every node's type, field, byte range and point range).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <random>

#include "indexing/syntax_query.h"
#include "indexing/syntax_tree.h"
#include "syntax_test_util.h"
#include "syntax_tree_check.h"

using namespace qf::index;
using namespace qf::text;
using namespace qf::test;

namespace {

std::string fresh_description(const syntax_language& lang, std::shared_ptr<const document> doc) {
  syntax_document fresh(lang);
  fresh.reset(std::move(doc));
  EXPECT_EQ(fresh.parse({std::chrono::seconds(5)}), parse_status::parsed);
  return describe_tree(fresh.tree());
}

struct run_stats {
  int edits = 0;      // didChange batches applied
  int reparses = 0;   // compared with a fresh parse
  int batches = 0;    // multi-change or whole-text batches (diffed edits)
  int error_free = 0; // reparses of error-free text (trees compared exactly)
  int with_errors = 0; // reparses of text with syntax errors
  int recovered_differently = 0;  // ... whose error recovery differed from a fresh parse
  int timeouts = 0;   // parses over the budget (grammar pathologies), not compared
};

// The test's parse budget: generous, so that only runaway error recovery hits it.
constexpr parse_limits test_limits{std::chrono::seconds(5)};

// One didChange batch against `doc`: usually a single random change, sometimes
// 2-3 changes (the tree then gets one diffed edit), rarely the whole text.
std::vector<text_change> random_batch(const document& doc, std::mt19937& rng, position_encoding enc,
                                      std::size_t max_bytes, int step) {
  std::vector<text_change> changes;
  const int shape = std::uniform_int_distribution<int>(0, 49)(rng);
  std::string error;
  if (shape == 0) {
    text_change whole;
    whole.text = doc.text;
    whole.text.insert(random_boundary(whole.text, rng), code_fragments()[step % code_fragments().size()]);
    changes.push_back(std::move(whole));
    return changes;
  }
  const int n = shape < 5 ? 2 + shape % 2 : 1;
  document scratch = doc;
  for (int i = 0; i < n; ++i) {
    changes.push_back(random_change(scratch, rng, enc, max_bytes));
    EXPECT_TRUE(scratch.apply({changes.back()}, enc, &error)) << error;
  }
  return changes;
}

// Random edits of `sample` in episodes: a run of 1-40 batches away from the
// sample, then the whole way back (the inverse edits, as a client's undo
// sends them), so the text stays code-like rather than drifting into noise.
// After every reparse the incremental tree must equal a fresh parse; back at
// the start it must equal the sample's own tree.
run_stats run_random_edits(const syntax_sample& sample, int edits, unsigned seed) {
  run_stats stats;
  const syntax_language* lang = syntax_language_named(sample.grammar);
  std::mt19937 rng(seed);
  auto doc = std::make_shared<const document>(std::string(sample.uri), std::string(sample.language_id), 1,
                                              std::string(sample.source));
  const std::string original_tree = fresh_description(*lang, doc);
  syntax_document inc(*lang);
  inc.reset(doc);
  EXPECT_EQ(inc.parse(test_limits), parse_status::parsed);
  const std::size_t max_bytes = sample.source.size() * 2;

  // Applies one batch to doc and the tree; reparses unless `defer`.
  auto step = [&](const std::vector<text_change>& changes, position_encoding enc, bool defer) -> bool {
    auto next = std::make_shared<document>(*doc);
    std::string error;
    EXPECT_TRUE(next->apply(changes, enc, &error)) << error;
    next->version = doc->version + 1;
    ++stats.edits;
    if (changes.size() != 1 || !changes[0].range) ++stats.batches;
    inc.edit(edit_between(*doc, *next, hint_of(changes), enc), next);
    doc = next;
    if (defer) return true;  // several edits reach the tree before one reparse
    const parse_status got_status = inc.parse(test_limits);
    syntax_document fresh(*lang);
    fresh.reset(doc);
    const parse_status want_status = fresh.parse(test_limits);
    if (got_status != parse_status::parsed || want_status != parse_status::parsed) {
      ++stats.timeouts;
      inc.drop_tree();
      return true;
    }
    ++stats.reparses;
    const std::string problem = check_tree(inc.tree(), doc->text);
    if (!problem.empty()) {
      ADD_FAILURE() << sample.grammar << " edit " << stats.edits << ": " << problem << "\ntext:\n" << doc->text;
      return false;
    }
    // Where the text has syntax errors, tree-sitter's error recovery may
    // settle differently when it reuses nodes (both trees are then valid
    // trees of the text and both hold errors); everywhere else the trees
    // must be identical.
    const bool fresh_has_error = ts_node_has_error(ts_tree_root_node(fresh.tree()));
    if (fresh_has_error) {
      ++stats.with_errors;
      if (!ts_node_has_error(ts_tree_root_node(inc.tree()))) {
        ADD_FAILURE() << sample.grammar << " edit " << stats.edits
                      << ": the fresh tree has syntax errors, the incremental one none\ntext:\n" << doc->text;
        return false;
      }
      if (!same_tree(inc.tree(), fresh.tree())) ++stats.recovered_differently;
      return true;
    }
    ++stats.error_free;
    if (!same_tree(inc.tree(), fresh.tree())) {
      const std::string got = describe_tree(inc.tree());
      const std::string want = describe_tree(fresh.tree());
      std::size_t at = 0;
      while (at < got.size() && at < want.size() && got[at] == want[at]) ++at;
      const std::size_t from = at > 600 ? at - 600 : 0;
      ADD_FAILURE() << sample.grammar << " edit " << stats.edits
                    << ": incremental tree differs from a fresh parse at character " << at << "\ntext:\n"
                    << doc->text << "\nincremental: ..." << got.substr(from, 1000) << "\nfresh: ..."
                    << want.substr(from, 1000);
      return false;
    }
    return true;
  };

  while (stats.edits < edits) {
    struct undo {
      std::vector<text_change> inverse;
      position_encoding enc;
    };
    std::vector<undo> undos;
    const int away = std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? std::uniform_int_distribution<int>(1, 40)(rng) : std::uniform_int_distribution<int>(1, 3)(rng);
    for (int i = 0; i < away && stats.edits < edits; ++i) {
      const auto enc = stats.edits % 3 == 0 ? position_encoding::utf8 : position_encoding::utf16;
      std::vector<text_change> changes = random_batch(*doc, rng, enc, max_bytes, stats.edits);
      // The inverse of a batch: the previous whole text (what an undo of
      // several changes at once amounts to), or the one change reversed.
      undo u{{}, enc};
      if (changes.size() == 1 && changes[0].range) {
        const std::size_t begin = *offset_of(doc->text, doc->lines, changes[0].range->start_line,
                                             changes[0].range->start_character, enc);
        const std::size_t end = *offset_of(doc->text, doc->lines, changes[0].range->end_line,
                                           changes[0].range->end_character, enc);
        document after = *doc;
        std::string error;
        EXPECT_TRUE(after.apply(changes, enc, &error));
        text_change inv;
        inv.range = range_of(after, begin, begin + changes[0].text.size(), enc);
        inv.text = doc->text.substr(begin, end - begin);
        u.inverse.push_back(std::move(inv));
      } else {
        text_change inv;
        inv.text = doc->text;
        u.inverse.push_back(std::move(inv));
      }
      undos.push_back(std::move(u));
      if (!step(changes, enc, std::uniform_int_distribution<int>(0, 7)(rng) == 0)) return stats;
    }
    while (!undos.empty()) {
      if (!step(undos.back().inverse, undos.back().enc, false)) return stats;
      undos.pop_back();
    }
    EXPECT_EQ(doc->text, sample.source);
    if (inc.up_to_date() && describe_tree(inc.tree()) != original_tree) {
      ADD_FAILURE() << sample.grammar << ": after undoing every edit the tree differs from the original";
      return stats;
    }
  }
  return stats;
}

class SyntaxIncremental : public ::testing::TestWithParam<std::string_view> {};

TEST_P(SyntaxIncremental, RandomEditsMatchFreshParses) {
  const syntax_sample* sample = nullptr;
  for (const auto& s : syntax_samples())
    if (s.grammar == GetParam()) sample = &s;
  ASSERT_NE(sample, nullptr);
  if (!syntax_language_named(sample->grammar)) GTEST_SKIP() << "grammar " << sample->grammar << " not built";
  // 10,000 edits for the four most used grammars, 2,500 for the others.
  const bool main_grammar = sample->grammar == "python" || sample->grammar == "cpp" ||
                            sample->grammar == "typescript" || sample->grammar == "javascript";
  const int edits = main_grammar ? 10000 : 2500;
  const run_stats stats = run_random_edits(*sample, edits, 20261201u + static_cast<unsigned>(sample->source.size()));
  // The walk really covered a range of states: many reparses, some of them of
  // well-formed code, some from diffed batches; runaway parses stay rare.
  EXPECT_GE(stats.edits, edits);
  EXPECT_GT(stats.reparses, edits * 8 / 10);
  EXPECT_GT(stats.batches, edits / 25);
  EXPECT_GT(stats.error_free, edits / 20);
  EXPECT_LE(stats.timeouts, 5);
  std::printf("%s: %d edits, %d reparses: %d error-free (identical trees), %d with syntax errors (%d recovered "
              "differently), %d diffed batches, %d timeouts\n",
              std::string(sample->grammar).c_str(), stats.edits, stats.reparses, stats.error_free, stats.with_errors,
              stats.recovered_differently, stats.batches, stats.timeouts);
}

INSTANTIATE_TEST_SUITE_P(Grammars, SyntaxIncremental,
                         ::testing::Values("python", "javascript", "typescript", "tsx", "c", "cpp", "go", "rust",
                                           "java"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
