// Stop rules and post-processing (see the header for the rules).
#include "server/completion/postprocess/postprocess.h"

#include <algorithm>
#include <cctype>

#include "text/lines.h"
#include "text/utf8.h"

namespace qf::server::completion {
namespace {

bool is_word(unsigned char c) { return c == '_' || c >= 0x80 || std::isalnum(c); }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}
std::string_view rtrim(std::string_view s) {
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool ends_with_block_opener(std::string_view before) {
  std::string_view t = rtrim(before);
  if (t.empty()) return false;
  char c = t.back();
  if (c == '{' || c == '(' || c == '[' || c == ':') return true;
  return t.ends_with("=>") || t.ends_with("->") || t.ends_with(" do") || t.ends_with(" then");
}

bool is_closer(std::string_view trimmed) {
  return !trimmed.empty() && (trimmed.front() == '}' || trimmed.front() == ')' || trimmed.front() == ']' ||
                              trimmed.starts_with("end"));
}

// Generated text after normalization has '\n' breaks only.
// The first / last `n` bytes of `s`, not splitting a UTF-8 character.
std::string_view head_of(std::string_view s, size_t n) { return text::utf8_prefix(s, n); }
std::string_view tail_of(std::string_view s, size_t n) {
  if (s.size() <= n) return s;
  size_t from = s.size() - n;
  while (from < s.size() && (static_cast<unsigned char>(s[from]) & 0xC0) == 0x80) ++from;
  return s.substr(from);
}

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

int indent_width(std::string_view line) {
  int w = 0;
  for (char c : line) {
    if (c == ' ') ++w;
    else if (c == '\t') w += 4;
    else break;
  }
  return w;
}

cursor_context make_cursor_context(std::string_view text, int64_t line, int64_t col, size_t max_next) {
  cursor_context cx;
  cx.line = line;
  cx.eol = std::string(text::first_line_ending(text));
  cx.crlf = cx.eol == "\r\n";
  const size_t off = text::line_start_offset(text, line);
  const text::line_break br = text::find_line_break(text, off);
  const size_t end = br.len == 0 ? text.size() : br.pos;
  std::string_view cur = text.substr(off, end - off);
  size_t c = std::min<size_t>(static_cast<size_t>(std::max<int64_t>(col, 0)), cur.size());
  cx.col = static_cast<int64_t>(c);
  cx.line_before = std::string(tail_of(cur.substr(0, c), k_context_line_bytes));
  cx.line_after = std::string(head_of(cur.substr(c), k_context_line_bytes));
  cx.base_indent = indent_width(head_of(cur, k_context_line_bytes));
  size_t pos = br.len == 0 ? text.size() : br.pos + br.len;
  while (pos < text.size() && cx.next_lines.size() < max_next) {
    const text::line_break b = text::find_line_break(text, pos);
    const size_t e = b.len == 0 ? text.size() : b.pos;
    cx.next_lines.emplace_back(head_of(text.substr(pos, e - pos), k_context_line_bytes));
    pos = b.len == 0 ? text.size() : b.pos + b.len;
  }
  return cx;
}

trigger_decision decide_trigger(const cursor_context& cx, bool explicit_trigger, const completion_settings& s) {
  trigger_decision d;
  const bool after_word = !cx.line_before.empty() && is_word(static_cast<unsigned char>(cx.line_before.back()));
  const bool code_right = std::any_of(cx.line_after.begin(), cx.line_after.end(),
                                      [](char c) { return is_word(static_cast<unsigned char>(c)); });
  if (!explicit_trigger && !s.auto_trigger_mid_word && after_word && code_right) d.skip = true;
  const bool rest_empty = trim(cx.line_after).empty();
  d.block_opener = rest_empty && ends_with_block_opener(cx.line_before);
  const bool empty_line = trim(cx.line_before).empty() && rest_empty;
  if (s.multi_line && rest_empty) d.multi_line = explicit_trigger || empty_line || d.block_opener;
  d.inserts_lines = cx.line_before.empty() && !rest_empty;
  if (s.multi_line && d.inserts_lines) d.multi_line = explicit_trigger;
  if (!s.stop_rules) d.multi_line = true;  // fixed-length generation: no line rule
  return d;
}

stop_checker::stop_checker(const cursor_context& cx, const trigger_decision& d, bool stop_rules)
    : cx_(cx), d_(d), rules_(stop_rules) {}

bool stop_checker::push(std::string_view text) {
  if (stopped_) return true;
  // Line breaks as '\n' only, so that the rules below see the lines the
  // document would ("\r\n" may arrive split over two pieces).
  for (char c : text) {
    if (c == '\n' && after_cr_) {
      after_cr_ = false;
      continue;
    }
    after_cr_ = c == '\r';
    text_.push_back(after_cr_ ? '\n' : c);
  }
  scan();
  if (rules_ && !stopped_) {
    const size_t cut = repetition_cut_at_end(std::string_view(text_).substr(0, keep_));
    if (cut != std::string_view::npos) {
      keep_ = cut;
      stopped_ = true;
    }
  }
  return stopped_;
}

bool stop_checker::at_line_end() const { return text_.empty() || text_.back() == '\n'; }

std::string stop_checker::kept_at_deadline() const {
  std::string k = kept();
  if (!rules_ || !d_.multi_line) return k;
  size_t nl = k.rfind('\n');
  if (nl == std::string::npos) return k;
  return k.substr(0, nl);
}

void stop_checker::scan() {
  if (!rules_) {
    keep_ = text_.size();
    return;
  }
  // Inserting lines: the first line is already a line of its own, and it may
  // be the code right of the cursor itself (nothing to insert).
  const std::string_view right = trim(cx_.line_after);
  size_t first_nl = text_.find('\n');
  if (d_.inserts_lines && first_nl != std::string::npos && trim(std::string_view(text_).substr(0, first_nl)) == right) {
    keep_ = 0;
    stopped_ = true;
    return;
  }
  if (!d_.multi_line) {
    if (first_nl != std::string::npos) {
      keep_ = d_.inserts_lines ? first_nl + 1 : first_nl;
      stopped_ = true;
    } else {
      keep_ = text_.size();
    }
    return;
  }
  // Multi-line: look at every line after the first (the first continues the cursor line).
  const std::string_view first_next = [&]() -> std::string_view {
    if (d_.inserts_lines) return right;  // the code right of the cursor follows the inserted lines
    for (const std::string& l : cx_.next_lines)
      if (!trim(l).empty()) return trim(l);
    return {};
  }();
  // The first line continues the cursor line; its indentation is that line's.
  // Inserted lines dedent from their own first line's indentation (or the
  // cursor line's, when less).
  int base_indent = cx_.base_indent;
  if (d_.inserts_lines && first_nl != std::string::npos) {
    const std::string_view first = std::string_view(text_).substr(0, first_nl);
    if (!trim(first).empty()) base_indent = std::min(base_indent, indent_width(first));
  }
  size_t line_start = first_nl;
  keep_ = text_.size();
  bool body_seen = false;
  if (line_start == std::string::npos) return;
  for (;;) {
    size_t begin = line_start + 1;
    size_t end = text_.find('\n', begin);
    const bool complete = end != std::string::npos;
    std::string_view line = std::string_view(text_).substr(begin, (complete ? end : text_.size()) - begin);
    std::string_view t = trim(line);
    if (!t.empty()) {
      int ind = indent_width(line);
      // Indentation is only known once the first non-blank character arrived.
      bool stop = ind < base_indent;
      if (d_.block_opener && body_seen && ind <= base_indent) {
        if (is_closer(t)) {
          // Keep the closing line itself, then stop.
          if (complete) {
            keep_ = end;
            stopped_ = true;
            return;
          }
          return;  // wait for the line to complete
        }
        stop = true;
      }
      if (!stop && complete && !first_next.empty() && t == first_next) stop = true;
      if (stop) {
        // Cut before the '\n' that starts this line (inserted lines keep it).
        keep_ = d_.inserts_lines ? line_start + 1 : line_start;
        stopped_ = true;
        return;
      }
      if (ind > base_indent) body_seen = true;
    }
    if (!complete) return;
    line_start = end;
  }
}

std::string finalize(std::string text, const cursor_context& cx, const trigger_decision& d, bool stop_rules,
                     const syntax_window* window, syntax_trim_stats* stats) {
  // Model output enters here: a character cut off by the end of generation is
  // dropped, any other invalid byte becomes U+FFFD; then line breaks are normalized.
  std::string s = normalize_line_breaks(text::repair_utf8(text::without_partial_tail(text)));
  // Inserted lines end with a line break (the code right of the cursor then
  // starts the next line); the rules below see them without it.
  const bool lines = stop_rules && d.inserts_lines;
  if (stop_rules) {
    s = cut_repetition(std::string(rtrim(s)));
    // A tail that repeats the text right of the cursor (e.g. a closing bracket the editor inserted).
    std::string_view after = trim(cx.line_after);
    if (!lines && !after.empty() && s.find('\n') == std::string::npos) {
      if (std::string_view(s).ends_with(after)) s = std::string(rtrim(std::string_view(s).substr(0, s.size() - after.size())));
    }
    // Closing brackets and quotes the text right of the cursor already has.
    if (!lines) s = drop_duplicate_closers(std::move(s), cx.line_after);
    // Trailing lines that repeat the document's next lines.
    if (d.multi_line && s.find('\n') != std::string::npos) {
      std::vector<std::string_view> gen = lines_of(s);
      std::vector<std::string_view> next;
      for (const std::string& l : cx.next_lines)
        if (!trim(l).empty()) next.push_back(trim(l));
      size_t drop = 0;
      for (size_t k = std::min(gen.size() - 1, next.size()); k >= 1; --k) {
        bool same = true;
        for (size_t i = 0; i < k && same; ++i) same = trim(gen[gen.size() - k + i]) == next[i];
        if (same) {
          drop = k;
          break;
        }
      }
      if (drop > 0) {
        size_t cut = 0;
        for (size_t i = 0; i + drop < gen.size(); ++i) cut += gen[i].size() + 1;
        s = std::string(rtrim(std::string_view(s).substr(0, cut > 0 ? cut - 1 : 0)));
      }
    }
    syntax_trim_stats local;
    syntax_trim_stats& st = stats ? *stats : local;
    if (window && window->language) {
      if (lines && !s.empty()) s += '\n';  // parsed as it would be inserted
      s = syntax_trim(std::move(s), *window, k_syntax_budget, &st);
      if (lines) s = std::string(rtrim(s));
    }
    // Without a grammar, or when its parses ran out of budget: the bracket balance.
    if ((!window || !window->language || st.timed_out) && s.find('\n') != std::string::npos) {
      std::string after = cx.line_after;
      for (const std::string& l : cx.next_lines) after += "\n" + l;
      s = balance_brackets(std::move(s), after);
    }
    if (trim(s).empty()) s.clear();
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
  while (w > 0 && is_word(static_cast<unsigned char>(cx.line_before[w - 1]))) --w;
  std::string word = cx.line_before.substr(w);
  c.replace_begin = text_pos{cx.line, cx.col - static_cast<int64_t>(word.size())};
  c.replace_end = text_pos{cx.line, cx.col};
  c.insert_text = word + text;
  c.filter_text = c.insert_text;
  // The label: the first line, shortened at a character boundary.
  const text::line_break nl = text::find_line_break(c.insert_text);
  std::string_view first = std::string_view(c.insert_text).substr(0, nl.pos);
  c.label = std::string(trim(text::utf8_shorten(first, k_label_bytes)));
  if (c.label.empty()) c.label = std::string(trim(text::utf8_prefix(c.insert_text, k_label_bytes)));
  if (nl.len != 0) c.label += " ...";
  return c;
}

}  // namespace qf::server::completion
