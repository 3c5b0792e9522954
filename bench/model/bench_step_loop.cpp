// Continuous batching: summed tokens/s of B sequences, each decoded greedily
// on its own thread through a view of one step_loop (step_loop.h: the evals
// that meet make one engine batch per step), against B = 1 through the same
// loop, one sequence decoding alone on the engine (no loop), and the same B
// sequences stepped by one thread as one engine eval_batch per step (the
// loop's ceiling: what it costs is the difference). Each sequence
// first evaluates its own prompt (--prompt tokens, a different one per
// sequence, not timed); then --tokens greedy steps on every thread, timed from
// a common start to the last thread's end. Repeated --reps times, interleaved
// by B; the median per B is printed with its ratio to B = 1, the loop's
// steps with their mean entries, and the one-thread batch's tokens/s.
//
//   bench_step_loop FILE.gguf [--threads 2] [--device cpu] [--batch 1,2,4,8]
//                   [--prompt 64] [--tokens 32] [--reps 3]
//
// A figure, never a test: the machine is shared; read the ratios of one run.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_args.h"
#include "server/completion/decode/engine_backend.h"
#include "server/completion/decode/step_loop.h"

using namespace qf::server::completion;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<int32_t> prompt_of(int64_t n, int32_t n_vocab, uint32_t seed) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  uint32_t x = seed * 2654435761u + 1;
  for (auto& v : t) {
    x = x * 1664525u + 1013904223u;
    v = static_cast<int32_t>((x >> 8) % static_cast<uint32_t>(std::min<int32_t>(n_vocab, 30000)));
  }
  return t;
}

void greedy(lm_sequence& s, int tokens) {
  for (int k = 0; k < tokens; ++k) {
    const int32_t t[1] = {s.best_token(0)};
    s.eval(t, lm_logits::last, {}, lm_output::best);
  }
}

struct result {
  double seconds = 0;
  int64_t steps = 0;
};

// One sequence on the engine itself.
result run_alone(lm_backend& be, int64_t prompt, int tokens) {
  auto s = be.new_sequence(prompt + tokens + 8);
  s->eval(prompt_of(prompt, be.vocab().n_vocab(), 7u), lm_logits::last, {}, lm_output::best);
  const double t0 = now_s();
  greedy(*s, tokens);
  return {now_s() - t0, tokens};
}

// B sequences of the engine, one thread, one eval_batch per step.
result run_batch(lm_backend& be, int B, int64_t prompt, int tokens) {
  std::vector<std::unique_ptr<lm_sequence>> seqs;
  for (int i = 0; i < B; ++i) {
    seqs.push_back(be.new_sequence(prompt + tokens + 8));
    seqs.back()->eval(prompt_of(prompt, be.vocab().n_vocab(), 7u + static_cast<uint32_t>(i)), lm_logits::last, {},
                      lm_output::best);
  }
  std::vector<int32_t> next(static_cast<size_t>(B));
  std::vector<lm_batch_entry> es(static_cast<size_t>(B));
  const double t0 = now_s();
  for (int k = 0; k < tokens; ++k) {
    for (size_t i = 0; i < es.size(); ++i) {
      next[i] = seqs[i]->best_token(0);
      es[i].seq = seqs[i].get();
      es[i].toks = std::span<const int32_t>(&next[i], 1);
      es[i].mode = lm_logits::last;
    }
    be.eval_batch(es, lm_output::best);
  }
  return {now_s() - t0, tokens};
}

// B threads, each with its own view and sequence of one loop.
result run_loop(const std::shared_ptr<lm_backend>& be, int B, int64_t prompt, int tokens) {
  step_loop loop(be);
  std::vector<std::unique_ptr<lm_backend>> views;
  std::vector<std::unique_ptr<lm_sequence>> seqs;
  for (int i = 0; i < B; ++i) {
    views.push_back(loop.view(static_cast<std::uint64_t>(i + 1)));
    seqs.push_back(views.back()->new_sequence(prompt + tokens + 8));
  }
  std::mutex m;
  std::condition_variable cv;
  int ready = 0;
  bool go = false;
  std::atomic<int64_t> steps_at_start{0};
  double t0 = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < B; ++i)
    threads.emplace_back([&, i] {
      seqs[i]->eval(prompt_of(prompt, be->vocab().n_vocab(), 7u + static_cast<uint32_t>(i)), lm_logits::last, {},
                    lm_output::best);
      {
        std::unique_lock<std::mutex> l(m);
        if (++ready == B) {
          go = true;
          steps_at_start = loop.steps();
          t0 = now_s();
          cv.notify_all();
        }
        cv.wait(l, [&] { return go; });
      }
      greedy(*seqs[i], tokens);
      loop.forget(static_cast<std::uint64_t>(i + 1));
    });
  for (auto& t : threads) t.join();
  const double secs = now_s() - t0;
  return {secs, loop.steps() - steps_at_start.load()};
}

}  // namespace

