// Decode speed of greedy decoding with and without speculation.
//
// For each of --prompts cut points in a source file (prefix of --prefix
// tokens before a line start), decodes --tokens tokens greedily with the
// target model: plainly, with prompt-lookup drafts, and with each --draft
// model (draft_model.h; its cache is warmed with the prompt first, as the
// pipeline's background task does). Prints decode tokens/s (median over the
// prompts, prompt evaluation excluded), drafted/accepted tokens, and whether
// each mode's tokens equal plain greedy's (they must).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_args.h"
#include "server/completion/decode/draft_model.h"
#include "server/completion/decode/engine_backend.h"
#include "server/completion/decode/generator.h"

using namespace qf::server::completion;

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct mode_result {
  std::string name;
  std::vector<double> tps;
  int64_t drafted = 0, accepted = 0, mismatches = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::string model, file = std::string(QF_SOURCE_DIR) + "/server/completion/pipeline/pipeline.cpp";
  std::vector<std::string> drafts;
  int threads = 2, tokens = 64, prompts = 4, prefix = 256, draft_max = 8;
  double min_prob = 0.5;
  qf::bench::arg_reader args("draft_speculation", argc, argv);
  while (args.next()) {
    if (args.is("--model")) model = args.value();
    else if (args.is("--draft")) drafts.push_back(args.value());
    else if (args.is("--file")) file = args.value();
    else if (args.is("--threads")) threads = args.int_value();
    else if (args.is("--tokens")) tokens = args.int_value();
    else if (args.is("--prompts")) prompts = args.int_value();
    else if (args.is("--prefix")) prefix = args.int_value();
    else if (args.is("--draft-max")) draft_max = args.int_value();
    else if (args.is("--min-prob")) min_prob = args.double_value();
    else {
      std::fprintf(stderr,
                   "usage: draft_speculation --model GGUF [--draft GGUF]... [--file F] [--threads N] [--tokens N]\n"
                   "       [--prompts N] [--prefix TOKENS] [--draft-max N] [--min-prob P]\n");
      return args.usage_status();
    }
  }
  if (model.empty()) {
    std::fprintf(stderr, "draft_speculation: --model is required\n");
    return 2;
  }
  engine_options eo;
  eo.threads = threads;
  std::string err;
  std::unique_ptr<lm_backend> target = load_engine_backend(model, eo, &err);
  if (!target) {
    std::fprintf(stderr, "draft_speculation: %s\n", err.c_str());
    return 1;
  }
  const int64_t n_ctx = prefix + tokens + draft_max + 8;
  std::vector<std::unique_ptr<model_drafter>> drafters;
  for (const std::string& d : drafts) {
    std::unique_ptr<lm_backend> b = load_engine_backend(d, eo, &err);
    if (!b) {
      std::fprintf(stderr, "draft_speculation: %s\n", err.c_str());
      return 1;
    }
    const std::string why = draft_vocab_mismatch(target->vocab(), b->vocab());
    if (!why.empty()) {
      std::fprintf(stderr, "draft_speculation: %s cannot draft: %s\n", d.c_str(), why.c_str());
      return 1;
    }
    drafters.push_back(std::make_unique<model_drafter>(std::move(b), n_ctx, 3, min_prob));
  }

  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string src = ss.str();
  const std::vector<int32_t> all = target->vocab().encode(src);
  if (static_cast<int64_t>(all.size()) < prefix + 1) {
    std::fprintf(stderr, "draft_speculation: %s is shorter than %d tokens\n", file.c_str(), prefix);
    return 1;
  }

  const fim_format fmt = detect_fim_format(target->vocab());
  cursor_context cx = make_cursor_context("", 0, 0);
  trigger_decision dec;
  dec.multi_line = true;
  std::vector<mode_result> modes(2 + drafters.size());
  modes[0].name = "greedy";
  modes[1].name = "prompt lookup";
  for (size_t d = 0; d < drafters.size(); ++d) modes[2 + d].name = "draft " + drafters[d]->describe();

  for (int k = 0; k < prompts; ++k) {
    const size_t at = static_cast<size_t>(prefix) +
                      static_cast<size_t>(k) * (all.size() - static_cast<size_t>(prefix)) / std::max(prompts, 1);
    std::vector<int32_t> prompt(all.begin() + static_cast<int64_t>(at) - prefix, all.begin() + static_cast<int64_t>(at));
    std::vector<int32_t> reference;
    for (size_t m = 0; m < modes.size(); ++m) {
      auto seq = target->new_sequence(n_ctx);
      gen_params p;
      p.max_tokens = tokens;
      p.stop_rules = false;
      p.prompt_chunk = 512;
      p.speculative = m > 0;
      p.draft_max = draft_max;
      if (m >= 2) {
        p.draft = drafters[m - 2].get();
        drafters[m - 2]->warm(prompt, 512, {});
      }
      gen_outcome out;
      if (!eval_prompt(*seq, prompt, p, {}, out)) return 1;
      stop_checker stops(cx, dec, false);
      const auto t0 = std::chrono::steady_clock::now();
      decode(*seq, target->vocab(), fmt, prompt, take_first_row(*seq), stops, p, nullptr, {}, out);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      modes[m].tps.push_back(static_cast<double>(out.generated.size()) / s);
      modes[m].drafted += out.drafted;
      modes[m].accepted += out.accepted;
      if (m == 0) reference = out.generated;
      else if (out.generated != reference) ++modes[m].mismatches;
    }
  }
  std::printf("draft_speculation: %s, %d prompts of %d tokens from %s, %d tokens each, %d threads, draftMax %d, "
              "min prob %.2f\n",
              target->describe().c_str(), prompts, prefix, file.c_str(), tokens, threads, draft_max, min_prob);
  const double base = median(modes[0].tps);
  for (const mode_result& m : modes)
    std::printf("  %-48s %7.2f tok/s (x%.2f)  drafted %5lld accepted %5lld (%4.1f%%)  differs from greedy: %lld\n",
                m.name.c_str(), median(m.tps), base > 0 ? median(m.tps) / base : 0.0,
                static_cast<long long>(m.drafted), static_cast<long long>(m.accepted),
                m.drafted ? 100.0 * static_cast<double>(m.accepted) / static_cast<double>(m.drafted) : 0.0,
                static_cast<long long>(m.mismatches));
  return 0;
}
