// Decode steps allocate nothing once warm: every heap allocation in this
// binary is counted (global operator new), and a window of decode steps after
// a warm-up may allocate no more than the matmul kernel itself does per call
// (measured here on its own; zero when the kernel allocates nothing) times the
// matmuls of a step. So the engine's own code (context, backend ops,
// attention, RoPE, sampler) must not allocate. Separate executable, because
// the replaced operator new applies to the whole program.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "inference/backend/cpu/ops.h"
#include "inference/model/context.h"
#include "inference/sampling/sampler.h"
#include "tests/inference/model/model_test_util.h"

namespace {
std::atomic<int64_t> g_allocs{0};
}

// The replacements below pair malloc with free throughout. GCC 12 still
// warns where it inlines a standard allocator's call of operator new into
// code that reaches the replaced delete: it takes that new for the built-in
// one, which free must not release.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, std::align_val_t a) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  const size_t al = static_cast<size_t>(a);
  if (void* p = std::aligned_alloc(al, (n + al - 1) / al * al)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) { return operator new(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace qf::test {
namespace {

// Allocations of one warm single-token cpu::matmul call on a 2-thread pool.
int64_t matmul_allocs_per_call() {
  infer::cpu::thread_pool pool(2);
  std::vector<float> w(64 * 64, 0.5f), x(64, 1.0f), y(64);
  const auto wm = infer::cpu::prepare_weight(infer::ggml_type::f32, 64, 64, reinterpret_cast<const uint8_t*>(w.data()));
  for (int i = 0; i < 3; ++i) infer::cpu::matmul(pool, wm, x.data(), 1, y.data());
  const int64_t before = g_allocs.load();
  for (int i = 0; i < 10; ++i) infer::cpu::matmul(pool, wm, x.data(), 1, y.data());
  return (g_allocs.load() - before + 9) / 10;
}

TEST(no_alloc, decode_and_sampling_do_not_allocate_when_warm) {
  const int64_t per_matmul = matmul_allocs_per_call();
  if (per_matmul > 0) std::printf("note: the matmul kernel allocates %lld time(s) per call\n", static_cast<long long>(per_matmul));
  for (const char* arch : {"llama", "qwen2"}) {
    for (auto wtype : {infer::ggml_type::f32, infer::ggml_type::q8_0}) {
      synth_config c;
      c.arch = arch;
      c.wtype = wtype;
      const synth_model sm = make_synth(c);
      auto m = load_synth(sm, std::string("noalloc_") + arch + (wtype == infer::ggml_type::f32 ? "_f32" : "_q8"), 2);
      infer::context ctx(*m, {.n_ctx = 64, .n_ubatch = 16});
      infer::sampler s({.temperature = 0.8f, .top_k = 20, .top_p = 0.9f, .repeat_penalty = 1.1f, .seed = 1});
      ctx.eval(some_tokens(10, sm.n_vocab), infer::logits_mode::last);
      int32_t tok = s.sample(ctx.logits(), ctx.tokens());
      for (int i = 0; i < 4; ++i) {  // warm-up: scratch grows to its steady size
        ctx.eval(std::span(&tok, 1), infer::logits_mode::last);
        tok = s.sample(ctx.logits(), ctx.tokens());
      }
      const int64_t before = g_allocs.load();
      for (int i = 0; i < 20; ++i) {
        ctx.eval(std::span(&tok, 1), infer::logits_mode::last);
        tok = s.sample(ctx.logits(), ctx.tokens());
      }
      const int64_t matmuls_per_step = 7 * c.n_layer + 1;  // q k v o gate up down per layer + classifier
      EXPECT_LE(g_allocs.load() - before, 20 * matmuls_per_step * per_matmul) << arch << " " << static_cast<int>(wtype);
    }
  }
}

}  // namespace
}  // namespace qf::test
