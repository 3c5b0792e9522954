// In-flight reuse (see the header).
#include "server/completion/api/inflight.h"

#include "text/lines.h"

namespace qf::server::completion {

void generation_progress::publish(std::string_view text) {
  std::lock_guard<std::mutex> lock(mu_);
  text_.assign(text);
}

std::string generation_progress::text() const {
  std::lock_guard<std::mutex> lock(mu_);
  return text_;
}

std::optional<std::size_t> continues_generation(std::string_view before, std::size_t cursor,
                                                std::string_view produced, std::string_view now) {
  if (cursor > before.size() || now.size() <= before.size()) return std::nullopt;
  const std::size_t typed = now.size() - before.size();
  if (typed > produced.size()) return std::nullopt;
  const std::string_view inserted = now.substr(cursor, typed);
  if (inserted != produced.substr(0, typed) || text::find_line_break(inserted).len != 0) return std::nullopt;
  if (now.substr(0, cursor) != before.substr(0, cursor)) return std::nullopt;
  if (now.substr(cursor + typed) != before.substr(cursor)) return std::nullopt;
  return typed;
}

}  // namespace qf::server::completion
