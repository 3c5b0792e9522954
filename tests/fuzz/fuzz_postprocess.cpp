// Fuzz target: completion post-processing (server/completion/postprocess):
// cursor context, trigger decision, the streaming stop rules, finalize
// (without and with the syntax rules of a grammar the input picks) and the
// candidate edit.
//
// The input gives the settings flags, a document, a cursor (line, byte
// column) and generated text in chunks as a model would stream it. Texts are
// kept valid UTF-8 (what the server and the detokenizer hand over) and the
// cursor sits on a character boundary (the server converts positions to
// those). Oracles:
// * the cursor context splits the cursor line exactly at the cursor;
// * what the stop checker keeps is a prefix of what was streamed, and what
//   it keeps at a deadline a prefix of that;
// * a single-line completion (with stop rules) has no line break;
// * the syntax rules only cut: with a grammar, the result and the one
//   without (bracket balance instead) are prefixes of one another;
// * the candidate replaces a range on the cursor line that ends at the
//   cursor, inserts the replaced word followed by the finalized text, and
//   every text it carries (insert, filter, label) is valid UTF-8.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "indexing/syntax_language.h"
#include "server/completion/postprocess/cleanup.h"
#include "server/completion/postprocess/stop_rules.h"
#include "server/completion/postprocess/trigger.h"
#include "server/completion/postprocess/syntax_rules.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

namespace pp = qf::server::completion;

std::string take_text(FuzzedDataProvider& in, std::size_t max) {
  return qf::fuzz::keep_valid_utf8(in.ConsumeRandomLengthString(max));
}

// The cursor line of `text` (lines split at '\n', a trailing '\r' dropped);
// empty when `line` is past the last line.
std::string_view cursor_line(std::string_view text, std::int64_t line) {
  std::size_t start = 0;
  for (std::int64_t l = 0; l < line; ++l) {
    const std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) return {};
    start = nl + 1;
  }
  std::size_t end = text.find('\n', start);
  if (end == std::string_view::npos) end = text.size();
  std::string_view cur = text.substr(start, end - start);
  if (!cur.empty() && cur.back() == '\r') cur.remove_suffix(1);
  return cur;
}

