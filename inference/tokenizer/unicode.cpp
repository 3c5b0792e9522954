// Unicode lookups and UTF-8 helpers (see unicode.h).
#include "inference/tokenizer/unicode.h"

#include <algorithm>
#include <array>
#include <memory>

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
      append_utf8(to_utf8[b], cp);
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

uint32_t decode_utf8(std::string_view s, size_t& pos) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const size_t n = s.size();
  uint8_t b0 = p[pos];
  if (b0 < 0x80) {
    ++pos;
    return b0;
  }
  size_t len;
  uint32_t cp;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2;
    cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3;
    cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4;
    cp = b0 & 0x07;
  } else {
    ++pos;
    return k_replacement;
  }
  if (pos + len > n) {
    ++pos;
    return k_replacement;
  }
  for (size_t i = 1; i < len; ++i) {
    uint8_t c = p[pos + i];
    if ((c & 0xC0) != 0x80) {
      ++pos;
      return k_replacement;
    }
    cp = (cp << 6) | (c & 0x3F);
  }
  pos += len;
  return cp;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool is_valid_utf8(std::string_view s) {
  size_t pos = 0;
  while (pos < s.size()) {
    size_t before = pos;
    uint32_t cp = decode_utf8(s, pos);
    if (cp == k_replacement && pos - before == 1) return false;
  }
  return true;
}

std::string sanitize_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  size_t pos = 0;
  while (pos < s.size()) {
    size_t before = pos;
    uint32_t cp = decode_utf8(s, pos);
    if (cp == k_replacement && pos - before == 1) {
      append_utf8(out, k_replacement);
    } else {
      out.append(s.substr(before, pos - before));
    }
  }
  return out;
}

size_t incomplete_utf8_tail(std::string_view s) {
  // Look back at most 3 bytes for a lead byte whose sequence runs past the end.
  const size_t n = s.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    auto c = static_cast<uint8_t>(s[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    size_t need = 0;
    if ((c & 0xE0) == 0xC0) need = 2;
    else if ((c & 0xF0) == 0xE0) need = 3;
    else if ((c & 0xF8) == 0xF0) need = 4;
    return need > back ? back : 0;
  }
  return 0;
}

const std::string& byte_to_utf8(uint8_t b) { return bytes().to_utf8[b]; }

int utf8_cpt_to_byte(uint32_t cp) { return cp < 512 ? bytes().from_cpt[cp] : -1; }

}  // namespace qf::infer::unicode
