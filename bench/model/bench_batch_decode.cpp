// Batched decode: summed tokens/s of B sequences decoding at once, one
// forward pass per step for all of them (inference/model/batch.h), against
// B = 1 decoding alone (context::eval, the GEMV path). Each sequence first
// holds its own prompt (--prompt tokens, a different one per sequence); then
// --tokens greedy steps, timed. Repeated --reps times, interleaved by B; the
// median per B is printed with its ratio to B = 1.
//
//   bench_batch_decode FILE.gguf [--threads 2] [--batch 1,2,4,8] [--prompt 256]
//                      [--tokens 32] [--reps 3] [--shared-head 1000]
//
// --shared-head H: also the KV memory of 4 documents that start with one
// H-token head and go on with 20 tokens of their own, in one block pool
// (each a fork of the head: copy_prefix references its blocks), against one
// such document alone, and the same 4 documents decoded together from forks.
//
// A figure, never a test: the machine is shared; read the ratios of one run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "inference/model/batch.h"
#include "inference/model/context.h"
#include "inference/model/kv_blocks.h"
#include "inference/model/model.h"

using namespace qf::infer;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<int32_t> prompt_of(int64_t n, int64_t n_vocab, uint32_t seed) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  uint32_t x = seed * 2654435761u + 1;
  for (auto& v : t) {
    x = x * 1664525u + 1013904223u;
    v = static_cast<int32_t>((x >> 8) % static_cast<uint32_t>(std::min<int64_t>(n_vocab, 30000)));
  }
  return t;
}

// Seconds for `tokens` greedy steps of B sequences (B = 1: alone, else one batch per step).
double run(const model& m, batch& bt, int B, int64_t prompt, int tokens) {
  std::vector<std::unique_ptr<context>> ctxs;
  context_options o;
  o.n_ctx = prompt + tokens + 8;
  for (int i = 0; i < B; ++i) {
    ctxs.push_back(std::make_unique<context>(m, o));
    ctxs.back()->eval(prompt_of(prompt, m.hp().n_vocab, 7u + static_cast<uint32_t>(i)), logits_mode::last, {},
                      output_kind::argmax);
  }
  std::vector<int32_t> next(static_cast<size_t>(B));
  std::vector<batch_entry> es(static_cast<size_t>(B));
  const double t0 = now_s();
  for (int s = 0; s < tokens; ++s) {
    for (int i = 0; i < B; ++i) next[static_cast<size_t>(i)] = ctxs[static_cast<size_t>(i)]->argmax(0);
    if (B == 1) {
      ctxs[0]->eval(std::span<const int32_t>(next.data(), 1), logits_mode::last, {}, output_kind::argmax);
      continue;
    }
    for (int i = 0; i < B; ++i) {
      es[static_cast<size_t>(i)].ctx = ctxs[static_cast<size_t>(i)].get();
      es[static_cast<size_t>(i)].tokens = std::span<const int32_t>(&next[static_cast<size_t>(i)], 1);
    }
    bt.eval(es, output_kind::argmax);
  }
  return now_s() - t0;
}

// KV blocks in use for `docs` documents forked from one `head`-token head, 20 tokens each after it.
int64_t blocks_for(const model& m, int docs, int64_t head) {
  const int64_t bc = kv_blocks::k_default_block_cells;
  auto pool = std::make_shared<kv_blocks>(m, (head + 64) / bc * docs + 64, ggml_type::f16, bc);
  context_options o;
  o.n_ctx = head + 64;
  o.blocks = pool;
  context root(m, o);
  root.eval(prompt_of(head, m.hp().n_vocab, 3), logits_mode::none);
  std::vector<std::unique_ptr<context>> ds;
  for (int d = 0; d < docs; ++d) {
    ds.push_back(std::make_unique<context>(m, o));
    ds.back()->copy_prefix(root, head);
    ds.back()->eval(prompt_of(20, m.hp().n_vocab, 100u + static_cast<uint32_t>(d)), logits_mode::last);
  }
  root.clear();
  return pool->n_blocks() - pool->n_free();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_batch_decode FILE.gguf [--threads 2] [--batch 1,2,4,8] [--prompt 256] "
                         "[--tokens 32] [--reps 3]\n");
    return 2;
  }
  std::string path = argv[1], batches = "1,2,4,8";
  int threads = 2, tokens = 32, reps = 3;
  int64_t prompt = 256, shared_head = 0;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--threads") threads = std::atoi(v.c_str());
    else if (a == "--batch") batches = v;
    else if (a == "--prompt") prompt = std::atoll(v.c_str());
    else if (a == "--tokens") tokens = std::atoi(v.c_str());
    else if (a == "--reps") reps = std::atoi(v.c_str());
    else if (a == "--shared-head") shared_head = std::atoll(v.c_str());
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  std::vector<int> Bs;
  std::stringstream ss(batches);
  for (std::string x; std::getline(ss, x, ',');) Bs.push_back(std::atoi(x.c_str()));
  model_options mo;
  mo.n_threads = threads;
  auto m = model::load(path, mo);
  batch bt(*m, 64);
  std::printf("%s, %d threads, prompt %lld tokens per sequence, %d decode steps, median of %d\n",
              m->describe().c_str(), threads, static_cast<long long>(prompt), tokens, reps);
  std::vector<std::vector<double>> secs(Bs.size());
  run(*m, bt, 1, 16, 2);  // warm-up
  for (int r = 0; r < reps; ++r)
    for (size_t b = 0; b < Bs.size(); ++b) secs[b].push_back(run(*m, bt, Bs[b], prompt, tokens));
  double base = 0;
  std::printf("%4s %12s %14s %10s\n", "B", "step ms", "sum tok/s", "vs B=1");
  for (size_t b = 0; b < Bs.size(); ++b) {
    std::sort(secs[b].begin(), secs[b].end());
    const double s = secs[b][secs[b].size() / 2];
    const double tps = Bs[b] * tokens / s;
    if (Bs[b] == 1) base = tps;
    std::printf("%4d %12.1f %14.1f %9.2fx\n", Bs[b], 1000 * s / tokens, tps, base > 0 ? tps / base : 0.0);
  }
  if (shared_head > 0) {
    const int64_t one = blocks_for(*m, 1, shared_head), four = blocks_for(*m, 4, shared_head);
    const double mib = static_cast<double>(kv_blocks(*m, 1).block_bytes()) / (1 << 20);
    std::printf("KV of documents with one %lld-token head (+20 tokens each), F16, one pool: 1 document %lld blocks "
                "(%.1f MiB), 4 documents %lld blocks (%.1f MiB): %.2fx\n",
                static_cast<long long>(shared_head), static_cast<long long>(one), one * mib,
                static_cast<long long>(four), four * mib, static_cast<double>(four) / static_cast<double>(one));
  }
  return 0;
}
