// UTF-8 validity, repair and truncation at character boundaries, and the one
// line-break definition ("\r\n", "\n", lone "\r") shared by every component.
#include <gtest/gtest.h>

#include "indexing/document_store.h"
#include "indexing/lines.h"
#include "indexing/shared_text.h"
#include "indexing/utf8.h"

using namespace qf::index;

TEST(Utf8, ValidityIsStrict) {
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xFF"));
  EXPECT_FALSE(is_valid_utf8("\xC3"));              // cut off
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));      // a surrogate
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_EQ(first_invalid_utf8("ab\xE2\x82"), 2u);
}

TEST(Utf8, RepairReplacesEachBadByte) {
  EXPECT_EQ(repair_utf8("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(repair_utf8("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  std::string s = "ok \xC3\xA9";
  EXPECT_FALSE(repair_utf8_in_place(s));
  EXPECT_EQ(s, "ok \xC3\xA9");
}

TEST(Utf8, TruncationNeverSplitsACharacter) {
  const std::string s = "ab\xE2\x82\xAC" "cd\xF0\x9F\x98\x80";  // a b EURO c d GRINNING
  for (std::size_t n = 0; n <= s.size() + 2; ++n) {
    const std::string_view p = utf8_prefix(s, n);
    EXPECT_LE(p.size(), n);
    EXPECT_TRUE(is_valid_utf8(p)) << n;
  }
  EXPECT_EQ(utf8_prefix(s, 3), "ab");
  EXPECT_EQ(utf8_prefix(s, 5), "ab\xE2\x82\xAC");
  EXPECT_EQ(utf8_prefix(s, 10), "ab\xE2\x82\xAC" "cd");
  EXPECT_EQ(utf8_shorten(s, 8), "ab\xE2\x82\xAC...");
  EXPECT_EQ(utf8_shorten(s, 7), "ab...");
  EXPECT_EQ(utf8_shorten("short", 8), "short");
  // Invalid bytes are characters of their own: cutting after one is fine.
  EXPECT_EQ(utf8_prefix("a\x80\x80\x80\x80" "b", 3), "a\x80\x80");
}

TEST(Utf8, PartialTailIsDropped) {
  EXPECT_EQ(without_partial_tail("ab\xE2\x82"), "ab");
  EXPECT_EQ(without_partial_tail("ab\xF0"), "ab");
  EXPECT_EQ(without_partial_tail("ab\xE2\x82\xAC"), "ab\xE2\x82\xAC");
  EXPECT_EQ(without_partial_tail("ab\xFF"), "ab\xFF");  // not a beginning: left for repair
  EXPECT_EQ(without_partial_tail(""), "");
}

TEST(Lines, AllThreeTerminatorsAgree) {
  const std::string_view text = "a\r\nb\rc\nd";
  const std::vector<std::string_view> lines = split_lines(text);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "a\r\n");
  EXPECT_EQ(lines[1], "b\r");
  EXPECT_EQ(lines[2], "c\n");
  EXPECT_EQ(lines[3], "d");
  EXPECT_EQ(strip_line_break(lines[0]), "a");
  EXPECT_EQ(strip_line_break(lines[1]), "b");
  // The line table of the document store sees the same lines.
  const line_table table(text);
  ASSERT_EQ(table.line_count(), lines.size());
  std::size_t start = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(table.line_start(i), start) << i;
    EXPECT_EQ(table.line_end(i) - table.line_start(i), strip_line_break(lines[i]).size()) << i;
    EXPECT_EQ(line_start_offset(text, static_cast<std::int64_t>(i)), start) << i;
    start += lines[i].size();
  }
  EXPECT_EQ(offset_of_line_col(text, 1, 99), 4u);  // clamps before the "\r"
  EXPECT_EQ(offset_of_line_col(text, 2, 1), 6u);
  EXPECT_EQ(offset_of_line_col(text, 9, 0), text.size());
  EXPECT_EQ(line_col_of_offset(text, 6).line, 2);
  EXPECT_EQ(line_col_of_offset(text, 6).col, 1);
  EXPECT_EQ(line_col_of_offset(text, 7).line, 3);
  EXPECT_EQ(line_col_of_offset(text, 2).line, 0);  // inside "\r\n": the line it ends
  EXPECT_EQ(first_line_ending(text), "\r\n");
  EXPECT_EQ(first_line_ending("x\ry"), "\r");
  EXPECT_EQ(first_line_ending("none"), "\n");
  EXPECT_EQ(split_lines("").size(), 1u);
  EXPECT_EQ(split_lines("x\n").size(), 2u);
}

