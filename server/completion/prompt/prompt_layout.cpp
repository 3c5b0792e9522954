// Prompt layout: making, validating and extending layouts (see the header).
#include "server/completion/prompt/prompt_layout.h"

#include <algorithm>

#include "text/lines.h"

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
  return text::offset_of_line_col(text, line, col);
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

bool prompt_builder::still_valid(const row_window& w, const layout& st, int64_t shift) const {
  const int64_t first = st.window_first_line + shift, anchor_row = st.anchor_line + shift;
  if (!st.valid || first < 0 || w.cursor_row < anchor_row) return false;
  // A prefix window starting outside the row window cannot be valid with a
  // middle below its limit (see window()).
  if (!w.contains(first) || anchor_row < first) return false;
  // The prefix window: rows [window_first_line, anchor_line) must read as before.
  const size_t win_begin = w.offset_of_row(first);
  const size_t anchor = w.offset_of_row(anchor_row);
  if (w.text.substr(win_begin, anchor - win_begin) != st.prefix_text) return false;
  std::string_view after = w.text.substr(w.cursor);
  for (size_t k = 0; k <= k_max_inserted_after_cursor && k <= after.size(); ++k) {
    if (after.substr(k).starts_with(st.suffix_text)) return true;
    if (k < after.size() && text::is_line_break_char(after[k])) break;
  }
  return false;
}

std::optional<int64_t> prompt_builder::parked_shift(const row_window& w, const layout& l) const {
  if (still_valid(w, l)) return 0;
  // Its rows moved: the cursor is on the anchor row or up to a few rows of
  // typed middle below it.
  constexpr int64_t k_middle_rows = 16;
  for (int64_t j = 0; j <= k_middle_rows && w.cursor_row - j >= 0; ++j) {
    const int64_t shift = w.cursor_row - j - l.anchor_line;
    if (shift != 0 && still_valid(w, l, shift)) return shift;
  }
  return std::nullopt;
}

// The head being made, with its parts.
struct prompt_builder::head_builder {
  const lm_vocab& vocab;
  std::vector<int32_t>& toks;
  std::vector<layout_part>* parts;  // null: tokens only
  void special(int32_t id) {
    toks.push_back(id);
    if (parts) parts->push_back({"special", "", vocab.piece(id), 1});
  }
  void add(std::string_view kind, std::string_view origin, std::string_view text, const std::vector<int32_t>& t) {
    if (t.empty() && text.empty()) return;
    append(toks, t);
    if (!parts) return;
    if (!parts->empty() && parts->back().kind == kind && parts->back().origin == origin) {
      parts->back().text.append(text);
      parts->back().tokens += static_cast<int64_t>(t.size());
    } else {
      parts->push_back({std::string(kind), std::string(origin), std::string(text), static_cast<int64_t>(t.size())});
    }
  }
};

std::vector<int32_t> prompt_builder::extra_block(const layout_input& in) {
  std::vector<int32_t> out;
  head_builder hb{tok_.vocab(), out, nullptr};
  add_files(in, hb);
  return out;
}

void prompt_builder::add_files(const layout_input& in, head_builder& hb) {
  if (s_.extra_tokens <= 0 && !fmt_.repo_level()) return;
  const bool repo = fmt_.has_fim && fmt_.repo_level();
  if (repo) {
    hb.special(fmt_.repo);
    std::string name = std::string(dirname_of(in.uri)) + "\n";
    hb.add("file", "", name, tok_.encode_uncached(name));
  }
  int64_t budget = s_.extra_tokens;
  struct file_block {
    std::string uri, name, text;
    std::vector<int32_t> name_toks, toks;
  };
  // Most recently used last: it sits closest to the current file.
  std::vector<file_block> blocks;
  for (const extra_doc& d : in.extra) {
    if (d.uri == in.uri || budget <= 8) continue;
    file_block blk;
    blk.uri = d.uri;
    if (repo) {
      blk.name = std::string(basename_of(d.uri)) + "\n";
      blk.name_toks = tok_.tokens(blk.name);
    }
    const int64_t header = repo ? 1 + static_cast<int64_t>(blk.name_toks.size()) : 0;
    // At most half of what is left per file, so that several files fit.
    int64_t cap = std::max<int64_t>(budget / 2, std::min<int64_t>(budget, 64));
    for_each_row(d.text, [&](std::string_view row) {
      const std::vector<int32_t>& t = tok_.tokens(row);
      if (header + static_cast<int64_t>(blk.toks.size() + t.size()) > cap) return false;
      append(blk.toks, t);
      blk.text.append(row);
      return true;
    });
    if (blk.toks.empty()) continue;
    if (!d.text.empty() && !text::ends_with_line_break(blk.text) &&
        header + static_cast<int64_t>(blk.toks.size()) < cap) {
      append(blk.toks, tok_.tokens("\n"));
      blk.text.append("\n");
    }
    budget -= header + static_cast<int64_t>(blk.toks.size());
    blocks.push_back(std::move(blk));
  }
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    if (repo) {
      hb.special(fmt_.file_sep);
      hb.add("file", it->uri, it->name, it->name_toks);
    }
    hb.add("file", it->uri, it->text, it->toks);
  }
}

