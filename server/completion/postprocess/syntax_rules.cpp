// Repetition, bracket and syntax rules of post-processing (see the header).
#include "server/completion/postprocess/syntax_rules.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

#include "indexing/syntax_check.h"

namespace qf::server::completion {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_opener(char c) { return c == '(' || c == '[' || c == '{'; }
bool is_closer(char c) { return c == ')' || c == ']' || c == '}'; }
bool is_quote(char c) { return c == '"' || c == '\'' || c == '`'; }
char closer_of(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

std::string_view rtrim(std::string_view s) {
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

bool all_blank(std::string_view s) { return std::all_of(s.begin(), s.end(), is_blank); }

// A run of `unit_len`-periodic text covering `len` bytes is degenerate when
// it repeats its unit at least 4 times over 48 bytes; a run of one
// punctuation character (a separator comment) only from 100 bytes.
// Only primitive units count ("--" is "-" twice, judged as "-").
bool degenerate(std::string_view unit, std::size_t len) {
  if (len / unit.size() < 4 || all_blank(unit)) return false;
  if (unit.size() > 1 && (std::string(unit) + std::string(unit)).find(unit, 1) != unit.size()) return false;
  if (unit.size() == 1 && !std::isalnum(static_cast<unsigned char>(unit[0]))) return len >= 100;
  return len >= 48;
}

constexpr std::size_t k_max_unit = 32;
constexpr std::size_t k_max_line_group = 8;
constexpr std::size_t k_line_repeats = 3;

std::size_t char_repetition_cut(std::string_view s) {
  std::size_t best = std::string_view::npos;
  for (std::size_t p = 1; p <= k_max_unit && p < s.size(); ++p) {
    std::size_t j = p;
    while (j < s.size() && j < best) {
      if (s[j] != s[j - p]) {
        ++j;
        continue;
      }
      const std::size_t run_start = j - p;
      std::size_t k = j;
      while (k < s.size() && s[k] == s[k - p]) ++k;
      if (degenerate(s.substr(run_start, p), k - run_start)) {
        best = std::min(best, run_start + p);
        break;
      }
      j = k + 1;
    }
  }
  return best;
}

struct line_span {
  std::size_t begin, end;  // end: before the '\n'
};

std::vector<line_span> line_spans(std::string_view s) {
  std::vector<line_span> out;
  std::size_t b = 0;
  for (;;) {
    const std::size_t nl = s.find('\n', b);
    out.push_back({b, nl == std::string_view::npos ? s.size() : nl});
    if (nl == std::string_view::npos) break;
    b = nl + 1;
  }
  return out;
}

std::size_t line_repetition_cut(std::string_view s) {
  const std::vector<line_span> lines = line_spans(s);
  auto text = [&](std::size_t i) { return s.substr(lines[i].begin, lines[i].end - lines[i].begin); };
  const std::size_t n = lines.size();
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t p = 1; p <= k_max_line_group && i + k_line_repeats * p <= n; ++p) {
      bool group_blank = true;
      for (std::size_t a = 0; a < p && group_blank; ++a) group_blank = all_blank(text(i + a));
      if (group_blank) continue;
      bool same = true;
      for (std::size_t r = 1; r < k_line_repeats && same; ++r)
        for (std::size_t a = 0; a < p && same; ++a) same = text(i + a) == text(i + r * p + a);
      if (same) return lines[i + p - 1].end;  // keep the first copy
    }
  }
  return std::string_view::npos;
}

// Bracket and quote structure of a text, read without a grammar: quotes
// (', ", `) with backslash escapes, brackets outside them.
struct bracket_scan {
  std::vector<char> open;              // brackets opened and not closed, outermost first
  std::vector<bool> unmatched_closer;  // per byte: a closer or quote that closes nothing opened in the text
  std::vector<std::size_t> depth_at_line_end;  // open.size() at each '\n'
  std::vector<std::size_t> line_ends;          // offsets of the '\n's
};

bracket_scan scan_brackets(std::string_view s) {
  bracket_scan b;
  b.unmatched_closer.assign(s.size(), false);
  char quote = 0;
  std::size_t quote_at = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\n') {
      b.line_ends.push_back(i);
      b.depth_at_line_end.push_back(b.open.size());
      if (quote != '`') quote = 0;  // only template strings span lines
      continue;
    }
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
      continue;
    }
    if (is_quote(c)) {
      quote = c;
      quote_at = i;
    } else if (is_opener(c)) {
      b.open.push_back(c);
    } else if (is_closer(c)) {
      if (!b.open.empty() && closer_of(b.open.back()) == c) b.open.pop_back();
      else b.unmatched_closer[i] = true;
    }
  }
  // A quote left open as the last character closes a string begun before the text.
  if (quote && quote_at + 1 == s.size()) b.unmatched_closer[quote_at] = true;
  return b;
}

