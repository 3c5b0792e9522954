// A scripted, deterministic stand-in for the engine, for pipeline tests.
//
// Vocabulary: ids 0..255 are single bytes, a few multi-byte "word" tokens
// follow (so that typing a character can change the last token, as with real
// BPE), then special tokens. encode() is greedy longest-match.
//
// "Model": the next token after a history is chosen by a rule over the whole
// history (by default: the token that followed the latest earlier occurrence
// of the last two tokens -- a copy model, which makes prompt lookup useful --
// else a hash of the last token), returned as logits with a clear maximum.
// The KV cache is the token list itself, so keep_first/move_range are exact.
// Every eval is counted, and an optional delay per token (spread over
// "layers", polling the cancel token between them) makes an engine slow; a
// scripted load() makes it look shared and busy.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "server/completion/api/lm.h"

namespace qf::test {

using namespace qf::server::completion;

struct fake_stats {
  int64_t evaluated = 0;  // tokens committed by eval
  int64_t eval_calls = 0;
  int64_t cancelled_evals = 0;
  int64_t moves = 0;
  int64_t copies = 0;  // copy_prefix calls (a fork of a sequence)
};

class fake_vocab final : public lm_vocab {
 public:
  static constexpr int32_t k_first_word = 256;
  // Special ids (fixed; tests may hide some by clearing them from specials()).
  static constexpr int32_t k_pre = 300, k_suf = 301, k_mid = 302, k_eos = 303, k_pad = 304, k_rep = 305,
                           k_sep = 306, k_bos = 307, k_n_vocab = 310;

  fake_vocab() {
    pieces_.resize(k_n_vocab);
    for (int i = 0; i < 256; ++i) pieces_[i] = std::string(1, static_cast<char>(i));
    const char* words[] = {"    ", "def", "return", "self", "print", "for", "in", "range", "(self", "):\n", "ret"};
    int32_t id = k_first_word;
    for (const char* w : words) pieces_[id++] = w;
    n_words_ = id;
    set_special(k_pre, "<PRE>");
    set_special(k_suf, "<SUF>");
    set_special(k_mid, "<MID>");
    set_special(k_eos, "<EOS>");
    set_special(k_pad, "<PAD>");
    set_special(k_rep, "<REPO>");
    set_special(k_sep, "<SEP>");
    set_special(k_bos, "<BOS>");
    sp_.bos = k_bos;
    sp_.eos = k_eos;
    sp_.fim_pre = k_pre;
    sp_.fim_suf = k_suf;
    sp_.fim_mid = k_mid;
    sp_.fim_pad = k_pad;
    sp_.fim_rep = k_rep;
    sp_.fim_sep = k_sep;
  }
  void set_special(int32_t id, std::string text) {
    pieces_[id] = text;
    by_text_[text] = id;
  }
  lm_specials& mutable_specials() { return sp_; }
  void set_add_bos(bool b) { add_bos_ = b; }

  std::vector<int32_t> encode(std::string_view text) const override {
    std::vector<int32_t> out;
    size_t i = 0;
    while (i < text.size()) {
      int32_t best = static_cast<unsigned char>(text[i]);
      size_t best_len = 1;
      for (int32_t id = k_first_word; id < n_words_; ++id) {
        const std::string& w = pieces_[id];
        if (w.size() > best_len && text.substr(i, w.size()) == w) {
          best = id;
          best_len = w.size();
        }
      }
      out.push_back(best);
      i += best_len;
    }
    return out;
  }
  const std::string& piece(int32_t id) const override { return pieces_.at(id); }
  bool is_control(int32_t id) const override { return id >= 300; }
  int32_t n_vocab() const override { return k_n_vocab; }
  const lm_specials& specials() const override { return sp_; }
  bool add_bos() const override { return add_bos_; }
  int32_t find_token(std::string_view text) const override {
    auto it = by_text_.find(std::string(text));
    return it == by_text_.end() ? -1 : it->second;
  }
  // Renders tokens with specials spelled out (for golden layouts).
  std::string render(std::span<const int32_t> toks) const {
    std::string s;
    for (int32_t t : toks) s += pieces_.at(t);
    return s;
  }

