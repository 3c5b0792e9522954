// kv_blocks (see the header): the buffers, and reference counts over a free stack.
#include "inference/model/kv_blocks.h"

#include <stdexcept>
#include <string>

#include "inference/model/model.h"

namespace qf::infer {

kv_blocks::kv_blocks(const model& m, int64_t n_blocks, ggml_type kv_type, int64_t block_cells)
    : model_(m), kv_type_(kv_type), block_cells_(block_cells), n_blocks_(n_blocks) {
  const hparams& hp = m.hp();
  backend& be = m.be();
  if (n_blocks < 1) throw model_error("KV blocks: the pool needs at least one block");
  if (block_cells < 1 || (block_cells & (block_cells - 1)) != 0)
    throw model_error("KV blocks: block_cells must be a power of two, got " + std::to_string(block_cells));
  if (kv_type != ggml_type::f16 && kv_type != ggml_type::f32)
    throw model_error("context: the KV cache type must be F16 or F32");
  if (kv_type == ggml_type::f32 && !be.caps().kv_f32)
    throw model_error("context: the " + be.name() + " backend keeps the KV cache in F16 only");
  const size_t es = kv_type == ggml_type::f16 ? 2 : 4;
  size_t cells = 0, layer_bytes = 0, total = 0;  // overflow-checked: the counts come from callers
  if (__builtin_mul_overflow(static_cast<size_t>(n_blocks), static_cast<size_t>(block_cells), &cells) ||
      __builtin_mul_overflow(cells, static_cast<size_t>(hp.n_embd_kv()) * es, &layer_bytes) ||
      __builtin_mul_overflow(layer_bytes, 2 * static_cast<size_t>(hp.n_layer), &total))
    throw model_error("context: a KV cache of " + std::to_string(n_blocks * block_cells) +
                      " tokens does not fit in memory sizes");
  block_bytes_ = total / static_cast<size_t>(n_blocks);
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    k_.push_back(be.alloc(layer_bytes));  // [n_blocks * block_cells][n_head_kv][head_dim]
    v_.push_back(be.alloc(layer_bytes));
  }
  refs_.assign(static_cast<size_t>(n_blocks), 0);
  free_.reserve(static_cast<size_t>(n_blocks));
  for (int64_t b = n_blocks - 1; b >= 0; --b) free_.push_back(static_cast<int32_t>(b));
}

int64_t kv_blocks::n_free() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(free_.size());
}

int32_t kv_blocks::take() {
  std::lock_guard<std::mutex> lock(mu_);
  if (free_.empty()) return -1;
  const int32_t b = free_.back();
  free_.pop_back();
  refs_[static_cast<size_t>(b)] = 1;
  return b;
}

void kv_blocks::retain(int32_t b) {
  std::lock_guard<std::mutex> lock(mu_);
  if (b < 0 || b >= n_blocks_ || refs_[static_cast<size_t>(b)] == 0)
    throw std::logic_error("kv_blocks: retain of a block that is not in use");
  ++refs_[static_cast<size_t>(b)];
}

void kv_blocks::release(int32_t b) {
  std::lock_guard<std::mutex> lock(mu_);
  if (b < 0 || b >= n_blocks_ || refs_[static_cast<size_t>(b)] == 0)
    throw std::logic_error("kv_blocks: release of a block that is not in use");
  if (--refs_[static_cast<size_t>(b)] == 0) {
    // Keep the lowest ids on top: a private pool then hands out blocks in
    // order again after a truncation, and its cells stay mostly contiguous.
    auto it = free_.begin();
    while (it != free_.end() && *it > b) ++it;
    free_.insert(it, b);
  }
}

int kv_blocks::refs(int32_t b) const {
  std::lock_guard<std::mutex> lock(mu_);
  return b >= 0 && b < n_blocks_ ? refs_[static_cast<size_t>(b)] : 0;
}

}  // namespace qf::infer