std::string without_tail(std::string s, std::size_t keep) {
  s.resize(std::min(keep, s.size()));
  s.resize(rtrim(s).size());
  return s;
}

}  // namespace

syntax_window make_syntax_window(std::string_view text, std::size_t cursor, const index::syntax_language* language) {
  syntax_window w;
  w.language = language;
  cursor = std::min(cursor, text.size());
  // Back to a line at column 0 that does not start with a closer.
  std::size_t line_start = text.substr(0, cursor).rfind('\n');
  line_start = line_start == std::string_view::npos ? 0 : line_start + 1;
  std::size_t begin = line_start;
  for (std::size_t lines = 0;; ++lines) {
    const char c = begin < text.size() ? text[begin] : '\n';
    if (!is_blank(c) && !is_closer(c)) break;
    if (begin == 0 || lines >= k_window_lines_before) break;
    const std::size_t prev = begin >= 2 ? text.substr(0, begin - 1).rfind('\n') : std::string_view::npos;
    const std::size_t prev_start = prev == std::string_view::npos ? 0 : prev + 1;
    if (cursor - prev_start > k_window_bytes) break;
    begin = prev_start;
  }
  w.before = text.substr(begin, cursor - begin);
  // Forward to the line end before the next line at column 0 that does not
  // start with a closer.
  std::size_t end = text.find('\n', cursor);
  for (std::size_t lines = 0; end != std::string_view::npos && lines < k_window_lines_after; ++lines) {
    const std::size_t next = end + 1;
    if (next >= text.size()) {
      end = text.size();
      break;
    }
    const char c = text[next];
    if (!is_blank(c) && !is_closer(c)) break;
    const std::size_t next_end = text.find('\n', next);
    if ((next_end == std::string_view::npos ? text.size() : next_end) - cursor > k_window_bytes_after) break;
    end = next_end;
  }
  if (end == std::string_view::npos) end = text.size();
  w.after = text.substr(cursor, end - cursor);
  return w;
}

