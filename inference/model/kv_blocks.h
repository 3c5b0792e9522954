// A pool of KV cache blocks that sequences (contexts) draw from.
//
// Every layer has one K and one V buffer of n_blocks x block_cells cells
// ([cell][n_head_kv][head_dim] in the cache type); a block is block_cells
// consecutive cells of every layer. A context holds its positions in blocks
// listed in its block table (position p: row p % block_cells of block
// table[p / block_cells]), so a context needs memory for the positions it
// holds, not for its whole capacity, and several contexts can reference one
// block: a fork of a sequence (context::copy_prefix within one pool) shares
// the blocks of the common prefix instead of copying them. Blocks are counted
// by references; a context writes into a block only when it is the only one
// referencing it, and copies a shared block first (copy on write). A context
// made without a pool gets a private one sized for its n_ctx.
//
// take/retain/release are thread-safe (candidates on their own threads may
// truncate their sequences at once); the buffers are used by whoever drives
// the backend, one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "inference/backend/backend.h"
#include "inference/core/ggml_types.h"

namespace qf::infer {

class model;

class kv_blocks {
 public:
  static constexpr int64_t k_default_block_cells = 16;

  // Throws model_error if n_blocks < 1, block_cells is not a power of two,
  // kv_type is not F16/F32 (or F32 on a backend without it), or the backend
  // cannot allocate the buffers. The model must outlive the pool.
  kv_blocks(const model& m, int64_t n_blocks, ggml_type kv_type = ggml_type::f16,
            int64_t block_cells = k_default_block_cells);
  kv_blocks(const kv_blocks&) = delete;
  kv_blocks& operator=(const kv_blocks&) = delete;

  const model& mdl() const { return model_; }
  ggml_type kv_type() const { return kv_type_; }
  int64_t block_cells() const { return block_cells_; }
  int64_t n_blocks() const { return n_blocks_; }
  int64_t n_free() const;
  // K and V of one block, every layer.
  size_t block_bytes() const { return block_bytes_; }
  size_t bytes() const { return block_bytes_ * static_cast<size_t>(n_blocks_); }

  // A free block with one reference (the lowest id free), or -1 when none is.
  int32_t take();
  void retain(int32_t b);
  // Drops one reference; the block is free again at zero.
  void release(int32_t b);
  int refs(int32_t b) const;

  // Per layer: [n_blocks * block_cells][n_head_kv][head_dim] in kv_type.
  const std::vector<buffer_ptr>& k() const { return k_; }
  const std::vector<buffer_ptr>& v() const { return v_; }

 private:
  const model& model_;
  ggml_type kv_type_;
  int64_t block_cells_, n_blocks_;
  size_t block_bytes_ = 0;
  std::vector<buffer_ptr> k_, v_;
  mutable std::mutex mu_;
  std::vector<int> refs_;
  std::vector<int32_t> free_;  // a stack, lowest id on top
};

}  // namespace qf::infer
