// pipeline::explain() on the scripted model: the parts cover the prompt that
// complete() builds (texts concatenate to it, token counts add up), are cut
// at the right places per format, and explaining changes no pipeline state.
#include <gtest/gtest.h>

#include "server/completion/pipeline/pipeline.h"
#include "server/completion/prompt/prompt_layout.h"
#include "tests/server/completion/fake_lm.h"

using namespace qf::server;
using namespace qf::server::completion;
using qf::test::fake_backend;
using qf::test::fake_vocab;

namespace {

const std::string k_uri = "file:///w/src/main.py";
const std::string k_text = "import os\n\ndef f(self, x):\n    return self.g(x)\n\ndef main():\n    total = 0\n    \n    print(total)\n";
constexpr int64_t k_line = 7;

completion_request request(const std::string& text, int64_t line, int64_t col,
                           std::vector<std::pair<std::string, std::string>> others = {}) {
  completion_request r;
  r.uri = k_uri;
  r.text = text;
  r.cursor = {line, col};
  r.explicit_trigger = true;
  r.received = clock::now();
  for (auto& [u, t] : others) r.context_docs.push_back({u, t});
  return r;
}

enum class vocab_kind { repo_level, fim_only, no_fim };

struct fixture {
  fake_backend* be = nullptr;
  std::shared_ptr<qf::test::fake_stats> stats;
  std::unique_ptr<pipeline> p;
  explicit fixture(vocab_kind k, completion_settings s = completion_settings{.type_through = false}) {
    auto b = std::make_unique<fake_backend>();
    lm_specials& sp = b->mutable_vocab().mutable_specials();
    if (k != vocab_kind::repo_level) sp.fim_rep = sp.fim_sep = -1;
    if (k == vocab_kind::no_fim) sp.fim_pre = sp.fim_suf = sp.fim_mid = -1;
    be = b.get();
    stats = b->stats;
    p = std::make_unique<pipeline>(std::move(b), s);
  }
  // The prompt a fresh layout gives, rendered with special tokens spelled out.
  std::string reference(const completion_request& r) {
    chunk_tokenizer tok(be->vocab());
    prompt_builder pb(p->format(), tok, p->settings());
    std::vector<extra_doc> extra;
    for (const auto& d : r.context_docs) extra.push_back({d.uri, d.text});
    layout_input in{r.text, r.cursor.line, r.cursor.byte_col, r.uri, extra};
    layout st;
    const prompt pr = pb.build(in, st);
    reference_tokens = static_cast<int64_t>(pr.tokens.size());
    return be->mutable_vocab().render(pr.tokens);
  }
  int64_t reference_tokens = 0;
};

void expect_consistent(const prompt_explanation& e) {
  std::string joined;
  int64_t tokens = 0;
  for (const prompt_part& part : e.parts) {
    EXPECT_GT(part.tokens, 0) << part.kind;
    joined += part.text;
    tokens += part.tokens;
  }
  EXPECT_EQ(joined, e.text);
  EXPECT_EQ(tokens, e.tokens);
}

std::vector<std::string> kinds(const prompt_explanation& e) {
  std::vector<std::string> k;
  for (const prompt_part& part : e.parts) k.push_back(part.kind + (part.origin.empty() ? "" : "@" + part.origin));
  return k;
}

}  // namespace

TEST(explain, repo_level_parts_in_prompt_order) {
  fixture f(vocab_kind::repo_level);
  const completion_request r =
      request(k_text, k_line, 4, {{"file:///w/src/util.py", "def helper():\n    pass\n"}, {"file:///w/src/b.py", "X = 1\n"}});
  const std::optional<prompt_explanation> e = f.p->explain(r);
  ASSERT_TRUE(e);
  expect_consistent(*e);
  EXPECT_EQ(e->format, f.p->format().family);
  EXPECT_EQ(e->text, f.reference(r));
  EXPECT_EQ(e->tokens, f.reference_tokens);
  // Most recently used (util.py) last, closest to the current file.
  const std::vector<std::string> want = {
      "special", "special", "file", "special", "file@file:///w/src/b.py", "special",
      "file@file:///w/src/util.py", "special", "file@" + k_uri, "special", "prefix@" + k_uri + ":1", "special",
      "suffix@" + k_uri + ":" + std::to_string(k_line + 1), "special", "middle@" + k_uri + ":" + std::to_string(k_line + 1)};
  EXPECT_EQ(kinds(*e), want);
  EXPECT_EQ(e->parts[0].text, "<BOS>");
  EXPECT_EQ(e->parts[1].text, "<REPO>");
  EXPECT_EQ(e->parts[4].text, "b.py\nX = 1\n");
  EXPECT_EQ(e->parts[6].text, "util.py\ndef helper():\n    pass\n");
  EXPECT_EQ(e->parts[8].text, "main.py\n");
  EXPECT_EQ(e->parts[10].text, "import os\n\ndef f(self, x):\n    return self.g(x)\n\ndef main():\n    total = 0\n");
  EXPECT_EQ(e->parts[12].text, "\n    print(total)\n");
  EXPECT_EQ(e->parts[13].text, "<MID>");
}

