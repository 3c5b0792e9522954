// Syntax trees at the edges: 100,000 nested brackets (no recursion in the
// parser or in our walks), a 10 MB single-line file (the parse budget gives
// up in bounded time and the index falls back to no tree), and cancellation.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>

#include "indexing/syntax_index.h"
#include "indexing/syntax_query.h"
#include "indexing/syntax_tree.h"
#include "syntax_tree_check.h"

using namespace qf::index;
using namespace qf::text;
using qf::test::check_tree;

namespace {

using snapshot_t = std::shared_ptr<const document>;

std::shared_ptr<const document> make_doc(const char* uri, const char* lang, std::string text, std::int64_t v = 1) {
  return std::make_shared<const document>(uri, lang, v, std::move(text));
}

struct nesting_case {
  const char* grammar;
  const char* language_id;
  std::string prefix, open, middle, close, suffix;
};

TEST(SyntaxLimits, HundredThousandNestedBracketsStayBounded) {
  const std::vector<nesting_case> cases = {
      {"python", "python", "x = ", "(", "1", ")", "\n"},
      {"javascript", "javascript", "let x = ", "[", "1", "]", ";\n"},
      {"cpp", "cpp", "int f() ", "{", "return 1;", "}", "\n"},
  };
  constexpr int depth = 100000;
  int ran = 0;
  for (const auto& c : cases) {
    const syntax_language* lang = syntax_language_named(c.grammar);
    if (!lang) continue;
    ++ran;
    std::string text = c.prefix;
    for (int i = 0; i < depth; ++i) text += c.open;
    text += c.middle;
    for (int i = 0; i < depth; ++i) text += c.close;
    text += c.suffix;
    auto doc = make_doc("file:///deep", c.language_id, text);
    syntax_document sd(*lang);
    sd.reset(doc);
    ASSERT_EQ(sd.parse({std::chrono::seconds(60)}), parse_status::parsed) << c.grammar;
    const tree_shape shape = measure_tree(sd.tree());
    EXPECT_GE(shape.max_depth, static_cast<std::size_t>(depth)) << c.grammar;
    EXPECT_EQ(check_tree(sd.tree(), text), "") << c.grammar;
    // Walks and printing are bounded by their own limits, not by the depth.
    const std::string head = describe_tree(sd.tree(), 10000);
    EXPECT_LE(head.size(), 10100u);
    EXPECT_EQ(head.substr(head.size() - 3), "...");
    auto snap = sd.snapshot();
    ASSERT_TRUE(snap);
    const std::size_t middle = text.find(c.middle);
    const auto inner = enclosing_nodes(*snap, middle, 50);
    ASSERT_EQ(inner.size(), 50u) << c.grammar;
    EXPECT_LE(inner.front().start_byte, middle);
    EXPECT_GT(inner.front().end_byte, middle);
    EXPECT_LE(inner.back().start_byte, inner.front().start_byte);  // outermost of the 50 contains the innermost
    // An edit deep inside reparses incrementally to the same tree as a fresh parse.
    auto next = std::make_shared<document>(*doc);
    next->text.insert(middle, "2+");
    next->lines = line_table(next->text);
    sd.edit(byte_edit{middle, middle, middle + 2}, next);
    ASSERT_EQ(sd.parse({std::chrono::seconds(60)}), parse_status::parsed);
    syntax_document fresh(*lang);
    fresh.reset(next);
    ASSERT_EQ(fresh.parse({std::chrono::seconds(60)}), parse_status::parsed);
    EXPECT_EQ(describe_tree(sd.tree()), describe_tree(fresh.tree())) << c.grammar;
  }
  if (ran == 0) GTEST_SKIP() << "no grammar built";
}

// About 10 MB on one line: a JavaScript array literal.
std::string ten_megabyte_line() {
  std::string text = "var a = [";
  text.reserve(10u << 20);
  while (text.size() < (10u << 20)) text += "1234567, 'abcdefgh', x.y(z), ";
  text += "0];";
  return text;
}

TEST(SyntaxLimits, TenMegabyteLineGivesUpWithinTheBudget) {
  const syntax_language* lang = syntax_language_named("javascript");
  if (!lang) GTEST_SKIP() << "javascript grammar not built";
  syntax_document sd(*lang);
  sd.reset(make_doc("file:///big.js", "javascript", ten_megabyte_line()));
  // 20 ms cannot parse 10 MB: the parse stops at the budget and leaves no tree.
  EXPECT_EQ(sd.parse({std::chrono::milliseconds(20)}), parse_status::timed_out);
  EXPECT_FALSE(sd.has_tree());
  EXPECT_EQ(sd.snapshot(), nullptr);
}

TEST(SyntaxLimits, IndexFallsBackForTheHugeFileAndKeepsServingOthers) {
  if (!syntax_language_named("javascript") || !syntax_language_named("python")) GTEST_SKIP() << "grammars not built";
  syntax_index_options opts;
  opts.parse_budget = std::chrono::milliseconds(20);
  syntax_index idx(opts);
  auto big = make_doc("file:///big.js", "javascript", ten_megabyte_line());
  idx.opened(big);
  idx.wait_idle();
  EXPECT_EQ(idx.state("file:///big.js"), syntax_state::gave_up);
  EXPECT_EQ(idx.latest("file:///big.js"), nullptr);
  // A keystroke in the given-up file: no new attempt, still no tree.
  auto big2 = std::make_shared<document>(*big);
  big2->version = 2;
  big2->text.insert(9, "7, ");
  big2->lines = line_table(big2->text);
  idx.changed(big, big2, {text_change{text_range{0, 9, 0, 9}, "7, "}}, position_encoding::utf16);
  // Other documents still get trees.
  idx.opened(make_doc("file:///small.py", "python", "def f(x):\n    return x\n"));
  idx.wait_idle();
  EXPECT_EQ(idx.state("file:///big.js"), syntax_state::gave_up);
  EXPECT_EQ(idx.state("file:///small.py"), syntax_state::parsed);
  ASSERT_NE(idx.latest("file:///small.py"), nullptr);
  // Once the file is small again, it is parsed again.
  auto small = std::make_shared<document>("file:///big.js", "javascript", 3, "var a = [1, 2];\n");
  idx.changed(big2, small, {text_change{std::nullopt, small->text}}, position_encoding::utf16);
  idx.wait_idle();
  EXPECT_EQ(idx.state("file:///big.js"), syntax_state::parsed);
  ASSERT_NE(idx.latest("file:///big.js"), nullptr);
  EXPECT_EQ(idx.latest("file:///big.js")->version(), 3);
}

TEST(SyntaxLimits, SlowReparseKeepsTheLastTreeThenGivesUp) {
  if (!syntax_language_named("javascript")) GTEST_SKIP() << "javascript grammar not built";
  syntax_index_options opts;
  opts.parse_budget = std::chrono::milliseconds(20);
  syntax_index idx(opts);
  const std::string uri = "file:///grow.js";
  auto small = make_doc(uri.c_str(), "javascript", "let a = 1;\n");
  idx.opened(small);
  idx.wait_idle();
  ASSERT_EQ(idx.state(uri), syntax_state::parsed);
  const std::string big_line = ten_megabyte_line();
  snapshot_t current = small;
  // Pasting 10 MB into it: the reparse runs over the budget; the version-1
  // tree stays published, the newest text is not parsed yet.
  for (int attempt = 1; attempt <= 3; ++attempt) {
    auto next = std::make_shared<document>(*current);
    next->version = current->version + 1;
    next->text.insert(0, attempt == 1 ? big_line : "x");
    next->lines = line_table(next->text);
    idx.changed(current, next, {text_change{text_range{0, 0, 0, 0}, attempt == 1 ? big_line : "x"}},
                position_encoding::utf16);
    idx.wait_idle();
    current = next;
    if (attempt < 3) {
      EXPECT_EQ(idx.state(uri), syntax_state::pending) << attempt;
      ASSERT_NE(idx.latest(uri), nullptr);
      EXPECT_EQ(idx.latest(uri)->version(), 1);
    }
  }
  // The third slow reparse in a row gives up.
  EXPECT_EQ(idx.state(uri), syntax_state::gave_up);
  EXPECT_EQ(idx.latest(uri), nullptr);
}

TEST(SyntaxLimits, DocumentsOverTheByteLimitAreNotParsed) {
  if (!syntax_language_named("python")) GTEST_SKIP() << "python grammar not built";
  syntax_index_options opts;
  opts.max_bytes = 1000;
  syntax_index idx(opts);
  idx.opened(make_doc("file:///a.py", "python", std::string(2000, '#')));
  idx.wait_idle();
  EXPECT_EQ(idx.state("file:///a.py"), syntax_state::gave_up);
  EXPECT_EQ(idx.latest("file:///a.py"), nullptr);
}

TEST(SyntaxLimits, CancelledParseLeavesAReusableTree) {
  const syntax_language* lang = syntax_language_named("python");
  if (!lang) GTEST_SKIP() << "python grammar not built";
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "def f" + std::to_string(i) + "(a, b):\n    return a + b * " + std::to_string(i) + "\n";
  auto doc = make_doc("file:///c.py", "python", text);
  syntax_document sd(*lang);
  sd.reset(doc);
  const std::atomic<bool> cancel{true};
  EXPECT_EQ(sd.parse({std::chrono::seconds(10), &cancel}), parse_status::cancelled);
  EXPECT_FALSE(sd.has_tree());
  ASSERT_EQ(sd.parse({}), parse_status::parsed);
  // Edit (500 new functions after the first line, enough work that the
  // parse reaches a cancellation check), cancel the reparse, then reparse:
  // the edited old tree is still a good base.
  std::string added;
  for (int i = 0; i < 500; ++i) added += "def g" + std::to_string(i) + "():\n    return [" + std::to_string(i) + "]\n";
  const std::size_t at = text.find('\n', text.find('\n') + 1) + 1;
  auto next = std::make_shared<document>(*doc);
  next->text.insert(at, added);
  next->lines = line_table(next->text);
  sd.edit(byte_edit{at, at, at + added.size()}, next);
  EXPECT_EQ(sd.parse({std::chrono::microseconds(0), &cancel}), parse_status::cancelled);
  ASSERT_EQ(sd.parse({}), parse_status::parsed);
  syntax_document fresh(*lang);
  fresh.reset(next);
  ASSERT_EQ(fresh.parse({}), parse_status::parsed);
  EXPECT_EQ(describe_tree(sd.tree()), describe_tree(fresh.tree()));
  EXPECT_EQ(check_tree(sd.tree(), next->text), "");
}

}  // namespace
