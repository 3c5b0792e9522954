// Golden prompt layouts per FIM order, and the reuse properties of layouts:
// typing only appends, a new line keeps the layout, edits to the suffix or a
// long middle make a new one, budgets are respected, the window is stable.
#include <gtest/gtest.h>

#include "indexing/recent_chunks.h"
#include "server/completion/prompt/prompt_layout.h"
#include "tests/server/completion/fake_lm.h"

using namespace qf::server::completion;
using qf::test::fake_vocab;

namespace {

const std::string k_doc = "a = 1\nb = 2\nc = 3\nd = 4\n";
const std::string k_uri = "file:///proj/src/a.py";

struct fixture {
  fake_vocab vocab;
  completion_settings s;
  fim_format fmt;
  std::unique_ptr<chunk_tokenizer> tok;
  std::unique_ptr<prompt_builder> pb;
  void init() {
    fmt = detect_fim_format(vocab);
    tok = std::make_unique<chunk_tokenizer>(vocab);
    pb = std::make_unique<prompt_builder>(fmt, *tok, s);
  }
  std::string render(const std::string& text, int64_t line, int64_t col, std::vector<extra_doc> extra = {}) {
    layout st;
    layout_input in{text, line, col, k_uri, std::move(extra)};
    return vocab.render(pb->build(in, st).tokens);
  }
};

void no_repo(fake_vocab& v) {
  v.mutable_specials().fim_rep = -1;
  v.mutable_specials().fim_sep = -1;
}

}  // namespace

TEST(prompt_layout, psm_golden) {
  fixture f;
  no_repo(f.vocab);
  f.init();
  EXPECT_EQ(f.render(k_doc, 2, 2), "<BOS><PRE>a = 1\nb = 2\n<SUF>= 3\nd = 4\n<MID>c ");
}

TEST(prompt_layout, spm_golden) {
  fixture f;
  no_repo(f.vocab);
  f.init();
  f.fmt.order = fim_order::spm;
  EXPECT_EQ(f.render(k_doc, 2, 2), "<BOS><SUF>= 3\nd = 4\n<PRE>a = 1\nb = 2\n<MID>c ");
}

TEST(prompt_layout, prefix_only_without_fim_tokens) {
  fixture f;
  f.vocab.mutable_specials() = lm_specials{};
  f.vocab.mutable_specials().bos = fake_vocab::k_bos;
  for (int32_t id = 300; id < fake_vocab::k_n_vocab; ++id) f.vocab.set_special(id, "<x" + std::to_string(id) + ">");
  f.init();
  ASSERT_FALSE(f.fmt.has_fim);
  EXPECT_EQ(f.render(k_doc, 2, 2), "<x307>a = 1\nb = 2\nc ");
}

TEST(prompt_layout, repo_level_golden_with_other_files) {
  fixture f;
  f.init();
  const std::string b = "x = 1\n", c = "y = 2";
  // Most recently used first in the request; the most recent sits last, nearest the file.
  std::string got = f.render(k_doc, 2, 2, {extra_doc{"file:///proj/src/b.py", b}, extra_doc{"file:///proj/src/c.py", c}});
  EXPECT_EQ(got, "<BOS><REPO>src\n<SEP>c.py\ny = 2\n<SEP>b.py\nx = 1\n<SEP>a.py\n<PRE>a = 1\nb = 2\n<SUF>= 3\nd = 4\n<MID>c ");
}

TEST(prompt_layout, extra_context_respects_budget_and_skips_self) {
  fixture f;
  f.s.extra_tokens = 40;
  f.init();
  std::string big;
  for (int i = 0; i < 50; ++i) big += "line " + std::to_string(i) + "\n";
  layout st;
  layout_input in{k_doc, 2, 2, k_uri, {extra_doc{"file:///proj/src/big.py", big}, extra_doc{k_uri, k_doc}}};
  std::vector<int32_t> blk = f.pb->extra_block(in);
  // Header tokens ("<REPO>src\n", "<SEP>a.py\n") are outside the budget; the file body is within it.
  EXPECT_LE(blk.size(), 40u + 2 + 4 + 6);
  std::string r = f.vocab.render(blk);
  EXPECT_NE(r.find("big.py"), std::string::npos);
  EXPECT_EQ(r.find("<SEP>a.py\na = 1"), std::string::npos);  // the file itself is not extra context
}

TEST(prompt_layout, typing_in_a_line_only_appends) {
  fixture f;
  f.init();
  layout st;
  std::string text = k_doc;
  prompt p0 = f.pb->build({text, 2, 2, k_uri, {}}, st);
  EXPECT_TRUE(p0.relayout);
  int64_t col = 2;
  for (char ch : std::string("+ ret")) {
    text.insert(text.begin() + static_cast<long>(offset_of(text, 2, col)), ch);
    ++col;
    prompt p = f.pb->build({text, 2, col, k_uri, {}}, st);
    EXPECT_FALSE(p.relayout);
    ASSERT_EQ(p.head_len, p0.head_len);
    EXPECT_TRUE(std::equal(p0.tokens.begin(), p0.tokens.begin() + p0.head_len, p.tokens.begin()));
    EXPECT_EQ(p.middle_text, text.substr(offset_of(text, 2, 0), static_cast<size_t>(col)));
  }
}

