// Minimal edits between a region and its rewrite (next_edit_diff.h).
#include <gtest/gtest.h>

#include <random>

#include "server/completion/next_edit/next_edit_diff.h"

using namespace qf::server::completion;

TEST(next_edit_diff, equal_texts_give_no_edits) {
  EXPECT_TRUE(diff_region("a\nb\n", "a\nb\n").empty());
  EXPECT_TRUE(diff_region("", "").empty());
}

TEST(next_edit_diff, a_renamed_use_is_one_narrow_edit) {
  const std::string a = "def area(width, h):\n    return w * h\n";
  const std::string b = "def area(width, h):\n    return width * h\n";
  const auto e = diff_region(a, b);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0], (region_edit{a.find("w *") + 1, a.find("w *") + 1, "idth"}));
  EXPECT_EQ(apply_region_edits(a, e), b);
}

TEST(next_edit_diff, separate_changes_are_separate_edits_in_order) {
  const std::string a = "x = 1\nkeep\ny = 2\nkeep too\nz = 3\n";
  const std::string b = "x = 10\nkeep\ny = 2\nkeep too\nz = 30\n";
  const auto e = diff_region(a, b);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0], (region_edit{5, 5, "0"}));
  EXPECT_EQ(e[1], (region_edit{a.size() - 1, a.size() - 1, "0"}));
  EXPECT_EQ(apply_region_edits(a, e), b);
}

TEST(next_edit_diff, inserted_and_deleted_lines) {
  const std::string a = "class P:\n    def __init__(self, x):\n        self.x = x\n";
  const std::string b = "class P:\n    def __init__(self, x, y):\n        self.x = x\n        self.y = y\n";
  const auto e = diff_region(a, b);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].new_text, ", y");
  EXPECT_EQ(e[1].begin, a.size());
  EXPECT_EQ(e[1].new_text, "        self.y = y\n");
  EXPECT_EQ(apply_region_edits(a, e), b);
  const auto back = diff_region(b, a);
  EXPECT_EQ(apply_region_edits(b, back), a);
}

TEST(next_edit_diff, never_splits_a_utf8_character) {
  // "é" (C3 A9) and "è" (C3 A8) share their first byte.
  const std::string a = "caf\xC3\xA9 = 1\n", b = "caf\xC3\xA8 = 1\n";
  const auto e = diff_region(a, b);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0], (region_edit{3, 5, "\xC3\xA8"}));
}

TEST(next_edit_diff, applying_the_edits_gives_the_rewrite_on_random_texts) {
  std::mt19937 rng(7);
  const char* pieces[] = {"a", "b", "\n", " ", "x = 1", "\r\n", "\xC3\xA9", "return", "\n\n"};
  auto random_text = [&] {
    std::string s;
    const int n = static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) s += pieces[rng() % 9];
    return s;
  };
  for (int k = 0; k < 2000; ++k) {
    const std::string a = random_text(), b = random_text();
    const auto e = diff_region(a, b);
    ASSERT_EQ(apply_region_edits(a, e), b) << k;
    size_t at = 0;
    for (const region_edit& x : e) {
      ASSERT_LE(at, x.begin);
      ASSERT_LE(x.begin, x.end);
      ASSERT_LE(x.end, a.size());
      at = x.end;
    }
  }
}
