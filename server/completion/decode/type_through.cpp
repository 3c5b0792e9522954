// Type-through cache (see the header).
#include "server/completion/decode/type_through.h"

#include "text/lines.h"

namespace qf::server::completion {

void type_through_cache::remember(const std::string& uri, const index::shared_text& text, size_t cursor,
                                  std::string suggestion, bool kept) {
  if (suggestion.empty() || cursor > text.size()) {
    entries_.erase(uri);
    return;
  }
  entries_[uri] = entry{text, cursor, std::move(suggestion), kept};
}

std::optional<std::string> type_through_cache::lookup(const std::string& uri, const index::shared_text& shared,
                                                      size_t cursor, bool* kept) {
  auto it = entries_.find(uri);
  if (it == entries_.end()) return std::nullopt;
  entry& e = it->second;
  const std::string_view text = shared;
  const std::string_view old = e.text;
  if (cursor < e.cursor || text.size() < old.size()) return std::nullopt;
  const size_t typed_len = cursor - e.cursor;
  if (typed_len == 0 || typed_len >= e.suggestion.size()) return std::nullopt;
  if (text.size() != old.size() + typed_len) return std::nullopt;
  std::string_view typed = text.substr(e.cursor, typed_len);
  if (text::find_line_break(typed).len != 0) return std::nullopt;
  if (std::string_view(e.suggestion).substr(0, typed_len) != typed) return std::nullopt;
  if (text.substr(0, e.cursor) != old.substr(0, e.cursor)) return std::nullopt;
  if (text.substr(cursor) != old.substr(e.cursor)) return std::nullopt;
  std::string rest = e.suggestion.substr(typed_len);
  e.text = shared;
  e.cursor = cursor;
  e.suggestion = rest;
  if (kept) *kept = e.kept;
  return rest;
}

}  // namespace qf::server::completion