TEST(prompt_layout, new_line_keeps_the_layout_and_middle_spans_lines) {
  fixture f;
  f.init();
  layout st;
  std::string text = "a = 1\nb = 2\nc\nd = 4\n";
  f.pb->build({text, 2, 1, k_uri, {}}, st);
  text = "a = 1\nb = 2\nc\n  zz\nd = 4\n";
  prompt p = f.pb->build({text, 3, 4, k_uri, {}}, st);
  EXPECT_FALSE(p.relayout);
  EXPECT_EQ(p.middle_text, "c\n  zz");
  EXPECT_EQ(st.anchor_line, 2);
  // A forced re-layout ("rebase") moves the typed line into the prefix.
  layout rebased = st;
  prompt r = f.pb->build({text, 3, 4, k_uri, {}}, rebased, true);
  EXPECT_TRUE(r.relayout);
  EXPECT_EQ(rebased.anchor_line, 3);
  EXPECT_EQ(r.middle_text, "  zz");
  EXPECT_EQ(rebased.window_first_line, st.window_first_line);
}

TEST(prompt_layout, auto_closed_bracket_keeps_the_layout) {
  fixture f;
  f.init();
  layout st;
  f.pb->build({"x = f\ny\n", 0, 5, k_uri, {}}, st);
  prompt p = f.pb->build({"x = f()\ny\n", 0, 6, k_uri, {}}, st);
  EXPECT_FALSE(p.relayout);
}

TEST(prompt_layout, edits_after_the_cursor_or_above_make_a_new_layout) {
  fixture f;
  f.init();
  layout st;
  f.pb->build({k_doc, 2, 2, k_uri, {}}, st);
  EXPECT_TRUE(f.pb->build({"a = 1\nb = 2\nc = 3\nd = 5\n", 2, 2, k_uri, {}}, st).relayout);
  EXPECT_TRUE(f.pb->build({"a = 0\nb = 2\nc = 3\nd = 5\n", 2, 2, k_uri, {}}, st).relayout);
  EXPECT_FALSE(f.pb->build({"a = 0\nb = 2\nc x= 3\nd = 5\n", 2, 3, k_uri, {}}, st).relayout);
  // Moving the cursor right over existing text changes the suffix.
  EXPECT_TRUE(f.pb->build({"a = 0\nb = 2\nc x= 3\nd = 5\n", 2, 4, k_uri, {}}, st).relayout);
  // Cursor above the anchor line.
  EXPECT_TRUE(f.pb->build({"a = 0\nb = 2\nc x= 3\nd = 5\n", 1, 1, k_uri, {}}, st).relayout);
}

TEST(prompt_layout, long_middle_across_lines_forces_a_new_layout) {
  fixture f;
  f.s.middle_max_tokens = 8;
  f.init();
  layout st;
  f.pb->build({"\n\n", 0, 0, k_uri, {}}, st);
  EXPECT_FALSE(f.pb->build({"abcdefg\n\n", 0, 7, k_uri, {}}, st).relayout);
  // A long single line stays: the cursor line always goes last, a new layout would not help.
  EXPECT_FALSE(f.pb->build({"abcdefgxyzxyzxyz\n\n", 0, 16, k_uri, {}}, st).relayout);
  prompt p = f.pb->build({"abcdefg\nhijk\n\n", 1, 4, k_uri, {}}, st);
  EXPECT_TRUE(p.relayout);
  EXPECT_EQ(st.anchor_line, 1);
  EXPECT_EQ(p.middle_text, "hijk");
}

TEST(prompt_layout, budgets_and_a_stable_sliding_window) {
  fixture f;
  no_repo(f.vocab);
  f.s.prefix_tokens = 24;
  f.s.suffix_tokens = 14;
  f.init();
  std::string text;
  for (int i = 0; i < 40; ++i) text.append("L").append(std::to_string(i % 10)).append("xy\n");  // 5 tokens a line
  layout st;
  prompt p = f.pb->build({text, 20, 0, k_uri, {}}, st);
  std::string r = f.vocab.render(p.tokens);
  // 3/4 of 24 = 18 tokens -> 3 whole lines of prefix; 14 tokens -> 2 whole lines of suffix.
  EXPECT_EQ(r, "<BOS><PRE>L7xy\nL8xy\nL9xy\n<SUF>L0xy\nL1xy\n<MID>");
  EXPECT_EQ(st.window_first_line, 17);
  // Moving down keeps the first line while the window fits the budget (4 lines = 20 tokens) ...
  f.pb->build({text, 21, 0, k_uri, {}}, st, true);
  EXPECT_EQ(st.window_first_line, 17);
  // ... then slides to three quarters of it (3 lines).
  f.pb->build({text, 22, 0, k_uri, {}}, st, true);
  EXPECT_EQ(st.window_first_line, 19);
}

