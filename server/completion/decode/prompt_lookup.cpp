// N-gram prompt lookup (see the header).
#include "server/completion/decode/prompt_lookup.h"

#include <algorithm>

namespace qf::server::completion {

std::vector<int32_t> prompt_lookup_draft(std::span<const int32_t> history, int ngram, int max_draft) {
  std::vector<int32_t> draft;
  const int64_t n_hist = static_cast<int64_t>(history.size());
  if (max_draft <= 0) return draft;
  for (int n = std::min<int64_t>(ngram, n_hist - 1); n >= 1; --n) {
    std::span<const int32_t> tail = history.subspan(n_hist - n, n);
    // Latest match that ends before the tail itself.
    for (int64_t start = n_hist - n - 1; start >= 0; --start) {
      if (!std::equal(tail.begin(), tail.end(), history.begin() + start)) continue;
      int64_t from = start + n;
      int64_t count = std::min<int64_t>(max_draft, n_hist - from);
      if (count <= 0) continue;
      draft.assign(history.begin() + from, history.begin() + from + count);
      return draft;
    }
  }
  return draft;
}

}  // namespace qf::server::completion