std::vector<int32_t> prompt_builder::item_tokens(const context_item& it, int64_t cap, std::string* text) {
  // Header: a pseudo file name (repo-level formats) or a comment line; scope headers have none.
  std::vector<int32_t> out;
  const bool repo = fmt_.has_fim && fmt_.repo_level();
  std::string body_text;
  if (it.kind != "scope") {
    if (repo) {
      out.push_back(fmt_.file_sep);
      body_text = it.path + "\n";
    } else {
      body_text.append(comment_).append(" ").append(it.path);
      if (it.kind != "edits") {
        const size_t colon = it.origin.find_last_of(':');
        if (colon != std::string::npos) body_text.append(it.origin.substr(colon));
      }
      body_text.append("\n");
    }
    append(out, tok_.tokens(body_text));
  }
  const bool commented = !repo && it.kind == "edits";
  bool cut = false;
  for_each_row(it.body, [&](std::string_view row) {
    if (row.empty()) return true;
    std::string r = commented ? std::string(comment_) + " " + std::string(row) : std::string(row);
    const std::vector<int32_t>& t = tok_.tokens(r);
    if (static_cast<int64_t>(out.size() + t.size()) > cap) {
      cut = true;
      return false;
    }
    append(out, t);
    body_text.append(r);
    return true;
  });
  if (cut && (it.kind == "definition" || it.kind == "scope")) return {};  // whole or not at all
  if (text) *text = std::move(body_text);
  return out;
}

