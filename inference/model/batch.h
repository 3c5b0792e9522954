// Several sequences evaluated in one forward pass.
//
// Each entry appends tokens to its own context, exactly as context::eval
// would alone; a batch puts the rows of all entries into one pass, so every
// weight matrix is read once for all of them (on a memory-bound CPU, B decode
// tokens cost little more than one; on a GPU the matmuls become GEMMs). Only
// the KV store and the attention are per sequence: each entry's keys and
// values go to its context's cache, and its queries attend over that cache
// only, with the same kernels as alone.
//
// Layout of a pass: the rows whose logits nobody asked for come first, the
// output rows last (the architectures compute logits for the last n_out rows),
// so an entry in mode `last` contributes two segments: its prompt rows at the
// front and its final row at the back, both at their own positions of its
// sequence (the front one is stored before the back one attends). A pass
// takes at most max_rows rows; entries that do not fit wait for the next
// pass, and a long entry is split across passes (prefill chunks next to
// other entries' decode tokens).
//
// Exactness: an entry's outputs are what it would get alone, up to the
// matmul kernels' summation order, which depends on the number of rows of a
// pass (a one-row pass takes the GEMV path, several rows the tiled GEMM path;
// alone, a prefill already takes the latter): logits agree within the
// backend tests' tolerance and greedy text is the same.
//
// Cancellation: the batch's own token stops the pass under way (nothing of it
// is committed); an entry's token only takes that entry out: its rows of the
// pass under way are not committed (the cells they wrote lie past its cached
// tokens and are overwritten later), and the others go on unchanged. Passes
// run op by op (no step graphs).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "inference/core/cancellation.h"
#include "inference/model/context.h"

namespace qf::infer {

struct batch_entry {
  context* ctx = nullptr;
  std::span<const int32_t> tokens;  // appended to ctx
  logits_mode mode = logits_mode::last;
  cancel_token cancel{};             // this entry's own
  eval_result result{};              // set by batch::eval
};

struct context_state;  // context_state.h
class buffer;          // inference/backend/backend.h
using buffer_ptr = std::unique_ptr<buffer>;

class batch {
 public:
  // Scratch for passes of up to max_rows rows. Throws model_error if
  // max_rows < 1 or the backend cannot allocate it. The model must outlive it.
  explicit batch(const model& m, int64_t max_rows = 64);
  ~batch();
  batch(const batch&) = delete;
  batch& operator=(const batch&) = delete;

  int64_t max_rows() const;

  // Evaluates every entry; afterwards each entry's context reads as if it
  // had run ctx->eval(tokens, mode, cancel, kind) (tokens(), logits(i),
  // argmax(i)) and entry.result says how many of its tokens were committed.
  // Throws model_error, before any work, if an entry has no context, another
  // model's, another KV type, a context that appears twice, or tokens that
  // do not fit or are out of range.
  void eval(std::span<batch_entry> entries, output_kind kind, const cancel_token& cancel = {});

  size_t n_passes() const { return n_passes_; }  // forward passes run so far (tests)

 private:
  const model& model_;
  std::unique_ptr<context_state> st_;
  std::vector<buffer_ptr> seg_pos_;  // int32 [max_rows] positions of each segment of a pass
  std::vector<int32_t> ids_host_, pos_host_;
  size_t n_passes_ = 0;
};

}  // namespace qf::infer
