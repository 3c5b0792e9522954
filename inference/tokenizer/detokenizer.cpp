// Streaming detokenizer: appends each token's bytes to a pending buffer and releases
// everything except an incomplete UTF-8 sequence at its end, so that a character split
// across byte tokens (or across BPE tokens) is only emitted once complete. Control
// tokens print nothing.
#include "inference/tokenizer/tokenizer.h"
#include "text/utf8.h"

namespace qf::infer {

detokenizer::detokenizer(const tokenizer& t, bool strip_leading_space) : tok_(t), strip_(strip_leading_space) {}

std::string detokenizer::push(int32_t id) {
  if (tok_.is_control(id)) return {};
  const std::string& p = tok_.piece(id);
  if (p.empty()) return {};
  if (strip_) {
    strip_ = false;
    pending_.append(p, p[0] == ' ' ? 1 : 0, std::string::npos);
  } else {
    pending_ += p;
  }
  size_t hold = pending_.size() - text::without_partial_tail(pending_).size();
  std::string out = pending_.substr(0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return out;
}

std::string detokenizer::flush() {
  std::string out;
  out.swap(pending_);
  return out;
}

}  // namespace qf::infer