int main(int argc, char** argv) {
  std::string path, device = "cpu";
  std::vector<int> Bs = {1, 2, 4, 8};
  int threads = 2, tokens = 32, reps = 3;
  int64_t prompt = 64;
  auto usage = [] {
    std::fprintf(stderr, "usage: bench_step_loop FILE.gguf [--threads 2] [--device cpu] [--batch 1,2,4,8] "
                         "[--prompt 64] [--tokens 32] [--reps 3]\n");
  };
  if (argc < 2 || argv[1][0] == '-') return usage(), 2;
  path = argv[1];
  qf::bench::arg_reader args("bench_step_loop", argc - 1, argv + 1);
  while (args.next()) {
    if (args.is("--threads")) threads = args.int_value();
    else if (args.is("--device")) device = args.value();
    else if (args.is("--batch")) Bs = args.int_list_value();
    else if (args.is("--prompt")) prompt = args.int_value();
    else if (args.is("--tokens")) tokens = args.int_value();
    else if (args.is("--reps")) reps = args.int_value();
    else return usage(), args.usage_status();
  }
  engine_options eo;
  eo.threads = threads;
  eo.device = device;
  std::string err;
  device_check_policy checks;
  checks.verdicts_file.clear();  // a bench keeps no device verdicts
  std::shared_ptr<lm_backend> be = load_engine_backend(path, eo, &err, checks);
  if (!be) {
    std::fprintf(stderr, "bench_step_loop: %s\n", err.c_str());
    return 1;
  }
  std::printf("%s, %d threads, device %s, prompt %lld tokens per sequence, %d decode steps per thread, median of %d\n",
              be->describe().c_str(), threads, device.c_str(), static_cast<long long>(prompt), tokens, reps);
  run_alone(*be, 16, 2);  // warm-up
  std::vector<double> alone;
  std::vector<std::vector<result>> runs(Bs.size());
  std::vector<std::vector<double>> batched(Bs.size());
  for (int r = 0; r < reps; ++r) {
    alone.push_back(run_alone(*be, prompt, tokens).seconds);
    for (size_t b = 0; b < Bs.size(); ++b) {
      runs[b].push_back(run_loop(be, Bs[b], prompt, tokens));
      batched[b].push_back(run_batch(*be, Bs[b], prompt, tokens).seconds);
    }
  }
  std::sort(alone.begin(), alone.end());
  const double alone_tps = tokens / alone[alone.size() / 2];
  std::printf("alone on the engine (no loop): %.1f ms/token, %.1f tok/s\n", 1000.0 / alone_tps, alone_tps);
  std::printf("%4s %10s %14s %10s %8s %14s %16s %12s\n", "B", "ms/step", "sum tok/s", "vs B=1", "steps", "entries/step",
              "1-thread batch", "loop/batch");
  double base = 0;
  for (size_t b = 0; b < Bs.size(); ++b) {
    std::sort(runs[b].begin(), runs[b].end(), [](const result& x, const result& y) { return x.seconds < y.seconds; });
    const result& med = runs[b][runs[b].size() / 2];
    const double tps = static_cast<double>(Bs[b]) * tokens / med.seconds;
    if (Bs[b] == 1) base = tps;
    std::sort(batched[b].begin(), batched[b].end());
    const double batch_tps = static_cast<double>(Bs[b]) * tokens / batched[b][batched[b].size() / 2];
    std::printf("%4d %10.1f %14.1f %9.2fx %8lld %14.2f %16.1f %11.2fx\n", Bs[b],
                1000 * med.seconds / static_cast<double>(med.steps), tps, base > 0 ? tps / base : 0.0,
                static_cast<long long>(med.steps), static_cast<double>(Bs[b]) * tokens / static_cast<double>(med.steps),
                batch_tps, tps / batch_tps);
  }
  return 0;
}
