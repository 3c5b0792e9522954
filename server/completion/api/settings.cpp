// Fitting the completion settings to a model's context (see settings.h).
#include "server/completion/api/settings.h"

#include <algorithm>

namespace qf::server::completion {

void fit_to_context(completion_settings& s, int64_t n_ctx) {
  const int quarter = static_cast<int>(std::max<int64_t>(8, n_ctx / 4));
  s.max_tokens_explicit = std::min(s.max_tokens_explicit, quarter);
  s.max_tokens_auto = std::min(s.max_tokens_auto, s.max_tokens_explicit);
  s.middle_max_tokens = std::min(s.middle_max_tokens, quarter);
  // FIM and separator tokens, the partial line after the middle token.
  constexpr int64_t k_format_overhead = 16;
  const int64_t reserve = s.max_tokens_explicit + s.draft_max + s.middle_max_tokens + k_format_overhead;
  const int64_t room = std::max<int64_t>(0, n_ctx - reserve);
  const int64_t want = int64_t(s.prefix_tokens) + s.suffix_tokens + s.extra_tokens + s.context_block_tokens;
  if (want <= room) return;
  const double f = want > 0 ? double(room) / double(want) : 0.0;
  s.prefix_tokens = static_cast<int>(s.prefix_tokens * f);
  s.suffix_tokens = static_cast<int>(s.suffix_tokens * f);
  s.extra_tokens = static_cast<int>(s.extra_tokens * f);
  s.context_block_tokens = static_cast<int>(s.context_block_tokens * f);
}

}  // namespace qf::server::completion