TEST(prompt_layout, a_jump_parks_the_layout_and_a_jump_back_takes_it_again) {
  fixture f;
  no_repo(f.vocab);
  f.s.prefix_tokens = 24;
  f.s.suffix_tokens = 14;
  f.s.cache_slots = 2;
  f.init();
  std::string text;
  for (int i = 0; i < 80; ++i) text.append("L").append(std::to_string(i)).append("xy\n");  // every line different
  layout st;
  std::vector<layout> parked;
  const prompt a = f.pb->build({text, 10, 0, k_uri, {}}, st, false, &parked);
  EXPECT_TRUE(a.relayout);
  EXPECT_TRUE(parked.empty());
  // A jump far down: a new layout; the old one is parked.
  const prompt b = f.pb->build({text, 50, 0, k_uri, {}}, st, false, &parked);
  EXPECT_TRUE(b.relayout);
  EXPECT_EQ(st.anchor_line, 50);
  ASSERT_EQ(parked.size(), 1u);
  EXPECT_EQ(parked[0].anchor_line, 10);
  // Back to the first place, typing there: the parked layout is taken again,
  // its head as it was (what the KV cache holds), and the one left is parked.
  text.insert(offset_of(text, 10, 0), "q");
  const prompt back = f.pb->build({text, 10, 1, k_uri, {}}, st, false, &parked);
  EXPECT_TRUE(back.restored);
  EXPECT_FALSE(back.relayout);
  EXPECT_EQ(st.anchor_line, 10);
  EXPECT_EQ(back.head_len, a.head_len);
  EXPECT_TRUE(std::equal(a.tokens.begin(), a.tokens.begin() + a.head_len, back.tokens.begin()));
  EXPECT_EQ(back.middle_text, "q");
  ASSERT_EQ(parked.size(), 1u);
  EXPECT_EQ(parked[0].anchor_line, 50);
  // A region whose text changed is not taken again: the line above line 50 edited.
  text.insert(offset_of(text, 49, 0), "z");
  const prompt edited = f.pb->build({text, 50, 0, k_uri, {}}, st, false, &parked);
  EXPECT_FALSE(edited.restored);
  EXPECT_TRUE(edited.relayout);
  // The parked layout of that region was replaced by the new one there; the first place is parked.
  ASSERT_EQ(parked.size(), 1u);
  EXPECT_EQ(parked[0].anchor_line, 10);
  // At most cacheSlots parked layouts, the oldest dropped first.
  f.pb->build({text, 30, 0, k_uri, {}}, st, false, &parked);
  f.pb->build({text, 70, 0, k_uri, {}}, st, false, &parked);
  ASSERT_EQ(parked.size(), 2u);
  EXPECT_EQ(parked[0].anchor_line, 50);
  EXPECT_EQ(parked[1].anchor_line, 30);
}

TEST(prompt_layout, a_new_layout_in_the_same_region_drops_the_parked_one) {
  fixture f;
  no_repo(f.vocab);
  f.s.prefix_tokens = 24;
  f.s.suffix_tokens = 14;
  f.init();
  std::string text;
  for (int i = 0; i < 40; ++i) text.append("L").append(std::to_string(i)).append("xy\n");
  layout st;
  std::vector<layout> parked;
  f.pb->build({text, 20, 0, k_uri, {}}, st, false, &parked);
  // Two lines further down: a new layout, whose prefix window holds the old anchor.
  const prompt p = f.pb->build({text, 22, 0, k_uri, {}}, st, false, &parked);
  EXPECT_TRUE(p.relayout);
  EXPECT_EQ(st.anchor_line, 22);
  EXPECT_TRUE(parked.empty());
}

