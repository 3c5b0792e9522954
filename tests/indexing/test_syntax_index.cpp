// The background syntax index: events in, trees out. After wait_idle() the
// published tree is the newest text's and equals a fresh parse; trees are
// dropped on close, documents without a grammar get none, a re-open starts
// over, and readers on another thread always see self-consistent trees.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <random>
#include <thread>

#include "indexing/syntax_index.h"
#include "indexing/syntax_query.h"
#include "indexing/syntax_tree.h"
#include "syntax_test_util.h"
#include "syntax_tree_check.h"

using namespace qf::index;
using namespace qf::text;
using namespace qf::test;

namespace {

using snapshot = std::shared_ptr<const document>;

std::string fresh_tree(const syntax_language& lang, snapshot doc) {
  syntax_document sd(lang);
  sd.reset(std::move(doc));
  EXPECT_EQ(sd.parse({}), parse_status::parsed);
  return describe_tree(sd.tree());
}

// A client typing: applies a random change to *doc and reports it.
snapshot type_one(syntax_index& idx, const snapshot& doc, std::mt19937& rng) {
  std::vector<text_change> changes{random_change(*doc, rng, position_encoding::utf16, 4000)};
  auto next = std::make_shared<document>(*doc);
  std::string error;
  EXPECT_TRUE(next->apply(changes, position_encoding::utf16, &error)) << error;
  next->version = doc->version + 1;
  idx.changed(doc, next, changes, position_encoding::utf16);
  return next;
}

TEST(SyntaxIndex, PublishesTheNewestTreeOfEachDocument) {
  const syntax_language* py = syntax_language_named("python");
  const syntax_language* cpp = syntax_language_named("cpp");
  if (!py || !cpp) GTEST_SKIP() << "grammars not built";
  syntax_index idx;
  std::mt19937 rng(11);
  snapshot a = std::make_shared<const document>("file:///a.py", "python", 1, std::string(syntax_samples()[0].source));
  snapshot b = std::make_shared<const document>("file:///b.cpp", "cpp", 1, std::string(syntax_samples()[5].source));
  idx.opened(a);
  idx.opened(b);
  idx.wait_idle();
  ASSERT_EQ(idx.state(a->uri), syntax_state::parsed);
  ASSERT_NE(idx.latest(a->uri), nullptr);
  EXPECT_EQ(idx.latest(a->uri)->version(), 1);
  EXPECT_EQ(idx.latest(a->uri)->language().name, "python");
  EXPECT_EQ(idx.latest(b->uri)->language().name, "cpp");
  EXPECT_FALSE(idx.latest(a->uri)->has_error());
  // Bursts of typing in both, without waiting (events merge while the thread is busy).
  for (int burst = 0; burst < 20; ++burst) {
    for (int k = 0; k < 10; ++k) {
      a = type_one(idx, a, rng);
      b = type_one(idx, b, rng);
    }
    idx.wait_idle();
    for (const snapshot& d : {a, b}) {
      ASSERT_EQ(idx.state(d->uri), syntax_state::parsed);
      auto t = idx.latest(d->uri);
      ASSERT_NE(t, nullptr);
      EXPECT_EQ(t->version(), d->version);
      EXPECT_EQ(t->doc().text, d->text);
      EXPECT_EQ(check_tree(t->tree(), d->text), "");
    }
  }
  // The trees are real parses of the final texts (error recovery may differ
  // from a fresh parse only where the text has errors).
  for (const snapshot& d : {a, b}) {
    auto t = idx.latest(d->uri);
    if (!t->has_error()) {
      EXPECT_EQ(describe_tree(t->tree()), fresh_tree(t->language(), d));
    }
  }
  idx.closed(a->uri);
  EXPECT_EQ(idx.latest(a->uri), nullptr);
  EXPECT_EQ(idx.state(a->uri), syntax_state::none);
  idx.wait_idle();
  EXPECT_EQ(idx.state(b->uri), syntax_state::parsed);
}

TEST(SyntaxIndex, LanguagesWithoutAGrammarGetNoTree) {
  syntax_index idx;
  idx.opened(std::make_shared<const document>("file:///notes.md", "markdown", 1, "# title\n"));
  idx.opened(std::make_shared<const document>("file:///x.py", "markdown", 1, "def f(): pass\n"));
  idx.wait_idle();
  EXPECT_EQ(idx.state("file:///notes.md"), syntax_state::none);
  EXPECT_EQ(idx.latest("file:///notes.md"), nullptr);
  EXPECT_EQ(idx.state("file:///x.py"), syntax_state::none);  // the client said markdown
}

TEST(SyntaxIndex, ExtensionDecidesForPlainTextAndReopenStartsOver) {
  if (!syntax_language_named("rust")) GTEST_SKIP() << "rust grammar not built";
  syntax_index idx;
  const std::string uri = "file:///src/main.rs";
  idx.opened(std::make_shared<const document>(uri, "plaintext", 1, "fn main() { let x = 1; }\n"));
  idx.wait_idle();
  ASSERT_NE(idx.latest(uri), nullptr);
  EXPECT_EQ(idx.latest(uri)->language().name, "rust");
  // Re-opened as another language without a grammar: the tree goes.
  idx.opened(std::make_shared<const document>(uri, "markdown", 1, "fn main() {}\n"));
  idx.wait_idle();
  EXPECT_EQ(idx.latest(uri), nullptr);
  EXPECT_EQ(idx.state(uri), syntax_state::none);
  // And back: a new tree of the new text.
  idx.opened(std::make_shared<const document>(uri, "rust", 7, "struct S;\n"));
  idx.wait_idle();
  ASSERT_NE(idx.latest(uri), nullptr);
  EXPECT_EQ(idx.latest(uri)->version(), 7);
  EXPECT_EQ(idx.latest(uri)->doc().text, "struct S;\n");
}

TEST(SyntaxIndex, ChangesOfUnknownDocumentsAreIgnored) {
  syntax_index idx;
  auto a = std::make_shared<const document>("file:///never-opened.py", "python", 1, "x = 1\n");
  auto b = std::make_shared<const document>("file:///never-opened.py", "python", 2, "x = 12\n");
  idx.changed(a, b, {text_change{text_range{0, 5, 0, 5}, "2"}}, position_encoding::utf16);
  idx.closed("file:///never-opened.py");
  idx.wait_idle();
  EXPECT_EQ(idx.state(b->uri), syntax_state::none);
  EXPECT_EQ(idx.latest(b->uri), nullptr);
}

TEST(SyntaxIndex, ReadersOnAnotherThreadSeeConsistentTrees) {
  if (!syntax_language_named("typescript")) GTEST_SKIP() << "typescript grammar not built";
  syntax_index idx;
  std::mt19937 rng(5);
  snapshot d = std::make_shared<const document>("file:///r.ts", "typescript", 1, std::string(syntax_samples()[2].source));
  idx.opened(d);
  const std::string uri = d->uri;  // `d` itself is replaced below while the reader runs
  std::atomic<bool> done{false};
  std::atomic<int> seen{0};
  std::string reader_problem;
  std::thread reader([&] {
    while (!done.load()) {
      if (auto t = idx.latest(uri)) {
        // Each published tree indexes exactly the text it was parsed from.
        const std::string p = check_tree(t->tree(), t->doc().text);
        if (!p.empty() && reader_problem.empty()) reader_problem = p;
        enclosing_nodes(*t, t->doc().text.size() / 2, 8);
        seen.fetch_add(1);
      }
    }
  });
  for (int i = 0; i < 400; ++i) {
    d = type_one(idx, d, rng);
    if (i % 50 == 0) idx.wait_idle();
  }
  idx.wait_idle();
  done.store(true);
  reader.join();
  EXPECT_EQ(reader_problem, "");
  EXPECT_GT(seen.load(), 0);
  EXPECT_EQ(idx.latest(d->uri)->version(), d->version);
}

TEST(SyntaxIndex, DestroyingWhileParsingStopsPromptly) {
  if (!syntax_language_named("javascript")) GTEST_SKIP() << "javascript grammar not built";
  std::string text = "var a = [";
  while (text.size() < (4u << 20)) text += "1, 'x', f(y), ";
  text += "0];\n";
  {
    syntax_index_options opts;
    opts.parse_budget = std::chrono::minutes(10);
    syntax_index idx(opts);
    idx.opened(std::make_shared<const document>("file:///big.js", "javascript", 1, text));
    // Leaves scope while the thread parses: the destructor cancels the parse.
  }
  SUCCEED();
}

}  // namespace
