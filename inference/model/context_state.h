// A context's backend memory: the KV cache and the forward pass's scratch
// buffers, allocated once when the context is created (no allocation per
// token). Shapes are per ubatch of at most n_ubatch tokens.
#pragma once

#include <cstdint>
#include <vector>

#include "inference/backend/backend.h"
#include "inference/model/model.h"

namespace qf::infer {

struct context_state {
  int64_t n_ctx = 0;
  int64_t n_ubatch = 0;
  ggml_type kv_type = ggml_type::f16;

  // The KV cache lives in a pool of blocks (kv_blocks.h); `table` is the
  // device copy of the context's block table (int32 [n_ctx / block_cells,
  // rounded up]), uploaded when it changes. None in a batch's scratch.
  buffer_ptr table;

  // Scratch, [n_ubatch][width] f32 unless noted.
  buffer_ptr ids;     // int32 [n_ubatch]   token ids
  buffer_ptr pos;     // int32 [n_ubatch]   positions
  buffer_ptr x;       // [n_ubatch][n_embd]  residual stream
  buffer_ptr xb;      // [n_ubatch][n_embd]  normed input / block output
  buffer_ptr q;       // [n_ubatch][n_head][head_dim]
  buffer_ptr k;       // [n_ubatch][n_head_kv][head_dim]
  buffer_ptr v;       // [n_ubatch][n_head_kv][head_dim]
  buffer_ptr att;     // [n_ubatch][n_head][head_dim]  attention output
  buffer_ptr gate;    // [n_ubatch][n_ff]
  buffer_ptr up;      // [n_ubatch][n_ff]
  buffer_ptr logits;  // [logits_rows][n_vocab]  grown on demand (mode all needs n_ubatch rows)
  buffer_ptr best;    // int32 [n_ubatch]  argmax of each logits row (output_kind::argmax)
  buffer_ptr best_lp; // [n_ubatch]  log-probability of that argmax (output_kind::argmax)
  int64_t logits_rows = 0;
};

// Allocates the scratch buffers of s (all but the KV cache) for passes of up
// to s.n_ubatch rows, with one row of logits (grown where more are needed).
void alloc_scratch(backend& be, const hparams& hp, context_state& s);

}  // namespace qf::infer
