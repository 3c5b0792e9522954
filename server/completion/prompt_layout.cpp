// Prompt layout: making, validating and extending layouts (see the header).
#include "server/completion/prompt_layout.h"

#include <algorithm>

#include "indexing/lines.h"

namespace qf::server::completion {
namespace {

// Auto-inserted closing characters tolerated between the cursor and the suffix
// the head holds (e.g. an editor's bracket pairing).
constexpr size_t k_max_inserted_after_cursor = 8;

void append(std::vector<int32_t>& dst, const std::vector<int32_t>& src) { dst.insert(dst.end(), src.begin(), src.end()); }

std::string_view basename_of(std::string_view uri) {
  size_t slash = uri.find_last_of('/');
  return slash == std::string_view::npos ? uri : uri.substr(slash + 1);
}

std::string_view dirname_of(std::string_view uri) {
  size_t slash = uri.find_last_of('/');
  if (slash == std::string_view::npos || slash == 0) return "project";
  std::string_view dir = uri.substr(0, slash);
  std::string_view name = basename_of(dir);
  return name.empty() ? std::string_view("project") : name;
}

}  // namespace

size_t offset_of(std::string_view text, int64_t line, int64_t col) {
  return index::offset_of_line_col(text, line, col);
}

row_window prompt_builder::window(const layout_input& in) const {
  // Enough rows in front of the cursor for the prefix window and the middle
  // (every row but an empty last one is at least one token), and behind it for
  // the suffix: with this window the layouts are what the whole text would give.
  const int64_t before = std::max<int64_t>(s_.prefix_tokens, 0) + std::max<int64_t>(s_.middle_max_tokens, 0) + 2;
  const int64_t after = std::max<int64_t>(s_.suffix_tokens, 0) + 1;
  return rows_around(in.text, in.cursor_line, in.cursor_col, before, after);
}

bool prompt_builder::still_valid(const layout_input& in, const layout& st) const { return still_valid(window(in), st); }

bool prompt_builder::still_valid(const row_window& w, const layout& st) const {
  if (!st.valid || w.cursor_row < st.anchor_line) return false;
  // A prefix window starting outside the row window cannot be valid with a
  // middle below its limit (see window()).
  if (!w.contains(st.window_first_line) || st.anchor_line < st.window_first_line) return false;
  // The prefix window: rows [window_first_line, anchor_line) must read as before.
  const size_t win_begin = w.offset_of_row(st.window_first_line);
  const size_t anchor = w.offset_of_row(st.anchor_line);
  if (w.text.substr(win_begin, anchor - win_begin) != st.prefix_text) return false;
  std::string_view after = w.text.substr(w.cursor);
  for (size_t k = 0; k <= k_max_inserted_after_cursor && k <= after.size(); ++k) {
    if (after.substr(k).starts_with(st.suffix_text)) return true;
    if (k < after.size() && index::is_line_break_char(after[k])) break;
  }
  return false;
}

std::vector<int32_t> prompt_builder::extra_block(const layout_input& in) {
  std::vector<int32_t> out;
  if (s_.extra_tokens <= 0 && !fmt_.repo_level()) return out;
  const bool repo = fmt_.has_fim && fmt_.repo_level();
  if (repo) {
    out.push_back(fmt_.repo);
    append(out, tok_.encode_uncached(std::string(dirname_of(in.uri)) + "\n"));
  }
  int64_t budget = s_.extra_tokens;
  // Most recently used last: it sits closest to the current file.
  std::vector<std::vector<int32_t>> blocks;
  for (const extra_doc& d : in.extra) {
    if (d.uri == in.uri || budget <= 8) continue;
    std::vector<int32_t> blk;
    if (repo) {
      blk.push_back(fmt_.file_sep);
      append(blk, tok_.tokens(std::string(basename_of(d.uri)) + "\n"));
    }
    size_t header = blk.size();
    // At most half of what is left per file, so that several files fit.
    int64_t cap = std::max<int64_t>(budget / 2, std::min<int64_t>(budget, 64));
    for_each_row(d.text, [&](std::string_view row) {
      const std::vector<int32_t>& t = tok_.tokens(row);
      if (static_cast<int64_t>(blk.size() + t.size()) > cap) return false;
      append(blk, t);
      return true;
    });
    if (blk.size() == header) continue;
    if (!d.text.empty() && !index::ends_with_line_break(d.text) && static_cast<int64_t>(blk.size()) < cap) append(blk, tok_.tokens("\n"));
    budget -= static_cast<int64_t>(blk.size());
    blocks.push_back(std::move(blk));
  }
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) append(out, *it);
  if (repo) {
    out.push_back(fmt_.file_sep);
    append(out, tok_.tokens(std::string(basename_of(in.uri)) + "\n"));
  }
  return out;
}

