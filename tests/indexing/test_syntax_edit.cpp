// Edits for syntax trees (syntax_edit.h), without tree-sitter: the newline
// index stays equal to a rebuilt one under random edits, and edit_between()
// always describes a replacement that really turns the old text into the new
// one (exact for single ranged changes, the diff otherwise).
#include <gtest/gtest.h>

#include <random>

#include "indexing/syntax_edit.h"
#include "syntax_test_util.h"

using namespace qf::index;
using namespace qf::text;
using namespace qf::test;

namespace {

// `e` turns `before` into `after`: same prefix, same suffix, in range.
void expect_describes(const byte_edit& e, const std::string& before, const std::string& after) {
  ASSERT_LE(e.start, e.old_end);
  ASSERT_LE(e.start, e.new_end);
  ASSERT_LE(e.old_end, before.size());
  ASSERT_LE(e.new_end, after.size());
  EXPECT_EQ(before.substr(0, e.start), after.substr(0, e.start));
  EXPECT_EQ(before.substr(e.old_end), after.substr(e.new_end));
}

TEST(SyntaxEdit, NewlineIndexCountsOnlyLineFeeds) {
  const newline_index idx("ab\ncd\r\nef\rgh");
  EXPECT_EQ(idx.newline_count(), 2u);
  EXPECT_EQ(idx.point_at(0), (text_point{0, 0}));
  EXPECT_EQ(idx.point_at(2), (text_point{0, 2}));  // the "\n" itself ends row 0
  EXPECT_EQ(idx.point_at(3), (text_point{1, 0}));
  EXPECT_EQ(idx.point_at(6), (text_point{1, 3}));  // after "cd\r"
  EXPECT_EQ(idx.point_at(10), (text_point{2, 3}));  // a lone "\r" does not start a row
  EXPECT_EQ(idx.point_at(12), (text_point{2, 5}));
}

TEST(SyntaxEdit, DiffEditFindsTheChangedMiddle) {
  EXPECT_EQ(diff_edit("abcdef", "abXYef"), (byte_edit{2, 4, 4}));
  EXPECT_EQ(diff_edit("abc", "abc"), (byte_edit{3, 3, 3}));
  EXPECT_EQ(diff_edit("", "xyz"), (byte_edit{0, 0, 3}));
  EXPECT_EQ(diff_edit("xyz", ""), (byte_edit{0, 3, 0}));
  // Prefix and suffix never overlap: "aa" -> "aaa" inserts one "a" at the end of the common prefix.
  EXPECT_EQ(diff_edit("aa", "aaa"), (byte_edit{2, 2, 3}));
  // Large texts (block comparison) agree with the byte loop.
  std::string big(100000, 'q');
  std::string big2 = big;
  big2.replace(54321, 3, "hello");
  EXPECT_EQ(diff_edit(big, big2), (byte_edit{54321, 54324, 54326}));
}

TEST(SyntaxEdit, HintOnlyForOneRangedChange) {
  text_change a{text_range{0, 1, 0, 2}, "xyz"};
  text_change whole{std::nullopt, "all"};
  ASSERT_TRUE(hint_of({a}).has_value());
  EXPECT_EQ(hint_of({a})->inserted_bytes, 3u);
  EXPECT_FALSE(hint_of({whole}).has_value());
  EXPECT_FALSE(hint_of({a, a}).has_value());
  EXPECT_FALSE(hint_of({}).has_value());
}

TEST(SyntaxEdit, ExactEditOfOneChangeInUtf16) {
  document before("file:///a.py", "python", 1, "x = 'é😀'\ny = 1\n");
  // Replace the emoji (UTF-16 columns 6..8 of line 0) with "ab".
  const std::vector<text_change> changes{{text_range{0, 6, 0, 8}, "ab"}};
  document after = before;
  std::string error;
  ASSERT_TRUE(after.apply(changes, position_encoding::utf16, &error)) << error;
  const byte_edit e = edit_between(before, after, hint_of(changes), position_encoding::utf16);
  EXPECT_EQ(e, (byte_edit{7, 11, 9}));
  expect_describes(e, before.text, after.text);
}

TEST(SyntaxEdit, InconsistentHintFallsBackToTheDiff) {
  document before("file:///a.py", "python", 1, "abc\ndef\n");
  document after("file:///a.py", "python", 2, "abc\ndXf\n");
  // A hint that does not match what the store did (say it rewrote the text).
  const change_hint wrong{text_range{0, 0, 0, 1}, 5};
  const byte_edit e = edit_between(before, after, wrong, position_encoding::utf16);
  EXPECT_EQ(e, (byte_edit{5, 6, 6}));
}

TEST(SyntaxEdit, RandomEditsKeepIndexAndEditsTrue) {
  std::mt19937 rng(7);
  for (const auto& sample : syntax_samples()) {
    document doc(std::string(sample.uri), std::string(sample.language_id), 1, std::string(sample.source));
    newline_index idx(doc.text);
    for (int step = 0; step < 600; ++step) {
      const auto enc = step % 2 ? position_encoding::utf16 : position_encoding::utf8;
      std::vector<text_change> changes{random_change(doc, rng, enc, sample.source.size() * 2)};
      if (step % 10 == 0) changes.push_back(random_change(doc, rng, enc, sample.source.size() * 2));
      document next = doc;
      std::string error;
      if (!next.apply(changes, enc, &error)) continue;  // the second change may not fit the first's result
      const byte_edit e = edit_between(doc, next, hint_of(changes), enc);
      expect_describes(e, doc.text, next.text);
      idx.apply(e, next.text);
      const newline_index rebuilt(next.text);
      ASSERT_EQ(idx.newline_count(), rebuilt.newline_count()) << sample.grammar << " step " << step;
      for (std::size_t off = 0; off <= next.text.size(); off += 7)
        ASSERT_EQ(idx.point_at(off), rebuilt.point_at(off)) << sample.grammar << " step " << step << " at " << off;
      doc = std::move(next);
    }
  }
}

}  // namespace
