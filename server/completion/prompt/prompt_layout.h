// Prompt layout for KV reuse: least-volatile first.
//
//   [BOS] [extra context] [PRE] prefix lines [SUF] suffix [MID] | middle
//
// The "head" (everything up to and including the middle token) is fixed when
// a layout is made at an anchor line; the "middle" is the text from the anchor
// line's start to the cursor, so typing inside a line -- and even across new
// lines -- only appends tokens after the head. A layout stays valid while the
// prefix window text is unchanged, the text after the cursor still ends with
// the suffix the head holds (a few auto-inserted closing characters in between
// are tolerated), and the middle is below a token limit. Otherwise a new
// layout is made; to keep the shared part long, the prefix window keeps its
// first line while it fits the budget and then slides by a quarter budget at a
// time (the slid window is a deletion at the front of the prefix, which the
// cache can reuse by shifting). "Rebase" = a new layout at the cursor line,
// done in the background when the user pauses.
//
// A jump: when the cursor leaves the layout's region, the layout is parked
// (kept per document, as many as the cache has slots, cacheSlots) and a new
// one is made; when the cursor comes back to a region whose parked layout is
// still valid there (its rows moved as a whole by lines added or removed
// above it count), that layout is taken again, so the prompt's head -- and
// the KV slot that holds it (kv_pool.h) -- are reused as they were. A new
// layout drops the parked ones anchored inside its own rows (it replaces them).
//
// A jump to a region no parked layout covers (the new prefix window would
// share no row with the old one) first gets a *quick* layout, so that the
// first suggestion there does not wait for a whole new prompt: the old
// layout's head up to the current file (other files, context block) is kept
// token for token -- the cache holds it -- and only a small window of the new
// place is added (completion.jumpPrefixTokens of prefix, a third of that of
// suffix, the scope headers). The full layout at the cursor follows as a
// rebase in the background (the pipeline queues it after the answer) and is
// adopted once warm. Relayouts at the same place are never quick.
//
// SPM order puts the suffix before the prefix; models without FIM tokens get
// [BOS] [extra] prefix lines | middle.
//
// A request looks only at a window of rows around the cursor (text_rows.h):
// as many rows as the budgets can use in front of and behind it, each row at
// most k_row_bytes. What one keystroke tokenizes, hashes and compares is
// therefore bounded by the budgets, however long the document or its lines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/completion/prompt/chunk_tokenizer.h"
#include "server/completion/prompt/context_block.h"
#include "server/completion/prompt/fim_format.h"
#include "server/completion/api/settings.h"
#include "server/completion/prompt/text_rows.h"

namespace qf::server::completion {

struct extra_doc {
  std::string uri;
  std::string_view text;
};

// A layout: the head and what it was made from.
// "Lines" here are rows (text_rows.h): lines, with a line longer than
// k_row_bytes counted as several rows; for ordinary code the two agree.
// One part of a head, for explanations: kind as in prompt_part
// (completion_provider.h), where it came from, its text, its token count.
struct layout_part {
  std::string kind;
  std::string origin;
  std::string text;
  int64_t tokens = 0;
};

struct layout {
  bool valid = false;
  int64_t anchor_line = 0;        // the middle starts at this row's start
  int64_t window_first_line = 0;  // the prefix window's first row
  std::string prefix_text;        // rows [window_first_line, anchor_line)
  std::string suffix_text;        // text after the cursor that the head holds
  std::vector<int32_t> head;      // tokens up to and including the middle token
  int64_t shared_len = 0;         // head tokens in front of the current file (other files, context block)
  size_t shared_parts = 0;        // parts in front of the current file
  bool quick = false;             // a jump's first layout: small window, the previous context (see the top)
  std::vector<layout_part> parts;  // the head, part by part (tokens add up to head.size())
  std::vector<std::string> context_keys;  // the context items it holds, in prompt order
};

struct prompt {
  std::vector<int32_t> tokens;  // head + middle
  int64_t head_len = 0;
  bool relayout = false;        // a new layout was made for this prompt
  bool restored = false;        // a parked layout was taken again (the cursor came back to its region)
  std::string middle_text;      // text between the anchor and the cursor
  int64_t cursor_row = 0;       // the cursor's row (text_rows.h)
};

struct layout_input {
  // Every member has a default ({} where none is needed): initializers may name
  // only what they set (GCC -Wextra warns about a member left out otherwise).
  std::string_view text{};  // the whole document
  int64_t cursor_line = 0;
  int64_t cursor_col = 0;  // byte column
  std::string_view uri{};
  std::vector<extra_doc> extra{};  // other open files, most recently used first
  context_sources ctx{};         // scopes, definitions, recent chunks, edits (context_block.h)
};

class prompt_builder {
 public:
  prompt_builder(const fim_format& fmt, chunk_tokenizer& tok, const completion_settings& s)
      : fmt_(fmt), tok_(tok), s_(s) {}

  // Builds the prompt, reusing `state` when it is still valid (or making a new
  // layout into it). `force_relayout` makes a new layout at the cursor line.
  // With `parked` (the document's parked layouts, most recent last), a
  // `state` that is no longer valid is parked there, and one of them that is
  // valid is taken again instead of a new layout (see the top of the file).
  prompt build(const layout_input& in, layout& state, bool force_relayout = false,
               std::vector<layout>* parked = nullptr);

  // Whether `state` still describes `in` (without building anything).
  bool still_valid(const layout_input& in, const layout& state) const;

  // The heads of other open files alone (for tests and cache sharing).
  std::vector<int32_t> extra_block(const layout_input& in);

 private:
  row_window window(const layout_input& in) const;
  // `shift`: as if the layout's rows were that many further down (lines added above it).
  bool still_valid(const row_window& rows, const layout& state, int64_t shift = 0) const;
  // The row shift that makes a parked layout valid at the cursor: none, or
  // lines added or removed above it (nullopt: it is not valid anywhere near).
  std::optional<int64_t> parked_shift(const row_window& rows, const layout& parked) const;
  void make_layout(const layout_input& in, const row_window& rows, layout& state, bool quick = false);
  // The first row of the prefix window a layout at the cursor would take.
  int64_t window_start(const row_window& rows, const layout& state, int64_t budget, bool quick) const;
  // A relayout at the cursor is a jump: its prefix window would share no row with `state`'s.
  bool is_jump(const row_window& rows, const layout& state) const;
  struct head_builder;
  void add_files(const layout_input& in, head_builder& hb);
  // Chooses the context items within the budget and orders them after `previous`;
  // adds all but the scope headers to `hb` and returns those.
  std::vector<context_item> add_context(const layout_input& in, int64_t window_first_row, int64_t window_end_row,
                                        const row_window& rows, const std::vector<std::string>& previous,
                                        head_builder& hb, std::vector<std::string>& keys);
  std::vector<int32_t> item_tokens(const context_item& it, int64_t cap, std::string* text);
  std::vector<int32_t> middle_tokens(const row_window& rows, int64_t anchor_line, std::string* middle_text);
  const fim_format& fmt_;
  chunk_tokenizer& tok_;
  const completion_settings& s_;
  std::string_view comment_ = "//";  // the current file's line comment (context block headers)
};

// Splits `text` at the cursor: the byte offset of (line, col), clamped (lines
// as text/lines.h defines them).
size_t offset_of(std::string_view text, int64_t line, int64_t col);

}  // namespace qf::server::completion