void prompt_builder::make_layout(const layout_input& in, const row_window& rows, layout& st) {
  const int64_t L = rows.cursor_row;
  // Prefix window: keep the previous first row while it fits, else slide.
  // Counts tokens of rows [a, b), stopping early once past `cap`; rows in
  // front of the row window count as past it (they cannot fit, see window()).
  auto tokens_between = [&](int64_t a, int64_t b, int64_t cap) {
    int64_t n = 0;
    for (int64_t l = b - 1; l >= a && n <= cap; --l) {
      if (!rows.contains(l)) return cap + 1;
      n += static_cast<int64_t>(tok_.tokens(rows.row(l)).size());
    }
    return n;
  };
  int64_t w = L;
  const int64_t budget = s_.prefix_tokens;
  bool kept = false;
  if (st.window_first_line <= L && st.window_first_line >= 0 && budget > 0 &&
      tokens_between(st.window_first_line, L, budget) <= budget) {
    w = st.window_first_line;
    kept = true;
  }
  if (!kept && budget > 0) {
    // Fill three quarters of the budget when the start was at 0 and fits entirely.
    int64_t target = tokens_between(0, L, budget) <= budget ? budget : budget * 3 / 4;
    int64_t n = 0;
    while (w > rows.first_row) {
      int64_t t = static_cast<int64_t>(tok_.tokens(rows.row(w - 1)).size());
      if (n + t > target) break;
      n += t;
      --w;
    }
  }
  layout next;
  next.valid = true;
  next.anchor_line = L;
  next.window_first_line = w;
  std::vector<int32_t> prefix;
  for (int64_t l = w; l < L; ++l) {
    next.prefix_text.append(rows.row(l));
    append(prefix, tok_.tokens(rows.row(l)));
  }
  // Suffix: the rest of the cursor row, then whole rows while they fit.
  std::vector<int32_t> suffix;
  if (fmt_.has_fim && s_.suffix_tokens > 0) {
    std::string_view rest = rows.row(L).substr(static_cast<size_t>(rows.cursor_col));
    std::vector<int32_t> rest_toks = tok_.encode_uncached(rest);
    if (static_cast<int64_t>(rest_toks.size()) <= s_.suffix_tokens) {
      append(suffix, rest_toks);
      next.suffix_text.append(rest);
      for (int64_t l = L + 1; l < rows.end_row(); ++l) {
        const std::vector<int32_t>& t = tok_.tokens(rows.row(l));
        if (static_cast<int64_t>(suffix.size() + t.size()) > s_.suffix_tokens) break;
        append(suffix, t);
        next.suffix_text.append(rows.row(l));
      }
    }
  }
  std::vector<int32_t>& h = next.head;
  if (fmt_.bos >= 0) h.push_back(fmt_.bos);
  append(h, extra_block(in));
  if (!fmt_.has_fim) {
    append(h, prefix);
  } else if (fmt_.order == fim_order::psm) {
    h.push_back(fmt_.pre);
    append(h, prefix);
    h.push_back(fmt_.suf);
    append(h, suffix);
    h.push_back(fmt_.mid);
  } else {
    h.push_back(fmt_.suf);
    append(h, suffix);
    h.push_back(fmt_.pre);
    append(h, prefix);
    h.push_back(fmt_.mid);
  }
  st = std::move(next);
}

std::vector<int32_t> prompt_builder::middle_tokens(const row_window& rows, int64_t anchor_line,
                                                   std::string* middle_text) {
  std::vector<int32_t> out;
  for (int64_t l = anchor_line; l < rows.cursor_row; ++l) {
    append(out, tok_.tokens(rows.row(l)));
    if (middle_text) middle_text->append(rows.row(l));
    // Past the limit the caller makes a new layout: no need to go on.
    if (static_cast<int64_t>(out.size()) > s_.middle_max_tokens) return out;
  }
  std::string_view before = rows.row(rows.cursor_row).substr(0, static_cast<size_t>(rows.cursor_col));
  append(out, tok_.encode_uncached(before));
  if (middle_text) middle_text->append(before);
  return out;
}

prompt prompt_builder::build(const layout_input& in, layout& st, bool force_relayout) {
  const row_window rows = window(in);
  prompt p;
  p.cursor_row = rows.cursor_row;
  if (force_relayout || !still_valid(rows, st)) {
    make_layout(in, rows, st);
    p.relayout = true;
  }
  std::vector<int32_t> mid = middle_tokens(rows, st.anchor_line, &p.middle_text);
  if (!p.relayout && st.anchor_line < rows.cursor_row && static_cast<int64_t>(mid.size()) > s_.middle_max_tokens) {
    make_layout(in, rows, st);
    p.relayout = true;
    p.middle_text.clear();
    mid = middle_tokens(rows, st.anchor_line, &p.middle_text);
  }
  p.tokens = st.head;
  p.head_len = static_cast<int64_t>(st.head.size());
  append(p.tokens, mid);
  return p;
}

}  // namespace qf::server::completion
