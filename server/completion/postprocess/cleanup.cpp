// The cleanup of the final text and the edit built from it (see the header).
#include "server/completion/postprocess/cleanup.h"

#include <algorithm>
#include <vector>

#include "text/lines.h"
#include "text/utf8.h"

namespace qf::server::completion {
namespace {

std::vector<std::string_view> lines_of(std::string_view s) {
  std::vector<std::string_view> out;
  for (std::string_view l : text::split_lines(s)) out.push_back(text::strip_line_break(l));
  return out;
}

// Every line break ("\r\n", lone "\r") as '\n'.
std::string normalize_line_breaks(std::string_view text) {
  std::string s;
  s.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t br = text::line_break_at(text, i);
    if (br == 0) {
      s.push_back(text[i++]);
    } else {
      s.push_back('\n');
      i += br;
    }
  }
  return s;
}

}  // namespace

std::string finalize(std::string text, const cursor_context& cx, const trigger_decision& d, bool stop_rules,
                     const syntax_window* window, syntax_trim_stats* stats) {
  // Model output enters here: a character cut off by the end of generation is
  // dropped, any other invalid byte becomes U+FFFD; then line breaks are normalized.
  std::string s = normalize_line_breaks(text::repair_utf8(text::without_partial_tail(text)));
  // Inserted lines end with a line break (the code right of the cursor then
  // starts the next line); the rules below see them without it.
  const bool lines = stop_rules && d.inserts_lines;
  if (stop_rules) {
    s = cut_repetition(std::string(rtrim_space(s)));
    // A tail that repeats the text right of the cursor (e.g. a closing bracket the editor inserted).
    std::string_view after = trim_space(cx.line_after);
    if (!lines && !after.empty() && s.find('\n') == std::string::npos) {
      if (std::string_view(s).ends_with(after))
        s = std::string(rtrim_space(std::string_view(s).substr(0, s.size() - after.size())));
    }
    // Closing brackets and quotes the text right of the cursor already has.
    if (!lines) s = drop_duplicate_closers(std::move(s), cx.line_after);
    // Trailing lines that repeat the document's next lines.
    if (d.multi_line && s.find('\n') != std::string::npos) {
      std::vector<std::string_view> gen = lines_of(s);
      std::vector<std::string_view> next;
      for (const std::string& l : cx.next_lines)
        if (!trim_space(l).empty()) next.push_back(trim_space(l));
      size_t drop = 0;
      for (size_t k = std::min(gen.size() - 1, next.size()); k >= 1; --k) {
        bool same = true;
        for (size_t i = 0; i < k && same; ++i) same = trim_space(gen[gen.size() - k + i]) == next[i];
        if (same) {
          drop = k;
          break;
        }
      }
      if (drop > 0) {
        size_t cut = 0;
        for (size_t i = 0; i + drop < gen.size(); ++i) cut += gen[i].size() + 1;
        s = std::string(rtrim_space(std::string_view(s).substr(0, cut > 0 ? cut - 1 : 0)));
      }
    }
    syntax_trim_stats local;
    syntax_trim_stats& st = stats ? *stats : local;
    if (window && window->language) {
      if (lines && !s.empty()) s += '\n';  // parsed as it would be inserted
      s = syntax_trim(std::move(s), *window, k_syntax_budget, &st);
      if (lines) s = std::string(rtrim_space(s));
    }
    // Without a grammar, or when its parses ran out of budget: the bracket balance.
    if ((!window || !window->language || st.timed_out) && s.find('\n') != std::string::npos) {
      std::string after = cx.line_after;
      for (const std::string& l : cx.next_lines) after += "\n" + l;
      s = balance_brackets(std::move(s), after);
    }
    if (trim_space(s).empty()) s.clear();
    if (lines && !s.empty()) s += '\n';
  }
  if (cx.eol != "\n") {
    std::string out;
    out.reserve(s.size() + 8);
    for (char c : s) {
      if (c == '\n') out.append(cx.eol);
      else out.push_back(c);
    }
    return out;
  }
  return s;
}

completion_candidate make_candidate(const std::string& text, const cursor_context& cx) {
  completion_candidate c;
  // The word before the cursor is part of the replaced range.
  // (line_before may hold only the end of a long line: columns count back from the cursor.)
  size_t w = cx.line_before.size();
  while (w > 0 && is_word_byte(static_cast<unsigned char>(cx.line_before[w - 1]))) --w;
  std::string word = cx.line_before.substr(w);
  c.replace_begin = text_pos{cx.line, cx.col - static_cast<int64_t>(word.size())};
  c.replace_end = text_pos{cx.line, cx.col};
  c.insert_text = word + text;
  c.filter_text = c.insert_text;
  // The label: the first line, shortened at a character boundary.
  const text::line_break nl = text::find_line_break(c.insert_text);
  std::string_view first = std::string_view(c.insert_text).substr(0, nl.pos);
  c.label = std::string(trim_space(text::utf8_shorten(first, k_label_bytes)));
  if (c.label.empty()) c.label = std::string(trim_space(text::utf8_prefix(c.insert_text, k_label_bytes)));
  if (nl.len != 0) c.label += " ...";
  return c;
}

}  // namespace qf::server::completion
