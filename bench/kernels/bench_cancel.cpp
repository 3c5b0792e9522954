// Cost of polling a cancel_token (inference/core/cancellation.h), alone and
// where the engine polls it most often: between the row blocks of a CPU
// matmul (backend::set_interrupt). Prints ns per poll for tokens without and
// with a deadline (the deadline is one steady_clock read per poll), the raw
// clocks for comparison, and decode GEMV times of a Q8_0 matrix run without a
// token, with a plain token and with a token carrying a (far) deadline,
// alternated, medians.
//
//   bench_cancel [--polls 20000000] [--shape 151936x896] [--threads 2] [--reps 15]
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench/kernels/bench_common.h"
#include "inference/backend/cpu/ops.h"
#include "inference/core/cancellation.h"

using namespace qf;
using namespace qf::infer;

namespace {

// CPU ns per call of poll() (CPU time, so that time spent waiting for a core
// on a shared machine does not count); poll's result feeds the loop.
template <class F>
double ns_per_poll(int64_t n, F poll) {
  int64_t hits = 0;
  const double t0 = bench::cpu_s();
  for (int64_t i = 0; i < n; ++i) hits += poll() ? 1 : 0;
  const double dt = bench::cpu_s() - t0;
  if (hits == n + 1) std::printf("(unreachable)\n");  // keeps the loop
  return dt * 1e9 / static_cast<double>(n);
}

double clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t polls = std::atoll(bench::arg(argc, argv, "--polls", "20000000").c_str());
  const std::string shape = bench::arg(argc, argv, "--shape", "151936x896");
  const int n_threads = std::atoi(bench::arg(argc, argv, "--threads", "2").c_str());
  const int reps = std::atoi(bench::arg(argc, argv, "--reps", "15").c_str());

  cancel_source src, parent;
  const cancel_token none;
  const cancel_token plain = src.token();
  const cancel_token linked = src.token().linked_to(parent.token());
  const auto far = cancel_token::clock::now() + std::chrono::hours(1);
  const cancel_token with_deadline = linked.with_deadline(far);

  std::printf("bench_cancel: %lld polls each\n", static_cast<long long>(polls));
  std::printf("  %-40s %7.2f ns\n", "default token (never cancelled)", ns_per_poll(polls, [&] { return none.is_cancelled(); }));
  std::printf("  %-40s %7.2f ns\n", "source token", ns_per_poll(polls, [&] { return plain.is_cancelled(); }));
  std::printf("  %-40s %7.2f ns\n", "linked token", ns_per_poll(polls, [&] { return linked.is_cancelled(); }));
  std::printf("  %-40s %7.2f ns\n", "linked token with a deadline", ns_per_poll(polls, [&] { return with_deadline.is_cancelled(); }));
  std::printf("  %-40s %7.2f ns\n", "steady_clock::now()",
              ns_per_poll(polls, [&] { return cancel_token::clock::now() >= far; }));
  std::printf("  %-40s %7.2f ns\n", "clock_gettime(CLOCK_MONOTONIC_COARSE)",
              ns_per_poll(polls, [&] { return clock_ns(CLOCK_MONOTONIC_COARSE) < 0; }));

  // Decode GEMV with the three interrupt settings, alternated so that load on
  // the machine spreads over all three.
  const auto dims = bench::split(shape, 'x');
  const int64_t rows = std::atoll(dims.at(0).c_str()), cols = std::atoll(dims.at(1).c_str());
  const auto bytes = bench::random_weights(ggml_type::q8_0, rows, cols, 1);
  const cpu::weight_matrix w = cpu::prepare_weight(ggml_type::q8_0, rows, cols, bytes.data());
  std::vector<float> x(static_cast<size_t>(cols)), y(static_cast<size_t>(rows));
  std::mt19937 rng(2);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (float& v : x) v = nd(rng);
  cpu::thread_pool pool(n_threads);
  const cancel_token* settings[] = {nullptr, &linked, &with_deadline};
  const char* names[] = {"no token", "linked token", "linked token with a deadline"};
  std::vector<double> times[3];
  for (int r = 0; r < reps + 1; ++r)
    for (int s = 0; s < 3; ++s) {
      const double t0 = bench::now_s();
      cpu::matmul(pool, w, x.data(), 1, y.data(), settings[s]);
      if (r > 0) times[s].push_back((bench::now_s() - t0) * 1e6);  // the first round warms up
    }
  const int64_t chunk_rows = std::max<int64_t>(64, static_cast<int64_t>((256 << 10) / w.row_bytes));
  std::printf("GEMV q8_0 %lldx%lld (%.0f MiB, %d threads, ~%lld row blocks polled), median of %d:\n",
              static_cast<long long>(rows), static_cast<long long>(cols), static_cast<double>(bytes.size()) / (1 << 20),
              n_threads, static_cast<long long>((rows + chunk_rows - 1) / chunk_rows), reps);
  for (int s = 0; s < 3; ++s) std::printf("  %-40s %9.1f us\n", names[s], bench::median(times[s]));
  return 0;
}