TEST(DocumentStoreSync, FailedChangeMakesTheDocumentStaleUntilAFullText) {
  document_store store;
  store.open("u", "c", 1, "one\ntwo");
  std::string err;
  text_change bad{text_range{7, 0, 7, 0}, "x"};
  EXPECT_FALSE(store.change("u", 2, {bad}, position_encoding::utf16, &err));
  EXPECT_EQ(store.lookup("u").state, doc_state::stale);
  EXPECT_NE(store.lookup("u").reason.find("line 7 is past the last line"), std::string::npos);
  EXPECT_EQ(store.get("u")->text, "one\ntwo");  // the last good text is kept
  EXPECT_TRUE(store.recent("", 10).empty());   // and never used as context
  // Incremental edits still apply but do not bring it back.
  EXPECT_TRUE(store.change("u", 3, {{text_range{0, 0, 0, 0}, ">"}}, position_encoding::utf16, &err));
  EXPECT_EQ(store.lookup("u").state, doc_state::stale);
  // A batch with a full text does, from that change on.
  EXPECT_TRUE(store.change("u", 4, {bad, {std::nullopt, "new"}, {text_range{0, 3, 0, 3}, "!"}},
                           position_encoding::utf16, &err))
      << err;
  EXPECT_EQ(store.lookup("u").state, doc_state::open);
  EXPECT_EQ(store.get("u")->text, "new!");
  EXPECT_EQ(store.get("u")->version, 4);
}

TEST(DocumentStoreSync, VersionThatIsNotGreaterMarksStale) {
  document_store store;
  store.open("u", "c", 5, "abc");
  std::string err;
  EXPECT_FALSE(store.change("u", 5, {{text_range{0, 0, 0, 0}, "x"}}, position_encoding::utf16, &err));
  EXPECT_NE(err.find("version 5 is not greater than the stored version 5"), std::string::npos) << err;
  EXPECT_EQ(store.get("u")->text, "abc");
  EXPECT_EQ(store.lookup("u").state, doc_state::stale);
  // A full text is accepted whatever its version.
  EXPECT_TRUE(store.change("u", 3, {{std::nullopt, "xyz"}}, position_encoding::utf16, &err));
  EXPECT_EQ(store.lookup("u").state, doc_state::open);
  store.open("u", "c", 1, "reopened");
  EXPECT_TRUE(store.mark_stale("u", "lost"));
  store.open("u", "c", 1, "again");
  EXPECT_EQ(store.lookup("u").state, doc_state::open);
}

TEST(DocumentStoreSync, LimitsRefuseDocumentsWhichAreThenNotTracked) {
  document_store store(store_limits{2, 10});
  std::string err;
  EXPECT_TRUE(store.open("a", "c", 1, "aaaa", &err));
  EXPECT_TRUE(store.open("b", "c", 1, "bbbb", &err));
  EXPECT_FALSE(store.open("c", "c", 1, "c", &err));
  EXPECT_NE(err.find("over the limit of 2"), std::string::npos) << err;
  EXPECT_EQ(store.lookup("c").state, doc_state::not_tracked);
  EXPECT_EQ(store.get("c"), nullptr);
  EXPECT_FALSE(store.change("c", 2, {{std::nullopt, "x"}}, position_encoding::utf16, &err));
  EXPECT_NE(err.find("not tracked"), std::string::npos) << err;
  // Re-opening an open document replaces it (no extra count), bytes are checked.
  EXPECT_TRUE(store.open("b", "c", 2, "bbbbbb", &err));
  EXPECT_EQ(store.total_bytes(), 10u);
  // A change past the byte limit stops tracking the document.
  EXPECT_FALSE(store.change("a", 2, {{text_range{0, 0, 0, 0}, "x"}}, position_encoding::utf16, &err));
  EXPECT_EQ(store.lookup("a").state, doc_state::not_tracked);
  EXPECT_EQ(store.total_bytes(), 6u);
  EXPECT_TRUE(store.close("c"));
  EXPECT_EQ(store.lookup("c").state, doc_state::not_open);
  EXPECT_TRUE(store.open("c", "c", 1, "c", &err)) << err;
  EXPECT_EQ(store.size(), 2u);
}

TEST(SharedText, RequestsShareTheSnapshotText) {
  document_store store;
  store.open("u", "c", 1, "shared body");
  const document_store::snapshot snap = store.get("u");
  const shared_text t(snap);
  EXPECT_EQ(t.view().data(), snap->text.data());  // no copy
  EXPECT_TRUE(t.shares(shared_text(snap)));
  store.close("u");
  EXPECT_EQ(t.view(), "shared body");  // kept alive by the request
  const shared_text owned = std::string("own");
  EXPECT_EQ(owned.view(), "own");
  EXPECT_FALSE(owned.shares(shared_text(std::string("own"))));
}