 private:
  std::vector<std::string> pieces_;
  std::map<std::string, int32_t> by_text_;
  lm_specials sp_;
  int32_t n_words_ = 0;
  bool add_bos_ = true;
};

using next_rule = std::function<int32_t(std::span<const int32_t> history)>;
// Optional: the whole logits row after a history (a distribution to sample
// from); when set it replaces the peaked row built from next_rule.
using logits_rule = std::function<std::vector<float>(std::span<const int32_t> history)>;

// Default rule: copy what followed the latest earlier occurrence of the last
// two tokens; otherwise a letter chosen by the last token.
inline int32_t copy_rule(std::span<const int32_t> h) {
  const int64_t n = static_cast<int64_t>(h.size());
  if (n >= 2) {
    for (int64_t s = n - 3; s >= 0; --s)
      if (h[s] == h[n - 2] && h[s + 1] == h[n - 1]) return h[s + 2];
  }
  const int32_t last = n ? h[n - 1] : 0;
  return 'a' + static_cast<int32_t>((static_cast<uint32_t>(last) * 2654435761u >> 7) % 26);
}

class fake_sequence final : public lm_sequence {
 public:
  fake_sequence(int64_t n_ctx, next_rule rule, logits_rule lrule, fake_stats& stats,
                std::chrono::microseconds per_token, int64_t ubatch, size_t bytes_per_token)
      : n_ctx_(n_ctx), rule_(std::move(rule)), lrule_(std::move(lrule)), stats_(stats), per_token_(per_token),
        ubatch_(ubatch), bpt_(bytes_per_token) {}
  int64_t n_ctx() const override { return n_ctx_; }
  const std::vector<int32_t>& tokens() const override { return toks_; }
  void keep_first(int64_t n) override {
    if (n < static_cast<int64_t>(toks_.size())) toks_.resize(n);
  }
  void move_range(int64_t b, int64_t e, int64_t d) override {
    if (b < 0 || e < b || e > static_cast<int64_t>(toks_.size()) || d > b) throw std::out_of_range("move_range");
    std::vector<int32_t> chunk(toks_.begin() + b, toks_.begin() + e);
    toks_.resize(d);
    toks_.insert(toks_.end(), chunk.begin(), chunk.end());
    ++stats_.moves;
  }
  lm_eval_result eval(std::span<const int32_t> in, lm_logits mode, const cancel_token& cancel,
                      lm_output out) override {
    ++stats_.eval_calls;
    full_ = out == lm_output::full;
    if (static_cast<int64_t>(toks_.size() + in.size()) > n_ctx_) throw std::runtime_error("context full");
    lm_eval_result r;
    rows_.clear();
    for (size_t off = 0; off < in.size(); off += ubatch_) {
      size_t n = std::min<size_t>(ubatch_, in.size() - off);
      // "Layers": the delay of this ubatch in 4 steps, cancel polled between them.
      for (int layer = 0; layer < 4; ++layer) {
        if (cancel.is_cancelled()) {
          ++stats_.cancelled_evals;
          r.cancelled = true;
          return r;
        }
        if (per_token_.count() > 0) std::this_thread::sleep_for(per_token_ * static_cast<int64_t>(n) / 4);
      }
      if (cancel.is_cancelled()) {
        ++stats_.cancelled_evals;
        r.cancelled = true;
        return r;
      }
      for (size_t i = off; i < off + n; ++i) {
        toks_.push_back(in[i]);
        const bool want = mode == lm_logits::all || (mode == lm_logits::last && i + 1 == in.size());
        if (want) rows_.push_back(lrule_ ? lrule_(toks_) : logits_for(rule_(toks_)));
      }
      r.n_evaluated += static_cast<int64_t>(n);
      stats_.evaluated += static_cast<int64_t>(n);
    }
    return r;
  }
  int32_t best_token(int64_t i) const override {
    if (i < 0 || i >= static_cast<int64_t>(rows_.size())) return -1;
    const std::vector<float>& l = rows_[i];
    return static_cast<int32_t>(std::max_element(l.begin(), l.end()) - l.begin());
  }
  float best_logprob(int64_t i) const override {
    if (i < 0 || i >= static_cast<int64_t>(rows_.size())) return std::numeric_limits<float>::quiet_NaN();
    return logprob_of(rows_[i], best_token(i));
  }
  std::span<const float> logits(int64_t i) const override {
    if (!full_ || i < 0 || i >= static_cast<int64_t>(rows_.size())) return {};
    return rows_[i];
  }
  // log softmax(row)[id], in double.
  static float logprob_of(const std::vector<float>& row, int32_t id) {
    const float m = *std::max_element(row.begin(), row.end());
    double sum = 0;
    for (float x : row) sum += std::exp(double(x) - m);
    return static_cast<float>(double(row[id]) - m - std::log(sum));
  }
  size_t kv_bytes() const override { return static_cast<size_t>(n_ctx_) * bpt_; }
  // As the engine: the cache cells are copied, nothing is evaluated.
  void copy_prefix(const lm_sequence& src, int64_t n) override {
    toks_.assign(src.tokens().begin(), src.tokens().begin() + n);
    rows_.clear();
    ++stats_.copies;
  }

 private:
  static std::vector<float> logits_for(int32_t next) {
    std::vector<float> l(fake_vocab::k_n_vocab);
    for (int32_t i = 0; i < fake_vocab::k_n_vocab; ++i) l[i] = static_cast<float>((i * 7919) % 101) / 1000.0f;
    l[next] = 10.0f;
    return l;
  }
  int64_t n_ctx_;
  next_rule rule_;
  logits_rule lrule_;
  fake_stats& stats_;
  std::chrono::microseconds per_token_;
  int64_t ubatch_;
  size_t bpt_;
  std::vector<int32_t> toks_;
  std::vector<std::vector<float>> rows_;
  bool full_ = false;
};

class fake_backend final : public lm_backend {
 public:
  explicit fake_backend(next_rule rule = copy_rule) : rule_(std::move(rule)) {}
  fake_vocab& mutable_vocab() { return vocab_; }
  const lm_vocab& vocab() const override { return vocab_; }
  std::unique_ptr<lm_sequence> new_sequence(int64_t n_ctx) override {
    ++sequences_made;
    return std::make_unique<fake_sequence>(n_ctx, rule_, distribution, *stats, per_token, ubatch, bytes_per_token);
  }
  size_t kv_bytes_per_token() const override { return bytes_per_token; }
  int64_t n_ctx_train() const override { return 0; }
  std::string describe() const override { return "fake"; }
  // A scripted load (lm_load: others' sequences and rows, step rates); zeros
  // by default, as an engine serving one sequence. Each call is counted.
  lm_load load() const override {
    ++load_calls;
    return scripted_load;
  }

  std::shared_ptr<fake_stats> stats = std::make_shared<fake_stats>();
  std::chrono::microseconds per_token{0};
  int64_t ubatch = 512;
  size_t bytes_per_token = 1024;
  int sequences_made = 0;
  logits_rule distribution;  // optional, see logits_rule
  lm_load scripted_load{};   // what load() reports
  mutable int load_calls = 0;

 private:
  fake_vocab vocab_;
  next_rule rule_;
};

}  // namespace qf::test