TEST(explain, middle_after_typing_and_no_state_change) {
  fixture f(vocab_kind::repo_level);
  std::string text = k_text;
  f.p->complete(request(text, k_line, 4), {});
  const layout before = *f.p->layout_of(k_uri);
  const int64_t evaluated = f.stats->evaluated;
  const int slots = f.p->pool().n_slots();
  text.insert(offset_of(text, k_line, 4), "ret");
  const std::optional<prompt_explanation> e = f.p->explain(request(text, k_line, 7));
  ASSERT_TRUE(e);
  expect_consistent(*e);
  // The kept layout: the middle holds what was typed since the layout was made.
  ASSERT_FALSE(e->parts.empty());
  EXPECT_EQ(e->parts.back().kind, "middle");
  EXPECT_EQ(e->parts.back().text, "    ret");
  // Nothing evaluated, the layout and the slots as they were.
  EXPECT_EQ(f.stats->evaluated, evaluated);
  EXPECT_EQ(f.p->pool().n_slots(), slots);
  EXPECT_EQ(f.p->layout_of(k_uri)->head, before.head);
  EXPECT_EQ(f.p->layout_of(k_uri)->anchor_line, before.anchor_line);
  // An unopened document gets no layout either.
  ASSERT_TRUE(f.p->explain(request(text, 0, 0)));
  completion_request other = request(text, 0, 0);
  other.uri = "file:///w/src/other.py";
  ASSERT_TRUE(f.p->explain(other));
  EXPECT_EQ(f.p->layout_of(other.uri), nullptr);
}

TEST(explain, kept_layout_shows_the_block_the_head_holds) {
  fixture f(vocab_kind::repo_level);
  f.p->complete(request(k_text, k_line, 4, {{"file:///w/src/util.py", "def helper():\n    pass\n"}}), {});
  // Another file is now the most recent; the layout is still valid, so the
  // head (and what the model sees) still holds util.py.
  const std::optional<prompt_explanation> e =
      f.p->explain(request(k_text, k_line, 4, {{"file:///w/src/b.py", "X = 1\n"}, {"file:///w/src/util.py", "def helper():\n    pass\n"}}));
  ASSERT_TRUE(e);
  expect_consistent(*e);
  EXPECT_NE(e->text.find("def helper()"), std::string::npos);
  EXPECT_EQ(e->text.find("X = 1"), std::string::npos);
  bool util = false;
  for (const prompt_part& part : e->parts) util = util || (part.kind == "file" && part.origin == "file:///w/src/util.py");
  EXPECT_TRUE(util);
}

TEST(explain, fim_without_repo_markers_cuts_files_by_size) {
  fixture f(vocab_kind::fim_only);
  const completion_request r =
      request(k_text, k_line, 4, {{"file:///w/src/util.py", "def helper():\n    pass\n"}, {"file:///w/src/b.py", "X = 1\n"}});
  const std::optional<prompt_explanation> e = f.p->explain(r);
  ASSERT_TRUE(e);
  expect_consistent(*e);
  EXPECT_EQ(e->text, f.reference(r));
  const std::vector<std::string> want = {"special", "file@file:///w/src/b.py", "file@file:///w/src/util.py",
                                         "special", "prefix@" + k_uri + ":1",      "special",
                                         "suffix@" + k_uri + ":" + std::to_string(k_line + 1), "special",      "middle@" + k_uri + ":" + std::to_string(k_line + 1)};
  EXPECT_EQ(kinds(*e), want);
  EXPECT_EQ(e->parts[1].text, "X = 1\n");
  EXPECT_EQ(e->parts[2].text, "def helper():\n    pass\n");
}

TEST(explain, prefix_only_model) {
  fixture f(vocab_kind::no_fim);
  const completion_request r = request(k_text, k_line, 4, {{"file:///w/src/b.py", "X = 1\n"}});
  const std::optional<prompt_explanation> e = f.p->explain(r);
  ASSERT_TRUE(e);
  expect_consistent(*e);
  EXPECT_EQ(e->text, f.reference(r));
  const std::vector<std::string> want = {"special", "file@file:///w/src/b.py", "prefix@" + k_uri + ":1", "middle@" + k_uri + ":" + std::to_string(k_line + 1)};
  EXPECT_EQ(kinds(*e), want);
  EXPECT_EQ(e->parts.back().text, "    ");
}