std::vector<context_item> prompt_builder::add_context(const layout_input& in, int64_t window_first_row,
                                                      int64_t window_end_row, const row_window& rows,
                                                      const std::vector<std::string>& previous, head_builder& hb,
                                                      std::vector<std::string>& keys) {
  std::vector<context_item> scopes;
  const int64_t budget = s_.context_block_tokens;
  if (budget <= 0) return scopes;
  comment_ = line_comment_of(in.ctx.language_id, in.uri);
  // Lines of the window (rows are lines for ordinary code; a long line's rows
  // map to it), counted from the cursor line, never from the document's start.
  context_view v;
  v.uri = in.uri;
  v.text = in.text;
  v.cursor_line = rows.cursor_line;
  v.cursor_line_begin = rows.cursor - static_cast<size_t>(rows.cursor_col);
  while (v.cursor_line_begin > 0 && !text::is_line_break_char(in.text[v.cursor_line_begin - 1])) --v.cursor_line_begin;
  v.cursor_col = static_cast<int64_t>(rows.cursor - v.cursor_line_begin);
  auto lines_between = [&](size_t a, size_t b) { return text::line_col_of_offset(in.text.substr(a, b - a), b - a).line; };
  v.window_begin = rows.offset_of_row(window_first_row);
  while (v.window_begin > 0 && !text::is_line_break_char(in.text[v.window_begin - 1])) --v.window_begin;
  v.window_first_line = v.cursor_line - lines_between(v.window_begin, v.cursor_line_begin);
  v.window_end = rows.offset_of_row(std::min(window_end_row, rows.end_row()));
  v.window_end_line = v.cursor_line + lines_between(v.cursor_line_begin, v.window_end) + 1;
  // Ranked: scope headers, definitions, recent chunks, edits.
  std::vector<context_item> ranked = scope_items(v, in.ctx);
  for (auto* f : {&definition_items, &recent_items, &edit_items}) {
    std::vector<context_item> more = (*f)(v, in.ctx, 8);
    ranked.insert(ranked.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  struct chosen {
    context_item item;
    std::string text;
    std::vector<int32_t> toks;
    size_t rank;
  };
  std::vector<chosen> picked;
  int64_t left = budget;
  const int64_t cap = std::max<int64_t>(budget / 3, std::min<int64_t>(budget, 64));
  for (size_t i = 0; i < ranked.size() && left > 0; ++i) {
    chosen c{std::move(ranked[i]), "", {}, i};
    // Definitions and scope headers go in whole or not at all; chunks and diffs are cut at whole lines.
    c.toks = item_tokens(c.item, std::min(cap, left), &c.text);
    const bool only_header = c.item.kind != "scope" && c.text.find('\n') + 1 == c.text.size();
    if (c.toks.empty() || only_header || c.text.empty()) continue;
    left -= static_cast<int64_t>(c.toks.size());
    picked.push_back(std::move(c));
  }
  // Sticky order: what the previous layout held keeps its place; new items follow by rank.
  auto pos_in_previous = [&](const std::string& k) {
    auto it = std::find(previous.begin(), previous.end(), k);
    return it == previous.end() ? previous.size() : static_cast<size_t>(it - previous.begin());
  };
  std::stable_sort(picked.begin(), picked.end(), [&](const chosen& a, const chosen& b) {
    const size_t pa = pos_in_previous(a.item.key()), pb = pos_in_previous(b.item.key());
    return pa != pb ? pa < pb : a.rank < b.rank;
  });
  keys.clear();
  for (chosen& c : picked) {
    keys.push_back(c.item.key());
    if (c.item.kind == "scope") {
      c.item.body = std::move(c.text);
      scopes.push_back(std::move(c.item));
      continue;
    }
    if (!c.toks.empty() && c.toks.front() == fmt_.file_sep && fmt_.has_fim && fmt_.repo_level()) {
      hb.special(fmt_.file_sep);
      c.toks.erase(c.toks.begin());
    }
    hb.add(c.item.kind, c.item.origin, c.text, c.toks);
  }
  // Scope headers nest: outermost (first line) first.
  auto line_no = [](const context_item& it) { return std::stoll(it.origin.substr(it.origin.find_last_of(':') + 1)); };
  std::stable_sort(scopes.begin(), scopes.end(),
                   [&](const context_item& a, const context_item& b) { return line_no(a) < line_no(b); });
  return scopes;
}

int64_t prompt_builder::window_start(const row_window& rows, const layout& st, int64_t budget, bool quick) const {
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
  if (budget <= 0) return w;
  // A quick layout's small window is not kept by the full one that follows it.
  if (!quick && !st.quick && st.window_first_line <= L && st.window_first_line >= 0 &&
      tokens_between(st.window_first_line, L, budget) <= budget)
    return st.window_first_line;
  // Fill three quarters of the budget when the start was at 0 and fits
  // entirely (a quick layout fills all of its small one).
  int64_t target = quick || tokens_between(0, L, budget) <= budget ? budget : budget * 3 / 4;
  int64_t n = 0;
  while (w > rows.first_row) {
    int64_t t = static_cast<int64_t>(tok_.tokens(rows.row(w - 1)).size());
    if (n + t > target) break;
    n += t;
    --w;
  }
  return w;
}

bool prompt_builder::is_jump(const row_window& rows, const layout& st) const {
  if (!st.valid) return false;
  const int64_t L = rows.cursor_row;
  if (L < st.window_first_line) return true;  // above the old window: the new one ends at L
  return window_start(rows, st, s_.prefix_tokens, false) > st.anchor_line;
}

void prompt_builder::make_layout(const layout_input& in, const row_window& rows, layout& st, bool quick) {
  const int64_t L = rows.cursor_row;
  quick = quick && st.valid;  // a quick layout keeps the previous one's context: there must be one
  const int64_t budget = quick ? std::min(s_.jump_prefix_tokens, s_.prefix_tokens) : s_.prefix_tokens;
  const int64_t suffix_budget = quick ? std::min<int64_t>(s_.suffix_tokens, budget / 3) : s_.suffix_tokens;
  const int64_t w = window_start(rows, st, budget, quick);
  layout next;
  next.quick = quick;
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
  int64_t suffix_end_row = L + 1;
  if (fmt_.has_fim && suffix_budget > 0) {
    std::string_view rest = rows.row(L).substr(static_cast<size_t>(rows.cursor_col));
    std::vector<int32_t> rest_toks = tok_.encode_uncached(rest);
    if (static_cast<int64_t>(rest_toks.size()) <= suffix_budget) {
      append(suffix, rest_toks);
      next.suffix_text.append(rest);
      for (int64_t l = L + 1; l < rows.end_row(); ++l) {
        const std::vector<int32_t>& t = tok_.tokens(rows.row(l));
        if (static_cast<int64_t>(suffix.size() + t.size()) > suffix_budget) break;
        append(suffix, t);
        next.suffix_text.append(rows.row(l));
        suffix_end_row = l + 1;
      }
    }
  }
  head_builder hb{tok_.vocab(), next.head, &next.parts};
  std::vector<context_item> scopes;
  if (quick) {
    // The previous head up to the current file, token for token; of the
    // context gathered here only the scope headers are used.
    next.head.assign(st.head.begin(), st.head.begin() + st.shared_len);
    next.parts.assign(st.parts.begin(), st.parts.begin() + static_cast<std::ptrdiff_t>(st.shared_parts));
    next.context_keys = st.context_keys;
    std::vector<int32_t> unused;
    std::vector<std::string> unused_keys;
    head_builder scratch{tok_.vocab(), unused, nullptr};
    scopes = add_context(in, w, suffix_end_row, rows, st.context_keys, scratch, unused_keys);
  } else {
    if (fmt_.bos >= 0) hb.special(fmt_.bos);
    add_files(in, hb);
    scopes = add_context(in, w, suffix_end_row, rows, st.context_keys, hb, next.context_keys);
  }
  next.shared_len = static_cast<int64_t>(next.head.size());
  next.shared_parts = next.parts.size();
  if (fmt_.has_fim && fmt_.repo_level()) {
    hb.special(fmt_.file_sep);
    const std::string name = std::string(basename_of(in.uri)) + "\n";
    hb.add("file", std::string(in.uri), name, tok_.tokens(name));
  }
  const std::string origin = std::string(in.uri) + ":" + std::to_string(w + 1);
  auto add_prefix = [&] {
    for (const context_item& sc : scopes) hb.add("scope", sc.origin, sc.body, tok_.tokens(sc.body));
    if (!scopes.empty()) {
      const std::string marker = std::string(comment_) + " ...\n";
      hb.add("scope", "", marker, tok_.tokens(marker));
    }
    hb.add("prefix", origin, next.prefix_text, prefix);
  };
  const std::string suffix_origin = std::string(in.uri) + ":" + std::to_string(L + 1);
  if (!fmt_.has_fim) {
    add_prefix();
  } else if (fmt_.order == fim_order::psm) {
    hb.special(fmt_.pre);
    add_prefix();
    hb.special(fmt_.suf);
    hb.add("suffix", suffix_origin, next.suffix_text, suffix);
    hb.special(fmt_.mid);
  } else {
    hb.special(fmt_.suf);
    hb.add("suffix", suffix_origin, next.suffix_text, suffix);
    hb.special(fmt_.pre);
    add_prefix();
    hb.special(fmt_.mid);
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

prompt prompt_builder::build(const layout_input& in, layout& st, bool force_relayout, std::vector<layout>* parked) {
  const row_window rows = window(in);
  prompt p;
  p.cursor_row = rows.cursor_row;
  const size_t max_parked = static_cast<size_t>(std::max(1, s_.cache_slots));
  // Parks the current layout (most recent last) before a new one replaces it.
  auto park = [&] {
    if (!parked || !st.valid) return;
    parked->push_back(st);
    if (parked->size() > max_parked) parked->erase(parked->begin());
  };
  // A new layout replaces the parked ones anchored inside its rows.
  auto drop_replaced = [&] {
    if (!parked) return;
    std::erase_if(*parked, [&](const layout& l) {
      return l.anchor_line >= st.window_first_line && l.anchor_line <= st.anchor_line;
    });
  };
  // Takes a parked layout valid at the cursor again, if there is one (with
  // `nearer`, only one anchored below the current layout's anchor).
  auto restore = [&](bool nearer) {
    if (!parked || force_relayout) return false;
    std::optional<int64_t> shift;
    auto back = std::find_if(parked->rbegin(), parked->rend(), [&](const layout& l) {
      shift = parked_shift(rows, l);
      return shift.has_value() && (!nearer || l.anchor_line + *shift > st.anchor_line);
    });
    if (back == parked->rend()) return false;
    layout again = std::move(*back);
    parked->erase(std::next(back).base());
    park();
    st = std::move(again);
    st.window_first_line += *shift;
    st.anchor_line += *shift;
    p.restored = true;
    return true;
  };
  if ((force_relayout || !still_valid(rows, st)) && !restore(false)) {
    // A jump gets a quick layout first (see the header), never a forced relayout.
    const bool quick = !force_relayout && parked && s_.jump_prefix_tokens > 0 && s_.rebase_when_idle &&
                       fmt_.has_fim && is_jump(rows, st);
    park();
    make_layout(in, rows, st, quick);
    drop_replaced();
    p.relayout = true;
  }
  std::vector<int32_t> mid = middle_tokens(rows, st.anchor_line, &p.middle_text);
  if (!p.relayout && st.anchor_line < rows.cursor_row && static_cast<int64_t>(mid.size()) > s_.middle_max_tokens) {
    // Past the middle's limit: a parked layout of this place (a jump down
    // whose suffix read as before), else a new layout here.
    const bool restored = !p.restored && restore(true);
    if (!restored) {
      park();  // typing on: dropped just below
      make_layout(in, rows, st);
      drop_replaced();
      p.relayout = true;
      p.restored = false;
    }
    p.middle_text.clear();
    mid = middle_tokens(rows, st.anchor_line, &p.middle_text);
  }
  p.tokens = st.head;
  p.head_len = static_cast<int64_t>(st.head.size());
  append(p.tokens, mid);
  return p;
}

}  // namespace qf::server::completion
