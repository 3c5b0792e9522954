// Attention over an F16 KV cache with Qwen2.5-Coder-0.5B shapes (14 query
// heads, 2 KV heads, head_dim 64): one decode step at several context
// lengths, per layer, with the portable kernel (row-by-row kernel calls), the
// AVX2 and the AVX-512 group kernels on one thread, and through the CPU
// backend's op on the thread pool; and one 512-token prefill ubatch.
//
//   bench_attention [threads=2]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "inference/backend/backend.h"
#include "inference/backend/cpu/attention.h"

using namespace qf::infer;
using clk = std::chrono::steady_clock;

namespace {
constexpr int64_t n_head = 14, n_head_kv = 2, hd = 64, group = n_head / n_head_kv;

template <class Fn>
double best_us(int reps, const Fn& fn) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = clk::now();
    fn();
    best = std::min(best, std::chrono::duration<double, std::micro>(clk::now() - t0).count());
  }
  return best;
}
}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int64_t n_ctx = 4096, row = n_head_kv * hd;
  std::mt19937 g(1);
  std::normal_distribution<float> d(0, 1);
  std::vector<float> kf(n_ctx * row), vf(n_ctx * row), q(512 * n_head * hd), out(512 * n_head * hd);
  for (auto& x : kf) x = d(g);
  for (auto& x : vf) x = d(g);
  for (auto& x : q) x = d(g);
  std::vector<fp16_t> k(kf.size()), v(vf.size());
  for (size_t i = 0; i < kf.size(); ++i) k[i] = f32_to_fp16(kf[i]), v[i] = f32_to_fp16(vf[i]);
  std::vector<float> scores(group * n_ctx);
  const float scale = 0.125f;

  auto be = make_cpu_backend(threads);
  be->reserve_attention(n_ctx, n_head);
  buffer_ptr kb = be->alloc(k.size() * 2), vb = be->alloc(v.size() * 2);
  buffer_ptr qb = be->alloc(q.size() * 4), ob = be->alloc(out.size() * 4);
  be->upload(*kb, 0, k.data(), k.size() * 2);
  be->upload(*vb, 0, v.data(), v.size() * 2);
  be->upload(*qb, 0, q.data(), q.size() * 4);

  std::printf("attention, F16 cache, %lld heads / %lld KV heads, head_dim %lld; %s; best of 20, microseconds per layer\n",
              (long long)n_head, (long long)n_head_kv, (long long)hd, be->describe().c_str());
  // The same cells read through a block table of 16-cell blocks (paged), in order
  // as a private pool hands them out, and shuffled as a shared pool may.
  std::vector<int32_t> in_order(n_ctx / 16), shuffled(n_ctx / 16);
  for (size_t b = 0; b < in_order.size(); ++b) in_order[b] = static_cast<int32_t>(b);
  shuffled = in_order;
  std::shuffle(shuffled.begin(), shuffled.end(), g);
  std::printf("%8s %14s %14s %14s %14s %14s %18s\n", "n_kv", "generic 1T", "avx2 1T", "avx512 1T", "paged 1T",
              "shuffled 1T", "backend op");
  for (int64_t n_kv : {256, 1024, 2048, 4096}) {
    auto one_thread = [&](auto kernel, const int32_t* blocks = nullptr) {
      for (int64_t gi = 0; gi < n_head_kv; ++gi) {
        const float* qg = q.data() + gi * group * hd;
        float* og = out.data() + gi * group * hd;
        kernel(qg, group, k.data() + gi * hd, v.data() + gi * hd, kv_cells{row, blocks, blocks ? 4 : 0}, n_kv, hd,
               scale, scores.data(), og);
      }
    };
    const double gen = best_us(20, [&] { one_thread(attend_group_f16_generic); });
    const double avx = attention_avx2_usable(hd) ? best_us(20, [&] { one_thread(attend_group_f16_avx2); }) : 0.0;
    const double avx512 =
        attention_avx512_usable(hd) ? best_us(20, [&] { one_thread(attend_group_f16_avx512); }) : 0.0;
    const double paged = best_us(20, [&] { one_thread(attend_group_f16, in_order.data()); });
    const double shuf = best_us(20, [&] { one_thread(attend_group_f16, shuffled.data()); });
    attention_params ap{1, n_kv - 1, n_head, n_head_kv, hd, scale, ggml_type::f16};
    const double op = best_us(20, [&] { be->attention(*qb, *kb, *vb, *ob, ap); });
    std::printf("%8lld %14.1f %14.1f %14.1f %14.1f %14.1f %18.1f\n", (long long)n_kv, gen, avx, avx512, paged, shuf, op);
  }
  attention_params pp{512, 0, n_head, n_head_kv, hd, scale, ggml_type::f16};
  const double pre = best_us(5, [&] { be->attention(*qb, *kb, *vb, *ob, pp); });
  std::printf("prefill ubatch of 512 tokens from position 0: %.1f us per layer (backend op)\n", pre);
  return 0;
}