// A cut moved back to a character boundary.
std::size_t at_boundary(std::string_view s, std::size_t cut) {
  if (cut >= s.size()) return cut;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

std::size_t repetition_cut(std::string_view s) {
  return at_boundary(s, std::min(char_repetition_cut(s), line_repetition_cut(s)));
}

std::size_t repetition_cut_at_end(std::string_view s) {
  // Character runs reaching the end of `s`.
  std::size_t best = std::string_view::npos;
  for (std::size_t p = 1; p <= k_max_unit && p < s.size(); ++p) {
    std::size_t k = s.size();
    while (k > p && s[k - 1] == s[k - 1 - p]) --k;
    const std::size_t run_start = k - p;  // the run is s[run_start, size) with period p
    if (k < s.size() && degenerate(s.substr(run_start, p), s.size() - run_start))
      best = std::min(best, run_start + p);
  }
  if (best != std::string_view::npos) return at_boundary(s, best);
  // Line groups, checked when a line has just ended.
  if (!s.empty() && s.back() == '\n') return line_repetition_cut(s.substr(0, s.size() - 1));
  return std::string_view::npos;
}

std::string cut_repetition(std::string s) {
  const std::size_t cut = repetition_cut(s);
  return cut == std::string_view::npos ? s : without_tail(std::move(s), cut);
}

std::string drop_duplicate_closers(std::string s, std::string_view after_cursor) {
  std::string_view a = after_cursor;
  while (!a.empty() && (a.front() == ' ' || a.front() == '\t')) a.remove_prefix(1);
  if (a.empty() || s.empty()) return s;
  const bracket_scan b = scan_brackets(s);
  std::size_t u = 0;  // trailing closers of `s` that close nothing it opened
  while (u < s.size() && b.unmatched_closer[s.size() - 1 - u]) ++u;
  for (std::size_t k = std::min(u, a.size()); k > 0; --k) {
    if (std::string_view(s).substr(s.size() - k) == a.substr(0, k)) return without_tail(std::move(s), s.size() - k);
  }
  return s;
}

std::string balance_brackets(std::string s, std::string_view after) {
  if (s.find('\n') == std::string::npos) return s;
  const bracket_scan b = scan_brackets(s);
  if (b.open.empty()) return s;
  // The closers the text after the cursor starts with (blanks skipped).
  std::string closers;
  for (char c : after) {
    if (is_blank(c)) continue;
    if (!is_closer(c)) break;
    closers.push_back(c);
  }
  bool closed = closers.size() >= b.open.size();
  for (std::size_t i = 0; closed && i < b.open.size(); ++i)
    closed = closers[i] == closer_of(b.open[b.open.size() - 1 - i]);
  if (closed) return s;
  for (std::size_t i = b.line_ends.size(); i-- > 0;)
    if (b.depth_at_line_end[i] == 0) return without_tail(std::move(s), b.line_ends[i]);
  return without_tail(std::move(s), b.line_ends.front());
}

namespace {

// Cut points of `s` to try, longest first: the whole text, each line end,
// then token ends on the first line after which code can be complete.
std::vector<std::size_t> cut_points(std::string_view s) {
  std::vector<std::size_t> out{s.size()};
  for (std::size_t i = s.size(); i-- > 0;)
    if (s[i] == '\n') out.push_back(rtrim(s.substr(0, i)).size());
  const std::size_t first_end = std::min(s.find('\n'), s.size());
  auto cls = [](char c) { return is_blank(c) ? 0 : (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (c & 0x80)) ? 1 : 2; };
  // Token ends after which code can be complete: a word, a closer, a quote, ';'.
  for (std::size_t i = first_end; i-- > 1;) {
    const char c = s[i - 1];
    const int a = cls(c), b = cls(s[i]);
    if (a == 0 || (a == b && a == 1)) continue;
    if (a == 1 || is_closer(c) || is_quote(c) || c == ';') out.push_back(i);
  }
  std::vector<std::size_t> unique;
  for (std::size_t p : out)
    if (p > 0 && (unique.empty() || unique.back() > p)) unique.push_back(p);
  return unique;
}

// The closers for what `t` leaves open, innermost first.
std::string virtual_closers(std::string_view t) {
  const bracket_scan b = scan_brackets(t);
  std::string out;
  for (std::size_t i = b.open.size(); i-- > 0;) out.push_back(closer_of(b.open[i]));
  return out;
}

}  // namespace

std::string syntax_trim(std::string s, const syntax_window& w, std::chrono::microseconds budget,
                        syntax_trim_stats* stats) {
  syntax_trim_stats local;
  syntax_trim_stats& st = stats ? *stats : local;
  if (!w.language || s.empty() || !index::syntax_checks_available()) return s;
  const auto cpu_start = index::thread_cpu_time();
  const std::size_t cursor = w.before.size();
  // The suggestion's span starts after the last non-blank character before
  // the cursor, so that an error ending there (the hole the suggestion
  // fills) touches it.
  std::size_t anchor = cursor;
  while (anchor > 0 && (w.before[anchor - 1] == ' ' || w.before[anchor - 1] == '\t')) --anchor;
  index::syntax_probe probe(*w.language, w.before, w.after);
  auto remaining = [&]() -> std::optional<std::chrono::microseconds> {
    const auto used = index::thread_cpu_time() - cpu_start;
    if (used >= budget || st.parses >= k_max_parses) return std::nullopt;
    ++st.parses;
    return std::chrono::duration_cast<std::chrono::microseconds>(budget - used);
  };
  auto parse = [&](std::string_view t, std::string_view extra) -> std::optional<index::syntax_check> {
    const auto left = remaining();
    if (!left) return std::nullopt;
    std::string insert(t);
    insert.append(extra);
    return probe.check(insert, {anchor, cursor + insert.size()}, cursor + t.size(), *left);
  };
  const auto base_left = remaining();
  const std::optional<index::syntax_check> base =
      base_left ? probe.base({anchor, cursor}, *base_left) : std::optional<index::syntax_check>{};
  if (!base) {
    st.timed_out = true;
    return s;
  }
  // Errors before the suggestion, inside it, straddling its ends and after
  // it may not become more, nor the bytes under those inside or straddling.
  auto adds_no_error = [&](const index::syntax_check& r) {
    return r.errors_before <= base->errors_before && r.errors_after <= base->errors_after &&
           r.errors_within <= base->errors_within && r.errors_at <= base->errors_at &&
           r.error_bytes_at <= base->error_bytes_at;
  };
  // A cut of the suggestion and the parse that accepted it.
  struct found {
    std::size_t keep = 0;
    std::optional<index::syntax_check> check;
  };
  // Whether `t` adds no error; nullopt when the budget ran out. A
  // multi-line suggestion may stop inside a block it opened: it passes too
  // when closing what it left open would leave no new error.
  std::size_t last_first_error = SIZE_MAX;  // of the last plain parse that did not pass
  auto passes = [&](std::string_view t, bool multi) -> std::optional<std::optional<index::syntax_check>> {
    std::optional<index::syntax_check> r = parse(t, {});
    if (!r) return std::nullopt;
    last_first_error = r->first_error_end_within;
    if (adds_no_error(*r)) return r;
    if (multi) {
      const std::string closers = virtual_closers(t);
      if (!closers.empty()) {
        r = parse(t, closers);
        if (!r) return std::nullopt;
        if (adds_no_error(*r)) return r;
      }
    }
    return std::optional<index::syntax_check>{};
  };
  // The longest cut of `text` that adds no error (tried longest first);
  // false when a parse ran out of budget.
  auto search = [&](std::string_view text, found& f) -> bool {
    const bool multi = text.find('\n') != std::string_view::npos;
    f = {};
    std::size_t below = SIZE_MAX;  // cuts past the end of the first error seen inside the suggestion are skipped
    for (std::size_t p : cut_points(text)) {
      if (p > below) continue;
      auto r = passes(text.substr(0, p), multi);
      if (!r) return false;
      if (*r) {
        f = {p, *r};
        return true;
      }
      if (last_first_error >= cursor && last_first_error != SIZE_MAX)
        below = std::min(below, last_first_error - cursor);
    }
    return true;
  };
  const bool multi_line = s.find('\n') != std::string::npos;
  found f;
  if (!search(s, f)) {
    st.timed_out = true;
    return s;
  }
  if (f.keep < s.size()) st.error_cut = true;
  if (!f.check) return std::string();
  s = without_tail(std::move(s), f.keep);
  // The end of the construct being written, when the suggestion runs on past
  // it onto further lines; what is left is checked again (the text after the
  // cursor may close the construct itself).
  if (multi_line && f.check->block_end > cursor && f.check->block_end - cursor < s.size()) {
    const std::size_t end = f.check->block_end - cursor;
    const std::string_view rest = std::string_view(s).substr(end);
    const std::size_t nl = rest.find('\n');
    if (nl != std::string_view::npos && !all_blank(rest.substr(nl))) {
      st.block_cut = true;
      s = without_tail(std::move(s), end);
      if (!search(s, f)) {
        st.timed_out = true;
        return s;
      }
      if (f.keep < s.size()) st.error_cut = true;
      s = f.check ? without_tail(std::move(s), f.keep) : std::string();
    }
  }
  return s;
}

}  // namespace qf::server::completion
