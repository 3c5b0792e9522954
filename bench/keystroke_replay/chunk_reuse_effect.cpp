// chunk_reuse_effect: what does shifting cached chunks (move_range) after a
// deletion mid-prompt do to the output, and what does it save?
//
// For positions in real files, the pipeline first completes at the cursor,
// then a line above the cursor (inside the prefix window) is deleted and it
// completes again. The second completion is computed twice: reusing the
// cached tokens after the deletion by shifting them (reuseShiftedChunks on),
// and from a cold cache (the exact result). Greedy decoding with a fixed
// length and no stop rules; the tool prints how often the two outputs are
// identical, the mean length of their common prefix, and the prompt tokens
// each evaluated.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/bench_args.h"
#include "bench/completion_bench.h"
#include "server/completion/pipeline/pipeline.h"

using namespace qf::server;
using namespace qf::server::completion;

namespace {

completion_request make_req(const std::string& text, int64_t line) {
  completion_request r;
  r.uri = "file:///bench/f.py";
  r.text = text;
  r.cursor = {line, 0};
  r.explicit_trigger = true;
  r.received = clock::now();
  return r;
}

std::string erase_line(const std::string& text, int64_t line) {
  size_t b = 0;
  for (int64_t l = 0; l < line; ++l) b = text.find('\n', b) + 1;
  size_t e = text.find('\n', b);
  return text.substr(0, b) + text.substr(e + 1);
}

}  // namespace

int main(int argc, char** argv) {
  std::string model;
  std::vector<std::string> files = {"/usr/lib/python3.11/textwrap.py", "/usr/lib/python3.11/shlex.py"};
  int per_file = 6, threads = 2, tokens = 16;
  const char* usage = "usage: chunk_reuse_effect --model FILE.gguf [--files a,b] [--positions N] [--threads N] [--tokens N]";
  qf::bench::arg_reader args("chunk_reuse_effect", argc, argv);
  while (args.next()) {
    if (args.is("--model")) model = args.value();
    else if (args.is("--files")) files = args.list_value();
    else if (args.is("--positions")) per_file = args.int_value();
    else if (args.is("--threads")) threads = args.int_value();
    else if (args.is("--tokens")) tokens = args.int_value();
    else return std::puts(usage), args.usage_status();
  }
  if (model.empty()) {
    std::puts(usage);
    return 2;
  }
  auto backend = qf::bench::load_cpu_backend("chunk_reuse_effect", model, threads);
  if (!backend) return 1;
  completion_settings base;
  base.stop_rules = false;
  base.type_through = false;
  base.speculative = false;
  base.rebase_when_idle = false;
  base.min_chunk_tokens = 16;
  base.max_tokens_explicit = tokens;
  completion_settings shift_on = base, cold = base;
  shift_on.reuse_shifted_chunks = true;
  shift_on.cache_mib = 256;
  cold.reuse_shifted_chunks = false;
  cold.cache_mib = 257;
  pipeline p(std::move(backend), shift_on);
  int cases = 0, identical = 0, shifted_cases = 0;
  double common_sum = 0, ev_shift = 0, ev_cold = 0;
  for (const std::string& path : files) {
    const std::string text = qf::bench::read_file(path);
    const int64_t n_lines = std::count(text.begin(), text.end(), '\n');
    for (int k = 0; k < per_file && n_lines > 40; ++k) {
      const int64_t line = 20 + (n_lines - 40) * (k + 1) / (per_file + 1);
      const int64_t del = line - 3 - (k % 5);
      std::string edited = erase_line(text, del);
      p.configure(shift_on);  // reset caches (cacheMiB differs from the previous configuration)
      p.complete(make_req(text, line), {});
      completion_result a = p.complete(make_req(edited, line - 1), {});
      p.configure(cold);
      completion_result b = p.complete(make_req(edited, line - 1), {});
      const std::string sa = a.items.empty() ? "" : a.items[0].insert_text;
      const std::string sb = b.items.empty() ? "" : b.items[0].insert_text;
      size_t common = 0;
      while (common < sa.size() && common < sb.size() && sa[common] == sb[common]) ++common;
      ++cases;
      identical += sa == sb;
      common_sum += sb.empty() ? 1.0 : double(common) / double(sb.size());
      ev_shift += double(a.metrics.tokens_evaluated);
      ev_cold += double(b.metrics.tokens_evaluated);
      shifted_cases += a.metrics.tokens_evaluated < b.metrics.tokens_evaluated / 2;
    }
  }
  if (!cases) {
    std::puts("chunk_reuse_effect: no usable positions");
    return 1;
  }
  std::printf("chunk_reuse_effect: %s, %d cases (a line deleted 3-7 lines above the cursor)\n", p.describe().c_str(), cases);
  std::printf("  outputs identical to a cold evaluation  %d/%d\n", identical, cases);
  std::printf("  mean common prefix of the outputs        %.0f%% of the cold output\n", 100.0 * common_sum / cases);
  std::printf("  prompt tokens evaluated                  %.0f with shifting vs %.0f cold (mean), shift used in %d cases\n",
              ev_shift / cases, ev_cold / cases, shifted_cases);
  return 0;
}
