// The document store against a deliberately simple reference: 10,000 random
// incremental edits (astral characters, CRLF, lone CR, positions past line
// ends, a few malformed edits) are applied both by the store, in UTF-16 or
// UTF-8 positions, and by a code-point vector model; the texts must match
// after every edit.
#include <gtest/gtest.h>

#include <random>

#include "indexing/document_store.h"

using namespace qf::index;
using namespace qf::text;

namespace {

// The reference: text as code points; positions resolved by walking.
struct reference_doc {
  std::u32string cps;

  static std::u32string decode(const std::string& s) {
    std::u32string out;
    for (std::size_t i = 0; i < s.size();) {
      unsigned char c = static_cast<unsigned char>(s[i]);
      int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
      char32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
      for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
      out.push_back(cp);
      i += n;
    }
    return out;
  }
  std::string encode() const {
    std::string out;
    for (char32_t cp : cps) {
      if (cp < 0x80) {
        out += char(cp);
      } else if (cp < 0x800) {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
      } else if (cp < 0x10000) {
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
      } else {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
      }
    }
    return out;
  }
  // Lines as [begin, end) code-point index pairs, terminators excluded.
  std::vector<std::pair<std::size_t, std::size_t>> lines() const {
    std::vector<std::pair<std::size_t, std::size_t>> out;
    std::size_t begin = 0;
    for (std::size_t i = 0; i < cps.size(); ++i) {
      if (cps[i] == U'\r' && i + 1 < cps.size() && cps[i + 1] == U'\n') {
        out.emplace_back(begin, i);
        ++i;
        begin = i + 1;
      } else if (cps[i] == U'\n' || cps[i] == U'\r') {
        out.emplace_back(begin, i);
        begin = i + 1;
      }
    }
    out.emplace_back(begin, cps.size());
    return out;
  }
  static std::size_t units(char32_t cp, position_encoding enc) {
    if (enc == position_encoding::utf16) return cp >= 0x10000 ? 2 : 1;
    return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  std::size_t index_of(std::size_t line, std::size_t ch, position_encoding enc) const {
    auto ls = lines();
    auto [b, e] = ls[line];
    std::size_t used = 0;
    std::size_t i = b;
    while (i < e && used + units(cps[i], enc) <= ch) used += units(cps[i++], enc);
    return i;
  }
  std::size_t line_units(std::size_t line, position_encoding enc) const {
    auto [b, e] = lines()[line];
    std::size_t n = 0;
    for (std::size_t i = b; i < e; ++i) n += units(cps[i], enc);
    return n;
  }
};

const std::vector<std::string> pieces = {"a",  "b",   "x",    " ",    "\n",   "\r\n",           "\r",
                                         "\t", "()",  "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xF0\x9D\x84\x9E",
                                         "foo", "bar\n", "\xE4\xB8\xAD\xE6\x96\x87"};

}  // namespace

TEST(DocumentStore, TenThousandRandomEditsMatchReference) {
  std::mt19937 rng(12345);
  document_store store;
  const std::string uri = "file:///random.txt";
  const std::string initial = "int main() {\r\n  return 0; \xF0\x9F\x98\x80\n}\n";
  store.open(uri, "cpp", 1, initial);
  reference_doc ref{reference_doc::decode(initial)};
  std::size_t rejected = 0;

  for (int step = 0; step < 10000; ++step) {
    const position_encoding enc = rng() % 3 == 0 ? position_encoding::utf8 : position_encoding::utf16;
    auto ls = ref.lines();
    auto pick = [&](std::size_t& line, std::size_t& ch) {
      line = rng() % ls.size();
      const std::size_t n = ref.line_units(line, enc);
      // Mostly valid columns, sometimes past the end of the line (clamps).
      ch = rng() % 8 == 0 ? n + rng() % 5 : rng() % (n + 1);
    };
    std::size_t l1, c1, l2, c2;
    pick(l1, c1);
    pick(l2, c2);
    if (std::make_pair(l2, c2) < std::make_pair(l1, c1)) {
      std::swap(l1, l2);
      std::swap(c1, c2);
    }
    // Keep the document from growing without bound: short deletions mostly.
    if (ref.cps.size() > 400 && rng() % 2 == 0) {
      l2 = l1;
      c2 = c1 + rng() % 6;
    }
    std::string insert;
    const int count = rng() % 4;
    for (int k = 0; k < count; ++k) insert += pieces[rng() % pieces.size()];

    text_change change;
    change.text = insert;
    change.range = text_range{static_cast<std::uint32_t>(l1), static_cast<std::uint32_t>(c1),
                              static_cast<std::uint32_t>(l2), static_cast<std::uint32_t>(c2)};
    const int kind = rng() % 50;
    bool expect_ok = true;
    if (kind == 0) {  // a line past the end
      change.range->start_line = change.range->end_line = static_cast<std::uint32_t>(ls.size() + rng() % 3);
      expect_ok = false;
    } else if (kind == 1 && (l1 != l2 || c1 != c2)) {  // start after end
      std::swap(change.range->start_line, change.range->end_line);
      std::swap(change.range->start_character, change.range->end_character);
      expect_ok = false;
    }

    std::string err;
    const bool ok = store.change(uri, step + 2, {change}, enc, &err);
    ASSERT_EQ(ok, expect_ok) << "step " << step << ": " << err;
    if (ok) {
      const std::size_t b = ref.index_of(l1, c1, enc);
      const std::size_t e = ref.index_of(l2, c2, enc);
      ASSERT_LE(b, e);
      ref.cps.replace(b, e - b, reference_doc::decode(insert));
    } else {
      ++rejected;
    }
    auto doc = store.get(uri);
    ASSERT_EQ(doc->text, ref.encode()) << "step " << step;
    ASSERT_EQ(doc->lines.line_count(), ref.lines().size()) << "step " << step;
  }
  EXPECT_GT(rejected, 0u);
}

TEST(DocumentStore, SnapshotsAreImmutableAndRecentIsMru) {
  document_store store;
  store.open("a", "c", 1, "aaa");
  store.open("b", "c", 1, "bbb");
  store.open("c", "c", 1, "ccc");
  auto snap = store.get("a");
  std::string err;
  ASSERT_TRUE(store.change("a", 2, {{std::nullopt, "AAA"}}, position_encoding::utf16, &err));
  EXPECT_EQ(snap->text, "aaa");
  EXPECT_EQ(store.get("a")->text, "AAA");
  EXPECT_EQ(store.get("a")->version, 2);
  store.touch("b");
  auto recent = store.recent("c", 10);
  ASSERT_EQ(recent.size(), 2u);
  EXPECT_EQ(recent[0]->uri, "b");
  EXPECT_EQ(recent[1]->uri, "a");
  EXPECT_FALSE(store.change("zzz", 1, {{std::nullopt, "x"}}, position_encoding::utf16, &err));
  EXPECT_TRUE(store.close("a"));
  EXPECT_EQ(store.get("a"), nullptr);
  EXPECT_EQ(store.recent("", 10).size(), 2u);
}