TEST(prompt_layout, a_jump_first_gets_a_quick_layout_that_keeps_the_cached_context) {
  fixture f;
  no_repo(f.vocab);
  f.s.prefix_tokens = 40;
  f.s.suffix_tokens = 18;
  f.s.jump_prefix_tokens = 12;  // a third of it, 4 tokens, of suffix
  f.init();
  std::string text;
  for (int i = 0; i < 80; ++i) text.append("L").append(std::to_string(i)).append("xy\n");  // 6 tokens a line from 10 on
  qf::index::recent_chunks ring;
  ring.touch("file:///proj/src/io.py", "def load(path):\n    return path\n", 1);
  layout_input in{text, 20, 0, k_uri, {}};
  in.ctx.recent = &ring;
  layout st;
  std::vector<layout> parked;
  f.pb->build(in, st, false, &parked);
  EXPECT_FALSE(st.quick);  // the first layout of a document is whole
  const layout first = st;
  ASSERT_GT(first.shared_len, 1);  // BOS and the recent chunk of io.py
  // Another place was visited meanwhile: a whole layout now would hold a different context block.
  ring.touch("file:///proj/src/db.py", "def save(row):\n    return row\n", 1);
  in.cursor_line = 60;
  const prompt jump = f.pb->build(in, st, false, &parked);
  EXPECT_TRUE(jump.relayout);
  EXPECT_TRUE(st.quick);
  EXPECT_EQ(st.anchor_line, 60);
  EXPECT_EQ(st.window_first_line, 58);  // 12 tokens: two lines
  EXPECT_EQ(st.suffix_text, "");        // 4 tokens hold no whole line
  // The context the cache holds, token for token.
  ASSERT_EQ(st.shared_len, first.shared_len);
  EXPECT_TRUE(std::equal(first.head.begin(), first.head.begin() + first.shared_len, jump.tokens.begin()));
  EXPECT_EQ(jump.tokens.size(), static_cast<size_t>(first.shared_len) + 1 + 12 + 1 + 1);  // <PRE> prefix <SUF> <MID>
  // Typing there appends as usual.
  text.insert(offset_of(text, 60, 0), "q");
  in.text = text;
  in.cursor_col = 1;
  const prompt typed = f.pb->build(in, st, false, &parked);
  EXPECT_FALSE(typed.relayout);
  EXPECT_TRUE(st.quick);
  // The full layout that follows (the background rebase, a forced relayout) is
  // whole: the window of the full budget (3/4 of 40 = 5 lines) and the context gathered again.
  layout full = st;
  const prompt rebased = f.pb->build(in, full, true);
  EXPECT_FALSE(full.quick);
  EXPECT_EQ(full.window_first_line, 55);
  EXPECT_NE(full.shared_len, first.shared_len);  // db.py's chunk is in the block now
  EXPECT_GT(rebased.tokens.size(), typed.tokens.size());
  // A move within the window's reach is no jump: a whole layout.
  st = full;
  in.cursor_line = 62;
  in.cursor_col = 0;
  f.pb->build(in, st, false, &parked);
  EXPECT_FALSE(st.quick);
  // Without jumpPrefixTokens a jump gets the whole layout at once.
  fixture g;
  no_repo(g.vocab);
  g.s.prefix_tokens = 40;
  g.s.suffix_tokens = 18;
  g.s.jump_prefix_tokens = 0;
  g.init();
  layout st2;
  std::vector<layout> parked2;
  in.cursor_line = 20;
  g.pb->build(in, st2, false, &parked2);
  in.cursor_line = 60;
  g.pb->build(in, st2, false, &parked2);
  EXPECT_FALSE(st2.quick);
  EXPECT_EQ(st2.window_first_line, 55);
}

TEST(prompt_layout, a_parked_layout_is_found_again_after_lines_were_added_above_it) {
  fixture f;
  no_repo(f.vocab);
  f.s.prefix_tokens = 24;
  f.s.suffix_tokens = 14;
  f.init();
  std::string text;
  for (int i = 0; i < 80; ++i) text.append("L").append(std::to_string(i)).append("xy\n");
  layout st;
  std::vector<layout> parked;
  const prompt a = f.pb->build({text, 50, 0, k_uri, {}}, st, false, &parked);
  // Up to the top: two lines added there (say imports).
  text.insert(offset_of(text, 1, 0), "import os\nimport re\n");
  f.pb->build({text, 1, 0, k_uri, {}}, st, false, &parked);
  ASSERT_EQ(parked.size(), 1u);
  // Back to the first place, now two lines further down: the parked layout, moved.
  const prompt back = f.pb->build({text, 52, 0, k_uri, {}}, st, false, &parked);
  EXPECT_TRUE(back.restored);
  EXPECT_EQ(st.anchor_line, 52);
  EXPECT_EQ(back.tokens, a.tokens);
  // Typing there keeps it (the layout left at the top, parked, is not taken back).
  text.insert(offset_of(text, 52, 0), "q");
  const prompt typed = f.pb->build({text, 52, 1, k_uri, {}}, st, false, &parked);
  EXPECT_FALSE(typed.restored);
  EXPECT_FALSE(typed.relayout);
  EXPECT_EQ(st.anchor_line, 52);
  // A parked place whose own text changed is still not taken.
  text.insert(offset_of(text, 51, 0), "z");
  f.pb->build({text, 10, 0, k_uri, {}}, st, false, &parked);
  EXPECT_FALSE(f.pb->build({text, 52, 0, k_uri, {}}, st, false, &parked).restored);
}
