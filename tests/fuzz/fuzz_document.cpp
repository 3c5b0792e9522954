// Fuzz target: document edits in the three position encodings against the
// indexing document store (indexing/document_store, text_position).
//
// The input chooses the position encoding, whether texts are kept valid
// UTF-8 (as they are after JSON decoding) or left as raw bytes, an initial
// text, then a sequence of operations: didChange batches of ranged or full
// edits, re-opens, closes, and position conversions. Oracles:
// * the store never crashes, and a refused batch leaves the text unchanged;
// * a snapshot's line table describes its text (lines end at \n, \r\n, \r);
// * with valid UTF-8 input: the text stays valid UTF-8, an accepted edit
//   gives exactly what a straightforward reference implementation written
//   here gives, and (line, byte column) -> character -> byte offset
//   round-trips at every character boundary.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "indexing/document_store.h"
#include "text/position.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using qf::text::position_encoding;
using qf::index::text_change;
using qf::index::text_range;

struct ref_line {
  std::size_t start, end;
};

std::vector<ref_line> ref_lines(const std::string& t) {
  std::vector<ref_line> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '\n' && t[i] != '\r') continue;
    out.push_back({start, i});
    if (t[i] == '\r' && i + 1 < t.size() && t[i + 1] == '\n') ++i;
    start = i + 1;
  }
  out.push_back({start, t.size()});
  return out;
}

// Bytes of the character at p; an invalid byte counts as a character of its own.
std::size_t char_len(const std::string& t, std::size_t p) {
  const std::size_t n = qf::fuzz::utf8_char_len(t, p);
  return n == 0 ? 1 : n;
}

// Units of the UTF-8 character of n bytes starting at p.
std::size_t units_of(const std::string& t, std::size_t p, std::size_t n, position_encoding enc) {
  if (enc == position_encoding::utf8) return n;
  if (enc == position_encoding::utf32) return 1;
  return n == 4 ? 2 : 1;  // UTF-16: 4-byte characters are surrogate pairs
}

std::optional<std::size_t> ref_offset(const std::string& t, const std::vector<ref_line>& lines, std::size_t line,
                                      std::size_t character, position_encoding enc) {
  if (line >= lines.size()) return std::nullopt;
  std::size_t p = lines[line].start, used = 0;
  while (p < lines[line].end) {
    const std::size_t n = char_len(t, p);
    const std::size_t u = units_of(t, p, n, enc);
    if (used + u > character) break;
    used += u;
    p += n;
  }
  return p;
}

std::size_t ref_units(const std::string& t, std::size_t from, std::size_t to, position_encoding enc) {
  std::size_t units = 0;
  for (std::size_t p = from; p < to;) {
    const std::size_t n = char_len(t, p);
    units += units_of(t, p, n, enc);
    p += n;
  }
  return units;
}

void check_lines(const qf::index::document& d) {
  const std::vector<ref_line> want = ref_lines(d.text);
  QF_FUZZ_CHECK(d.lines.line_count() == want.size(), d.text);
  for (std::size_t i = 0; i < want.size(); ++i) {
    QF_FUZZ_CHECK(d.lines.line_start(i) == want[i].start, d.text);
    QF_FUZZ_CHECK(d.lines.line_end(i) == want[i].end, d.text);
  }
}

std::string take_text(FuzzedDataProvider& in, bool valid, std::size_t max) {
  std::string s = in.ConsumeRandomLengthString(max);
  return valid ? qf::fuzz::keep_valid_utf8(s) : s;
}

// Positions near the interesting places: small numbers, and now and then anything.
std::uint32_t take_number(FuzzedDataProvider& in) {
  return in.ConsumeBool() ? in.ConsumeIntegralInRange<std::uint32_t>(0, 12) : in.ConsumeIntegral<std::uint32_t>();
}

