// Prompt layout: making, validating and extending layouts (see the header).
#include "server/completion/prompt_layout.h"

#include <algorithm>

#include "indexing/lines.h"

namespace qf::server::completion {
namespace {

// Auto-inserted closing characters tolerated between the cursor and the suffix
// the head holds (e.g. an editor's bracket pairing).
constexpr size_t k_max_inserted_after_cursor = 8;

using index::split_lines;
using index::strip_line_break;

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

bool prompt_builder::still_valid(const layout_input& in, const layout& st) const {
  if (!st.valid || in.cursor_line < st.anchor_line) return false;
  // The prefix window: lines [window_first_line, anchor_line) must read as before.
  size_t win_begin = offset_of(in.text, st.window_first_line, 0);
  size_t anchor = offset_of(in.text, st.anchor_line, 0);
  if (anchor < win_begin || in.text.substr(win_begin, anchor - win_begin) != st.prefix_text) return false;
  size_t cur = offset_of(in.text, in.cursor_line, in.cursor_col);
  if (cur < anchor) return false;
  std::string_view after = in.text.substr(cur);
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
    for (std::string_view line : split_lines(d.text)) {
      const std::vector<int32_t>& t = tok_.tokens(line);
      if (static_cast<int64_t>(blk.size() + t.size()) > cap) break;
      append(blk, t);
    }
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

void prompt_builder::make_layout(const layout_input& in, const std::vector<std::string_view>& lines, layout& st) {
  const int64_t L = in.cursor_line;
  // Prefix window: keep the previous first line while it fits, else slide.
  // Counts tokens of lines [a, b), stopping early once past `cap`.
  auto tokens_between = [&](int64_t a, int64_t b, int64_t cap) {
    int64_t n = 0;
    for (int64_t l = b - 1; l >= a && n <= cap; --l) n += static_cast<int64_t>(tok_.tokens(lines[l]).size());
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
    while (w > 0) {
      int64_t t = static_cast<int64_t>(tok_.tokens(lines[w - 1]).size());
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
    next.prefix_text.append(lines[l]);
    append(prefix, tok_.tokens(lines[l]));
  }
  // Suffix: the rest of the cursor line, then whole lines while they fit.
  std::vector<int32_t> suffix;
  if (fmt_.has_fim && s_.suffix_tokens > 0) {
    std::string_view cur_line = lines[L];
    size_t col = std::min<size_t>(static_cast<size_t>(in.cursor_col), strip_line_break(cur_line).size());
    std::string_view rest = cur_line.substr(col);
    std::vector<int32_t> rest_toks = tok_.encode_uncached(rest);
    if (static_cast<int64_t>(rest_toks.size()) <= s_.suffix_tokens) {
      append(suffix, rest_toks);
      next.suffix_text.append(rest);
      for (size_t l = static_cast<size_t>(L) + 1; l < lines.size(); ++l) {
        const std::vector<int32_t>& t = tok_.tokens(lines[l]);
        if (static_cast<int64_t>(suffix.size() + t.size()) > s_.suffix_tokens) break;
        append(suffix, t);
        next.suffix_text.append(lines[l]);
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

std::vector<int32_t> prompt_builder::middle_tokens(const std::vector<std::string_view>& lines, const layout_input& in,
                                                   int64_t anchor_line, std::string* middle_text) {
  std::vector<int32_t> out;
  for (int64_t l = anchor_line; l < in.cursor_line; ++l) {
    append(out, tok_.tokens(lines[l]));
    if (middle_text) middle_text->append(lines[l]);
  }
  std::string_view cur = strip_line_break(lines[in.cursor_line]);
  std::string_view before = cur.substr(0, std::min<size_t>(static_cast<size_t>(in.cursor_col), cur.size()));
  append(out, tok_.encode_uncached(before));
  if (middle_text) middle_text->append(before);
  return out;
}

prompt prompt_builder::build(const layout_input& in_raw, layout& st, bool force_relayout) {
  std::vector<std::string_view> lines = split_lines(in_raw.text);
  layout_input in = in_raw;
  in.cursor_line = std::clamp<int64_t>(in.cursor_line, 0, static_cast<int64_t>(lines.size()) - 1);
  in.cursor_col = std::clamp<int64_t>(in.cursor_col, 0, static_cast<int64_t>(strip_line_break(lines[in.cursor_line]).size()));
  prompt p;
  if (force_relayout || !still_valid(in, st)) {
    make_layout(in, lines, st);
    p.relayout = true;
  }
  std::vector<int32_t> mid = middle_tokens(lines, in, st.anchor_line, &p.middle_text);
  if (!p.relayout && st.anchor_line < in.cursor_line && static_cast<int64_t>(mid.size()) > s_.middle_max_tokens) {
    make_layout(in, lines, st);
    p.relayout = true;
    p.middle_text.clear();
    mid = middle_tokens(lines, in, st.anchor_line, &p.middle_text);
  }
  p.tokens = st.head;
  p.head_len = static_cast<int64_t>(st.head.size());
  append(p.tokens, mid);
  return p;
}

}  // namespace qf::server::completion
