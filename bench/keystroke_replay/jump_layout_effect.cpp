// jump_layout_effect: what does the quick layout after a cursor jump
// (completion.jumpPrefixTokens, docs/completion.md "Cursor jumps") do to the
// first suggestion there, and what does it save?
//
// For places in real files: the pipeline completes at a first place (so the
// document has a layout and the cache a prompt), then the cursor jumps to a
// cut through a random line far from it (the rest of the line taken out: the
// truth) and it completes there. Two pipelines on the same model do this: one
// with the quick layout (the jump's first prompt holds --jump-prefix tokens of
// prefix), one without (jumpPrefixTokens 0: the whole layout at once). Greedy
// decoding, a fixed length, no stop rules; it prints how often the two
// suggestions are identical, how often each starts with the truth's first
// word and matches the whole rest of the line, and the prompt tokens each
// evaluated at the jump.
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_args.h"
#include "bench/completion_bench.h"
#include "server/completion/pipeline/pipeline.h"

using namespace qf::server;
using namespace qf::server::completion;

namespace {

completion_request make_req(const std::string& text, int64_t line, int64_t col) {
  completion_request r;
  r.uri = "file:///bench/jump.py";
  r.text = text;
  r.cursor = {line, col};
  r.explicit_trigger = true;
  r.received = clock::now();
  return r;
}

struct tally {
  int first_word = 0, whole_line = 0;
  double evaluated = 0;
  void add(const std::string& got, const std::string& truth, int64_t ev) {
    evaluated += static_cast<double>(ev);
    std::string t = truth;
    t.erase(0, t.find_first_not_of(" \t"));
    const size_t word_end = t.find_first_of(" \t(),.:=[]");
    const std::string word = t.substr(0, word_end == std::string::npos ? t.size() : std::max<size_t>(word_end, 1));
    std::string g = got;
    g.erase(0, g.find_first_not_of(" \t"));
    first_word += !word.empty() && g.starts_with(word);
    whole_line += !t.empty() && g.starts_with(t);
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::string model;
  std::vector<std::string> files = {"/usr/lib/python3.11/argparse.py", "/usr/lib/python3.11/textwrap.py",
                                    "/usr/lib/python3.11/shlex.py"};
  int per_file = 8, threads = 2, tokens = 16, jump_prefix = 96;
  unsigned seed = 1;
  const char* usage =
      "usage: jump_layout_effect --model FILE.gguf [--files a,b] [--positions N] [--threads N] [--tokens N]\n"
      "         [--jump-prefix N] [--seed N]";
  qf::bench::arg_reader args("jump_layout_effect", argc, argv);
  while (args.next()) {
    if (args.is("--model")) model = args.value();
    else if (args.is("--files")) files = args.list_value();
    else if (args.is("--positions")) per_file = args.int_value();
    else if (args.is("--threads")) threads = args.int_value();
    else if (args.is("--tokens")) tokens = args.int_value();
    else if (args.is("--jump-prefix")) jump_prefix = args.int_value();
    else if (args.is("--seed")) seed = args.unsigned_value();
    else return std::puts(usage), args.usage_status();
  }
  if (model.empty() || jump_prefix <= 0) {
    std::puts(usage);
    return 2;
  }
  auto backend_quick = qf::bench::load_cpu_backend("jump_layout_effect", model, threads);
  auto backend_whole = qf::bench::load_cpu_backend("jump_layout_effect", model, threads);
  if (!backend_quick || !backend_whole) return 1;
  completion_settings base;
  base.stop_rules = false;
  base.type_through = false;
  base.speculative = false;
  base.max_tokens_explicit = tokens;
  base.sampling_explicit = sampling_settings{.candidates = 1};
  completion_settings quick = base, whole = base;
  quick.jump_prefix_tokens = jump_prefix;
  whole.jump_prefix_tokens = 0;
  pipeline pq(std::move(backend_quick), quick);
  pipeline pw(std::move(backend_whole), whole);
  std::mt19937 rng(seed);
  int cases = 0, identical = 0, quick_layouts = 0;
  tally tq, tw;
  for (const std::string& path : files) {
    const std::string text = qf::bench::read_file(path);
    const std::vector<std::string_view> lines = qf::text::split_lines(text);
    if (lines.size() < 200) continue;
    for (int k = 0; k < per_file; ++k) {
      std::optional<qf::bench::cut_point> cut = qf::bench::random_cut(text, lines, rng);
      if (!cut) continue;
      // The first place: at least 150 lines away from the cut (beyond any window).
      const int64_t n = static_cast<int64_t>(lines.size());
      const int64_t cl = static_cast<int64_t>(cut->line);
      int64_t first = -1;
      if (cl >= 150) first = std::uniform_int_distribution<int64_t>(0, cl - 150)(rng);
      else if (cl + 150 < n) first = std::uniform_int_distribution<int64_t>(cl + 150, n - 1)(rng);
      if (first < 0) continue;
      std::string out[2];
      int64_t ev[2] = {0, 0};
      pipeline* ps[2] = {&pq, &pw};
      for (int i = 0; i < 2; ++i) {
        ps[i]->document_closed("file:///bench/jump.py");
        ps[i]->complete(make_req(cut->doc, first, 0), {});
        completion_result r =
            ps[i]->complete(make_req(cut->doc, static_cast<int64_t>(cut->line), static_cast<int64_t>(cut->col)), {});
        out[i] = r.items.empty() ? "" : qf::bench::added_text(r.items[0]);
        ev[i] = r.metrics.tokens_evaluated;
        if (i == 0 && ps[i]->layout_of("file:///bench/jump.py") && ps[i]->layout_of("file:///bench/jump.py")->quick)
          ++quick_layouts;
      }
      ++cases;
      identical += out[0] == out[1];
      tq.add(out[0], cut->truth, ev[0]);
      tw.add(out[1], cut->truth, ev[1]);
    }
  }
  if (!cases) {
    std::puts("jump_layout_effect: no usable positions");
    return 1;
  }
  std::printf("jump_layout_effect: %s, %d jumps (%d answered from a quick layout), %d tokens greedy\n",
              pq.describe().c_str(), cases, quick_layouts, tokens);
  std::printf("  suggestions identical, quick vs whole layout   %d/%d\n", identical, cases);
  std::printf("  starts with the truth's first word             quick %d, whole %d\n", tq.first_word, tw.first_word);
  std::printf("  starts with the whole rest of the line         quick %d, whole %d\n", tq.whole_line, tw.whole_line);
  std::printf("  prompt tokens evaluated at the jump (mean)     quick %.0f, whole %.0f\n", tq.evaluated / cases,
              tw.evaluated / cases);
  return 0;
}