// `s` with "\r\n" and lone '\r' written as '\n'.
std::string as_newlines(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < s.size() && s[i + 1] == '\n') ++i;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  pp::completion_settings settings;
  settings.multi_line = in.ConsumeBool();
  settings.stop_rules = in.ConsumeBool();
  settings.auto_trigger_mid_word = in.ConsumeBool();
  const bool explicit_trigger = in.ConsumeBool();

  // Lone '\r' is left out: which line breaks the cursor context splits at is
  // the document store's business, and \n / \r\n are what reach it in practice.
  const std::string raw = take_text(in, 512);
  std::string text;
  for (std::size_t i = 0; i < raw.size(); ++i)
    if (raw[i] != '\r' || (i + 1 < raw.size() && raw[i + 1] == '\n')) text.push_back(raw[i]);
  // A grammar of this build (or none), picked by the document's length so
  // that the inputs of earlier versions of this target read as they did.
  const std::vector<const qf::index::syntax_language*> grammars = qf::index::syntax_languages();
  const std::size_t pick = text.size() % (grammars.size() + 1);
  const qf::index::syntax_language* grammar = pick < grammars.size() ? grammars[pick] : nullptr;
  const auto line = in.ConsumeIntegralInRange<std::int64_t>(0, 16);
  const std::string_view cur = cursor_line(text, line);
  // A column on a character boundary of the cursor line (or past its end: it clamps).
  std::size_t col = in.ConsumeIntegralInRange<std::size_t>(0, cur.size() + 2);
  if (col < cur.size())
    while (col > 0 && (static_cast<unsigned char>(cur[col]) & 0xC0) == 0x80) --col;

  const pp::cursor_context cx = pp::make_cursor_context(text, line, static_cast<std::int64_t>(col));
  const std::size_t want_col = col < cur.size() ? col : cur.size();
  QF_FUZZ_CHECK(cx.line_before == cur.substr(0, want_col), text);
  QF_FUZZ_CHECK(cx.line_after == cur.substr(want_col), text);
  QF_FUZZ_CHECK(cx.col == static_cast<std::int64_t>(want_col), text);

  const pp::trigger_decision d = pp::decide_trigger(cx, explicit_trigger, settings);
  pp::stop_checker stop(cx, d, settings.stop_rules);
  std::string streamed;
  while (in.remaining_bytes() > 0 && !stop.stopped()) {
    const std::string chunk = take_text(in, 16);
    streamed += chunk;
    stop.push(chunk);
    const std::string kept = stop.kept();
    // The checker sees line breaks as '\n' only ("\r\n" and a lone '\r' both
    // become '\n'); what it keeps is a prefix of the text so normalized.
    QF_FUZZ_CHECK(std::string_view(as_newlines(streamed)).starts_with(kept), streamed);
    QF_FUZZ_CHECK(std::string_view(kept).starts_with(stop.kept_at_deadline()), kept);
  }
  const std::string kept = stop.kept();
  QF_FUZZ_CHECK(qf::fuzz::valid_utf8(kept), kept);
  const std::string line_text = pp::finalize(kept, cx, d, settings.stop_rules);
  QF_FUZZ_CHECK(qf::fuzz::valid_utf8(line_text), line_text);
  // One line: no line break, but for lines inserted before the code right of
  // the cursor (column 0), which end with exactly one, the document's.
  auto one_line = [&](const std::string& t) {
    if (!d.inserts_lines) return t.find('\n') == std::string::npos;
    return t.empty() || (t.ends_with(cx.eol) && t.find('\n') == t.size() - 1);
  };
  auto ends_lines = [&](const std::string& t) { return !d.inserts_lines || t.empty() || t.ends_with(cx.eol); };
  if (settings.stop_rules && !d.multi_line) QF_FUZZ_CHECK(one_line(line_text), line_text);
  if (settings.stop_rules) QF_FUZZ_CHECK(ends_lines(line_text), line_text);
  // With the grammar: the document around the cursor, the same text.
  std::size_t cursor_off = 0;
  for (std::int64_t l = 0; l < line && cursor_off < text.size(); ++l) {
    const std::size_t nl = text.find('\n', cursor_off);
    cursor_off = nl == std::string::npos ? text.size() : nl + 1;
  }
  cursor_off = std::min(text.size(), cursor_off + static_cast<std::size_t>(cx.col));
  const pp::syntax_window window = pp::make_syntax_window(text, cursor_off, grammar);
  QF_FUZZ_CHECK(window.before.size() <= cursor_off && cursor_off + window.after.size() <= text.size(), text);
  const std::string final_text = pp::finalize(kept, cx, d, settings.stop_rules, &window);
  QF_FUZZ_CHECK(qf::fuzz::valid_utf8(final_text), final_text);
  if (settings.stop_rules && !d.multi_line) QF_FUZZ_CHECK(one_line(final_text), final_text);
  if (settings.stop_rules) QF_FUZZ_CHECK(ends_lines(final_text), final_text);
  // The syntax rules (with a grammar) and the bracket balance (without) both
  // only cut the same text: one result is a prefix of the other (inserted
  // lines without the line break each ends with).
  auto body = [&](std::string_view t) {
    if (d.inserts_lines && t.ends_with(cx.eol)) t.remove_suffix(cx.eol.size());
    return t;
  };
  QF_FUZZ_CHECK(body(final_text).starts_with(body(line_text)) || body(line_text).starts_with(body(final_text)),
                final_text + "\n--\n" + line_text);

  const qf::server::completion_candidate c = pp::make_candidate(final_text, cx);
  QF_FUZZ_CHECK(c.replace_begin.line == cx.line && c.replace_end.line == cx.line, c.insert_text);
  QF_FUZZ_CHECK(c.replace_end.byte_col == cx.col, c.insert_text);
  QF_FUZZ_CHECK(c.replace_begin.byte_col >= 0 && c.replace_begin.byte_col <= c.replace_end.byte_col, c.insert_text);
  const std::string replaced = cx.line_before.substr(static_cast<std::size_t>(c.replace_begin.byte_col));
  QF_FUZZ_CHECK(c.insert_text == replaced + final_text, c.insert_text);
  QF_FUZZ_CHECK(qf::fuzz::valid_utf8(c.insert_text), c.insert_text);
  QF_FUZZ_CHECK(qf::fuzz::valid_utf8(c.filter_text), c.filter_text);
  QF_FUZZ_CHECK(qf::fuzz::valid_utf8(c.label), c.label);
  return 0;
}
