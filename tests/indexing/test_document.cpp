// Documents: incremental edits in UTF-16 positions, and a malformed batch
// of edits that leaves the text unchanged (the conversions themselves are
// tests/text/test_position.cpp).
#include <gtest/gtest.h>

#include "indexing/document.h"

using namespace qf::index;
using qf::text::position_encoding;

TEST(Document, IncrementalEditsInUtf16) {
  document d("file:///x", "c", 1, "int \xF0\x9F\x98\x80 = 1;\r\nnext");
  std::string err;
  // Replace the emoji (UTF-16 columns 4..6) with "x".
  ASSERT_TRUE(d.apply({{text_range{0, 4, 0, 6}, "x"}}, position_encoding::utf16, &err)) << err;
  EXPECT_EQ(d.text, "int x = 1;\r\nnext");
  // Join the lines by deleting from past the end of line 0 to the start of line 1.
  ASSERT_TRUE(d.apply({{text_range{0, 100, 1, 0}, " "}}, position_encoding::utf16, &err)) << err;
  EXPECT_EQ(d.text, "int x = 1; next");
  ASSERT_TRUE(d.apply({{std::nullopt, "fresh"}}, position_encoding::utf16, &err));
  EXPECT_EQ(d.text, "fresh");
  EXPECT_EQ(d.lines.line_count(), 1u);
}

TEST(Document, MalformedBatchLeavesTextUnchanged) {
  document d("file:///x", "c", 1, "one\ntwo\n");
  std::string err;
  // The first edit is fine, the second starts after its end: nothing is applied.
  EXPECT_FALSE(d.apply({{text_range{0, 0, 0, 0}, "X"}, {text_range{1, 2, 1, 1}, "Y"}}, position_encoding::utf16, &err));
  EXPECT_NE(err.find("change 1"), std::string::npos) << err;
  EXPECT_EQ(d.text, "one\ntwo\n");
  EXPECT_FALSE(d.apply({{text_range{7, 0, 7, 0}, "Z"}}, position_encoding::utf16, &err));
  EXPECT_NE(err.find("past the last line"), std::string::npos) << err;
  EXPECT_EQ(d.text, "one\ntwo\n");
  EXPECT_EQ(d.lines.line_count(), 3u);
}
