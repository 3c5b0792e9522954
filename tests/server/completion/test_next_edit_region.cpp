// Regions of next-edit prediction (next_edit_region.h).
#include <gtest/gtest.h>

#include "server/completion/next_edit/next_edit_region.h"

using namespace qf::server::completion;

namespace {

std::string numbered(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += "line " + std::to_string(i) + "\n";
  return s;
}

}  // namespace

TEST(next_edit_region, centred_on_the_cursor_and_clamped) {
  const std::string t = numbered(40);
  text_region r = region_around(t, 20, 21, 3);
  EXPECT_EQ(r.first_line, 10);
  EXPECT_EQ(r.last_line, 30);
  EXPECT_EQ(t.substr(r.begin, 7), "line 10");
  EXPECT_EQ(t.substr(r.end - 7, 8), "line 30\n");  // ends before the break
  EXPECT_EQ(t.substr(r.context_begin, 6), "line 7");
  r = region_around(t, 1, 21, 3);
  EXPECT_EQ(r.first_line, 0);
  EXPECT_EQ(r.last_line, 20);
  EXPECT_EQ(r.context_begin, 0u);
  r = region_around(t, 39, 21, 3);
  EXPECT_EQ(r.last_line, 40);  // the empty last line after the final break
  EXPECT_EQ(r.first_line, 20);
  EXPECT_EQ(r.end, t.size());
}

TEST(next_edit_region, before_the_edit_restores_the_old_lines) {
  const std::string t = "a\nb2\nc\n";
  qf::index::edit_hunk h;
  h.uri = "file:///x";
  h.line = 1;
  h.old_lines = {"b"};
  h.new_lines = {"b2"};
  const text_region r = region_around(t, 1, 3, 0);
  EXPECT_EQ(region_before_edit(t, r, &h), "a\nb\nc");
  EXPECT_EQ(region_before_edit(t, r, nullptr), "a\nb2\nc");
  h.line = 10;  // outside the region: as it is
  EXPECT_EQ(region_before_edit(t, r, &h), "a\nb2\nc");
}

TEST(next_edit_region, the_second_place_uses_a_word_the_edit_removed) {
  std::string t = "def area(width, h):\n";
  for (int i = 0; i < 30; ++i) t += "    pass\n";
  t += "    return w * h\n";
  qf::index::edit_hunk h;
  h.line = 0;
  h.old_lines = {"def area(w, h):"};
  h.new_lines = {"def area(width, h):"};
  const text_region first = region_around(t, 0, 5, 0);
  const auto sp = find_second_place(t, first, h, 0);
  ASSERT_TRUE(sp);
  EXPECT_EQ(sp->line, 31);
  EXPECT_EQ(t.substr(sp->offset, 5), "w * h");
  // Nothing removed (only added): no second place.
  h.old_lines = {"def area(width, h):"};
  EXPECT_FALSE(find_second_place(t, first, h, 0));
}
