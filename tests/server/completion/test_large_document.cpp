// Very large documents: a keystroke in a 10 MiB file (one single line, or
// many lines) hands the tokenizer a bounded number of bytes and keeps the
// chunk cache bounded; the chunk cache respects its byte bound.
#include <gtest/gtest.h>

#include <string>

#include "server/completion/pipeline/pipeline.h"
#include "server/completion/prompt/text_rows.h"
#include "tests/server/completion/fake_lm.h"

using namespace qf::server;
using namespace qf::server::completion;
using qf::test::fake_backend;
using qf::test::fake_vocab;

namespace {

constexpr size_t k_mib = size_t(1) << 20;

// Code-like text; line_len 0: one single line.
std::string big_text(size_t bytes, size_t line_len) {
  std::string s;
  s.reserve(bytes + 64);
  size_t line_start = 0;
  for (unsigned i = 0; s.size() < bytes; ++i) {
    s += 'v';
    s += std::to_string(i);
    s += "=f(v";
    s += std::to_string(i / 3);
    s += ");";
    if (line_len && s.size() - line_start >= line_len) {
      s += '\n';
      line_start = s.size();
    }
  }
  return s;
}

struct typist {
  std::unique_ptr<pipeline> p;
  std::string text;
  int64_t line = 0, col = 0;  // the cursor
  size_t off = 0;
  typist(std::string t, int64_t l, int64_t c, size_t o) : text(std::move(t)), line(l), col(c), off(o) {
    // Automatic triggers mid-word too, so that every keystroke builds a prompt.
    p = std::make_unique<pipeline>(std::make_unique<fake_backend>(),
                                   completion_settings{.max_tokens_auto = 4, .max_tokens_explicit = 4, .auto_trigger_mid_word = true, .type_through = false});
  }
  // Types one character and asks for a completion; returns the bytes handed to the tokenizer.
  int64_t key(char c, completion_result* out = nullptr) {
    text.insert(off, 1, c);
    ++off;
    ++col;
    completion_request r;
    r.uri = "file:///big.js";
    r.text = text;
    r.cursor = {line, col};
    const int64_t before = p->tokenizer().encoded_bytes();
    completion_result res = p->complete(r, {});
    if (out) *out = res;
    return p->tokenizer().encoded_bytes() - before;
  }
};

void type_into(typist& t, const char* what) {
  // The first keystroke makes the layout: bounded by the row window.
  const int64_t first = t.key('x');
  EXPECT_GT(first, 0);
  EXPECT_LE(first, 1024 * static_cast<int64_t>(k_row_bytes)) << what;
  // Then each keystroke re-tokenizes the cursor row's text before the cursor,
  // and now and then a row or a new layout: never anything like the document.
  int64_t most = 0;
  for (int i = 0; i < 300; ++i) most = std::max(most, t.key("abc=(1);"[i % 8]));
  EXPECT_LE(most, 1024 * static_cast<int64_t>(k_row_bytes)) << what;
  EXPECT_LE(t.p->tokenizer().bytes(), t.p->tokenizer().max_bytes());
}

}  // namespace

TEST(large_document, keystrokes_at_the_end_of_a_10_mib_line_tokenize_a_bounded_window) {
  std::string text = big_text(10 * k_mib, 0);
  const size_t n = text.size();
  typist t(std::move(text), 0, static_cast<int64_t>(n), n);
  type_into(t, "end of a single line");
  // The answer's range is at the cursor's real column.
  completion_result res;
  t.key('g', &res);
  for (const auto& c : res.items) {
    EXPECT_EQ(c.replace_end.line, 0);
    EXPECT_EQ(c.replace_end.byte_col, t.col);
    EXPECT_LE(c.replace_begin.byte_col, t.col);
  }
}

TEST(large_document, keystrokes_in_the_middle_of_a_10_mib_line_tokenize_a_bounded_window) {
  std::string text = big_text(10 * k_mib, 0);
  const size_t mid = text.find(';', text.size() / 2) + 1;
  typist t(std::move(text), 0, static_cast<int64_t>(mid), mid);
  type_into(t, "middle of a single line");
}

TEST(large_document, keystrokes_in_a_10_mib_file_of_many_lines_tokenize_a_bounded_window) {
  std::string text = big_text(10 * k_mib, 60);
  const size_t at = text.find('\n', text.size() / 2);
  const int64_t line = std::count(text.begin(), text.begin() + static_cast<long>(at), '\n');
  const int64_t col = static_cast<int64_t>(at - (text.rfind('\n', at - 1) + 1));
  typist t(std::move(text), line, col, at);
  type_into(t, "many lines");
}

TEST(large_document, a_10_mib_other_document_adds_a_bounded_window_too) {
  const std::string other = big_text(10 * k_mib, 0);
  std::string text = "x = 1\n";
  auto p = std::make_unique<pipeline>(std::make_unique<fake_backend>(), completion_settings{.type_through = false});
  completion_request r;
  r.uri = "file:///a.py";
  r.text = text;
  r.cursor = {1, 0};
  r.context_docs.push_back({"file:///min.js", other});
  p->complete(r, {});
  EXPECT_LE(p->tokenizer().encoded_bytes(), 64 * static_cast<int64_t>(k_row_bytes));
}

TEST(chunk_tokenizer, stays_within_its_byte_bound_and_keeps_the_most_recent) {
  fake_vocab vocab;
  const size_t bound = 8192;
  chunk_tokenizer tok(vocab, 100000, bound);
  for (int i = 0; i < 2000; ++i) {
    const std::string chunk = "line number " + std::to_string(i) + " with some text\n";
    EXPECT_EQ(tok.tokens(chunk), vocab.encode(chunk));
    ASSERT_LE(tok.bytes(), bound) << i;
  }
  EXPECT_GT(tok.entries(), 16u);
  EXPECT_LT(tok.entries(), 2000u);
  // The most recent chunk is still cached; the first ones are gone.
  const int64_t misses = tok.misses();
  tok.tokens("line number 1999 with some text\n");
  EXPECT_EQ(tok.misses(), misses);
  tok.tokens("line number 0 with some text\n");
  EXPECT_EQ(tok.misses(), misses + 1);
}

TEST(chunk_tokenizer, a_chunk_larger_than_the_bound_is_tokenized_but_not_cached) {
  fake_vocab vocab;
  chunk_tokenizer tok(vocab, 100, 4096);
  tok.tokens("small\n");
  const std::string huge(10000, 'q');
  EXPECT_EQ(tok.tokens(huge), vocab.encode(huge));
  EXPECT_EQ(tok.entries(), 1u);
  EXPECT_LE(tok.bytes(), 4096u);
  const int64_t misses = tok.misses();
  tok.tokens("small\n");
  EXPECT_EQ(tok.misses(), misses);  // the small one survived
}

TEST(chunk_tokenizer, entry_bound_still_holds) {
  fake_vocab vocab;
  chunk_tokenizer tok(vocab, 32, size_t(1) << 30);
  for (int i = 0; i < 500; ++i) tok.tokens(std::to_string(i));
  EXPECT_EQ(tok.entries(), 32u);
}
