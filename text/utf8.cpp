// UTF-8 validity, repair, decoding and truncation (see utf8.h).
#include "text/utf8.h"

namespace qf::text {

namespace {

bool is_cont(unsigned char c) { return (c & 0xC0) == 0x80; }

// The range the second byte of a sequence must fall in, given its lead byte
// (excludes overlong forms, surrogates and code points above U+10FFFF).
struct lead_info {
  std::size_t len;
  unsigned char lo, hi;
};

lead_info lead_of(unsigned char c) {
  if (c < 0x80) return {1, 0, 0};
  if (c >= 0xC2 && c <= 0xDF) return {2, 0x80, 0xBF};
  if (c == 0xE0) return {3, 0xA0, 0xBF};
  if (c == 0xED) return {3, 0x80, 0x9F};
  if (c >= 0xE1 && c <= 0xEF) return {3, 0x80, 0xBF};
  if (c == 0xF0) return {4, 0x90, 0xBF};
  if (c >= 0xF1 && c <= 0xF3) return {4, 0x80, 0xBF};
  if (c == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

}  // namespace

std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  if (i >= s.size()) return 0;
  const lead_info l = lead_of(static_cast<unsigned char>(s[i]));
  if (l.len <= 1) return l.len;
  if (i + l.len > s.size()) return 0;
  const unsigned char second = static_cast<unsigned char>(s[i + 1]);
  if (second < l.lo || second > l.hi) return 0;
  for (std::size_t k = 2; k < l.len; ++k)
    if (!is_cont(static_cast<unsigned char>(s[i + k]))) return 0;
  return l.len;
}

std::size_t first_invalid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    // ASCII runs are the common case.
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) return i;
    i += n;
  }
  return s.size();
}

bool is_valid_utf8(std::string_view s) { return first_invalid_utf8(s) == s.size(); }

std::string repair_utf8(std::string_view s) {
  std::size_t i = first_invalid_utf8(s);
  if (i == s.size()) return std::string(s);
  std::string out(s.substr(0, i));
  out.reserve(s.size() + 8);
  while (i < s.size()) {
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      out.append(replacement_character);
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

bool repair_utf8_in_place(std::string& s) {
  if (is_valid_utf8(s)) return false;
  s = repair_utf8(s);
  return true;
}

std::size_t utf8_floor(std::string_view s, std::size_t n) {
  if (n >= s.size()) return s.size();
  // Step back over at most three continuation bytes to the lead of the
  // character holding byte n; n is a boundary unless that lead's valid
  // sequence reaches past n.
  std::size_t lead = n;
  while (lead > 0 && n - lead < 3 && is_cont(static_cast<unsigned char>(s[lead]))) --lead;
  if (lead == n) return n;
  const std::size_t len = utf8_sequence_length(s, lead);
  return lead + len > n ? lead : n;
}

std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes) {
  return s.substr(0, utf8_floor(s, max_bytes));
}

std::string utf8_shorten(std::string_view s, std::size_t max_bytes, std::string_view marker) {
  if (s.size() <= max_bytes) return std::string(s);
  const std::size_t room = max_bytes > marker.size() ? max_bytes - marker.size() : 0;
  std::string out(utf8_prefix(s, room));
  out.append(marker);
  return out;
}

std::uint32_t decode_utf8(std::string_view s, std::size_t& pos) {
  const unsigned char c = static_cast<unsigned char>(s[pos]);
  if (c < 0x80) {
    ++pos;
    return c;
  }
  const std::size_t len = utf8_sequence_length(s, pos);
  if (len == 0) {
    ++pos;
    return replacement_code_point;
  }
  // The lead byte keeps 7 - len bits; each continuation byte adds six.
  std::uint32_t cp = c & (0x7Fu >> len);
  for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[pos + k]) & 0x3Fu);
  pos += len;
  return cp;
}

void append_utf8(std::string& out, std::uint32_t cp) {
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

std::string_view without_partial_tail(std::string_view s) {
  // A cut character has its lead within the last three bytes.
  for (std::size_t back = 1; back <= 3 && back <= s.size(); ++back) {
    const std::size_t i = s.size() - back;
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (is_cont(c)) continue;
    const lead_info l = lead_of(c);
    if (l.len <= back) return s;  // complete, ASCII or not a lead at all
    // Cut off: the bytes present must be a valid beginning.
    if (back >= 2) {
      const unsigned char second = static_cast<unsigned char>(s[i + 1]);
      if (second < l.lo || second > l.hi) return s;
    }
    return s.substr(0, i);
  }
  return s;
}

}  // namespace qf::text