void check_conversions(const std::string& t, const qf::text::line_table& lines, position_encoding enc,
                       FuzzedDataProvider& in) {
  const std::vector<ref_line> ref = ref_lines(t);
  const std::size_t line = in.ConsumeIntegralInRange<std::size_t>(0, ref.size() - 1);
  const std::size_t start = ref[line].start, end = ref[line].end;
  const std::string_view line_text = std::string_view(t).substr(start, end - start);
  const std::size_t n_units = ref_units(t, start, end, enc);
  QF_FUZZ_CHECK(qf::text::count_units(line_text, enc) == n_units, line_text);
  QF_FUZZ_CHECK(qf::text::bytes_for_units(line_text, n_units, enc) == line_text.size(), line_text);
  // Every character boundary of the line round-trips, and so does the line end past it.
  for (std::size_t p = start;;) {
    const std::size_t units = ref_units(t, start, p, enc);
    QF_FUZZ_CHECK(qf::text::character_of(t, lines, line, p - start, enc) == units, line_text);
    const auto back = qf::text::offset_of(t, lines, line, units, enc);
    QF_FUZZ_CHECK(back && *back == p, line_text);
    if (p >= end) break;
    p += char_len(t, p);
  }
  QF_FUZZ_CHECK(qf::text::character_of(t, lines, line, end - start + 5, enc) == n_units, line_text);
  const std::uint32_t character = take_number(in);
  QF_FUZZ_CHECK(qf::text::offset_of(t, lines, line, character, enc) == ref_offset(t, ref, line, character, enc),
                line_text);
  QF_FUZZ_CHECK(!qf::text::offset_of(t, lines, ref.size(), 0, enc), t);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const auto enc = static_cast<position_encoding>(in.ConsumeIntegralInRange<int>(0, 2));
  const bool valid = in.ConsumeBool();
  const std::string uri = "file:///fuzz.txt";
  qf::index::document_store store;
  std::int64_t version = 1;
  store.open(uri, "plaintext", version, take_text(in, valid, 256));

  for (int op = 0; op < 64 && in.remaining_bytes() > 0; ++op) {
    const auto before = store.get(uri);
    switch (in.ConsumeIntegralInRange<int>(0, 7)) {
      case 0:  // re-open with a new text
        store.open(uri, "plaintext", ++version, take_text(in, valid, 128));
        break;
      case 1:  // close, then open again
        QF_FUZZ_CHECK(store.close(uri), uri);
        QF_FUZZ_CHECK(!store.get(uri), uri);
        QF_FUZZ_CHECK(!store.change(uri, ++version, {text_change{std::nullopt, "x"}}, enc, nullptr), uri);
        store.open(uri, "plaintext", ++version, take_text(in, valid, 64));
        break;
      case 2:  // position conversions on the current text
        if (valid) check_conversions(before->text, before->lines, enc, in);
        break;
      default: {  // a didChange batch
        std::vector<text_change> changes(in.ConsumeIntegralInRange<std::size_t>(1, 3));
        for (text_change& c : changes) {
          if (in.ConsumeIntegralInRange<int>(0, 9) != 0)
            c.range = text_range{take_number(in), take_number(in), take_number(in), take_number(in)};
          c.text = take_text(in, valid, 24);
        }
        // The reference applies the same batch, edit by edit, to a copy,
        // from the batch's last full-text change on (the edits before it
        // cannot change the result, and the store skips them).
        std::string want = before->text;
        bool ref_ok = true;
        std::size_t first = 0;
        for (std::size_t i = 0; i < changes.size(); ++i)
          if (!changes[i].range) first = i;
        for (std::size_t i = first; i < changes.size(); ++i) {
          const text_change& c = changes[i];
          if (!c.range) {
            want = c.text;
            continue;
          }
          const auto lines = ref_lines(want);
          const auto b = ref_offset(want, lines, c.range->start_line, c.range->start_character, enc);
          const auto e = ref_offset(want, lines, c.range->end_line, c.range->end_character, enc);
          if (!b || !e || *b > *e) {
            ref_ok = false;
            break;
          }
          want.replace(*b, *e - *b, c.text);
        }
        std::string error;
        const bool ok = store.change(uri, ++version, changes, enc, &error);
        const auto after = store.get(uri);
        QF_FUZZ_CHECK(after != nullptr, uri);
        if (!ok) {
          QF_FUZZ_CHECK(!error.empty(), "a refused change without a reason");
          QF_FUZZ_CHECK(after->text == before->text, error);
          QF_FUZZ_CHECK(after->version == before->version, error);
        } else if (valid) {
          QF_FUZZ_CHECK(ref_ok, after->text);
          QF_FUZZ_CHECK(after->text == want, after->text);
          QF_FUZZ_CHECK(after->version == version, after->text);
        }
        break;
      }
    }
    const auto now = store.get(uri);
    QF_FUZZ_CHECK(now != nullptr, uri);
    check_lines(*now);
    if (valid) QF_FUZZ_CHECK(qf::fuzz::valid_utf8(now->text), now->text);
    // A snapshot taken before is never modified by what came after.
    if (before) check_lines(*before);
  }
  return 0;
}
