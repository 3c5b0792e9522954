// Unicode lookups and the GPT-2 byte map (see unicode.h).
#include "inference/tokenizer/unicode.h"

#include <algorithm>
#include <array>
#include <memory>

#include "text/utf8.h"

namespace qf::infer::unicode {

namespace {

uint8_t flags_by_search(uint32_t cp) {
  const detail::range_entry* b = detail::k_ranges;
  const detail::range_entry* e = detail::k_ranges + detail::k_n_ranges;
  auto it = std::upper_bound(b, e, cp, [](uint32_t v, const detail::range_entry& r) { return v < r.first; });
  return it == b ? 0 : (it - 1)->flags;
}

struct bmp_table {
  std::unique_ptr<uint8_t[]> f{new uint8_t[0x10000]};
  bmp_table() {
    for (size_t i = 0; i < detail::k_n_ranges; ++i) {
      uint32_t lo = detail::k_ranges[i].first;
      if (lo >= 0x10000) break;
      uint32_t hi = i + 1 < detail::k_n_ranges ? std::min<uint32_t>(detail::k_ranges[i + 1].first, 0x10000) : 0x10000;
      std::fill(f.get() + lo, f.get() + hi, detail::k_ranges[i].flags);
    }
  }
};

const bmp_table& bmp() {
  static const bmp_table t;
  return t;
}

struct byte_map {
  std::array<std::string, 256> to_utf8;
  std::array<int32_t, 512> from_cpt{};  // every mapped code point is < 0x144
  byte_map() {
    from_cpt.fill(-1);
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      uint32_t cp = printable ? static_cast<uint32_t>(b) : static_cast<uint32_t>(256 + n++);
      text::append_utf8(to_utf8[b], cp);
      from_cpt[cp] = b;
    }
  }
};

const byte_map& bytes() {
  static const byte_map m;
  return m;
}

}  // namespace

cpt_flags flags(uint32_t cp) {
  if (cp < 0x10000) return cpt_flags{bmp().f[cp]};
  if (cp > 0x10FFFF) return cpt_flags{0};
  return cpt_flags{flags_by_search(cp)};
}

const char* table_version() { return detail::k_unicode_version; }

const std::string& byte_to_utf8(uint8_t b) { return bytes().to_utf8[b]; }

int utf8_cpt_to_byte(uint32_t cp) { return cp < 512 ? bytes().from_cpt[cp] : -1; }

}  // namespace qf::infer::unicode
