// `quickfill perplexity -m MODEL -f TEXTFILE [-c CTX]`: perplexity the way
// llama.cpp's perplexity tool computes it, so that figures are comparable.
//
// The whole text is tokenized once (with BOS when the vocabulary adds one) and
// cut into consecutive windows of CTX tokens (a partial last window is not
// used). Each window is evaluated from an empty cache; when the vocabulary
// adds BOS its first token is replaced by BOS. Only the second half is scored:
// the logits at positions CTX/2 .. CTX-2 predict the tokens at CTX/2+1 ..
// CTX-1, so every scored token sees at least CTX/2 tokens of context.
// PPL = exp(mean negative log-likelihood). Progress goes to stderr; stdout's
// last line is the perplexity alone.
//
// Hidden test hooks: --dump-tokens FILE writes the text's token ids (int32,
// as tokenized, before any BOS replacement) for the NumPy reference
// (tools/reference/reference_forward.py --perplexity); --kv-type f16|f32.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>

#include "inference/model/context.h"
#include "inference/tokenizer/tokenizer.h"
#include "server/cli/cli_args.h"
#include "server/cli/cli_model.h"
#include "server/cli/commands.h"
#include "server/core/settings.h"

namespace qf::cli {

int cmd_perplexity(std::span<char*> args) {
  std::string model_path, text_path, device = "auto", dump_tokens, kv_type = "f16";
  int64_t n_ctx = 512, max_chunks = -1, n_ubatch = 512;
  int n_threads = 0;
  arg_parser p("quickfill perplexity",
               "Perplexity over a text in windows of CTX tokens, second half of each scored\n"
               "(llama.cpp's method). The last line of stdout is the perplexity.");
  p.add_string({"-m", "--model"}, &model_path, "GGUF model file (required)");
  p.add_string({"-f", "--file"}, &text_path, "text file (required)");
  p.add_int({"-c", "--ctx-size"}, &n_ctx, "window size in tokens (default 512)");
  p.add_int({"-t", "--threads"}, &n_threads, "threads (default: all cores)");
  p.add_int({"--chunks"}, &max_chunks, "evaluate at most this many windows (default all)");
  p.add_int({"-b", "--ubatch"}, &n_ubatch, "prefill ubatch size (default 512)");
  p.add_string({"--device"}, &device, "auto | cpu | cuda (default auto)");
  p.add_string({"--dump-tokens"}, &dump_tokens, "write the text's token ids to FILE", true);
  p.add_string({"--kv-type"}, &kv_type, "KV cache type f16|f32", true);
  if (!p.parse(args)) return p.exit_code();
  if (kv_type != "f16" && kv_type != "f32") {
    std::fprintf(stderr, "quickfill perplexity: --kv-type must be f16 or f32\n");
    return 2;
  }
  if (text_path.empty()) {
    std::fprintf(stderr, "quickfill perplexity: no text given (-f TEXTFILE)\n");
    return 2;
  }
  if (n_ctx < 4) {
    std::fprintf(stderr, "quickfill perplexity: -c must be at least 4\n");
    return 2;
  }
  std::string text;
  if (!read_text_file("quickfill perplexity", text_path, text)) return 1;
  auto m = load_model_or_report("quickfill perplexity", model_path, n_threads, device);
  if (!m) return 1;
  try {
    const infer::tokenizer& tok = m->vocab();
    const bool add_bos = tok.add_bos_default() && tok.special().bos >= 0;
    std::vector<int32_t> toks = tok.encode(text, add_bos);
    if (!dump_tokens.empty()) {
      std::ofstream d(dump_tokens, std::ios::binary);
      d.write(reinterpret_cast<const char*>(toks.data()), static_cast<std::streamsize>(toks.size() * sizeof(int32_t)));
      if (!d) {
        std::fprintf(stderr, "quickfill perplexity: cannot write %s\n", dump_tokens.c_str());
        return 1;
      }
    }
    int64_t n_chunks = static_cast<int64_t>(toks.size()) / n_ctx;
    if (max_chunks >= 0 && max_chunks < n_chunks) n_chunks = max_chunks;
    if (n_chunks < 1) {
      std::fprintf(stderr, "quickfill perplexity: the text has %zu tokens, fewer than one window of %lld\n",
                   toks.size(), static_cast<long long>(n_ctx));
      return 1;
    }
    std::fprintf(stderr, "model: %s\ntext: %zu tokens, %lld windows of %lld, BOS %s\n", m->describe().c_str(),
                 toks.size(), static_cast<long long>(n_chunks), static_cast<long long>(n_ctx),
                 add_bos ? "first" : "not added");
    infer::context_options co;
    co.step_graphs = server::step_graphs_from_environment();  // QUICKFILL_STEP_GRAPHS=0: direct launches
    co.n_ctx = n_ctx;
    co.n_ubatch = n_ubatch;
    co.kv_type = kv_type == "f32" ? infer::ggml_type::f32 : infer::ggml_type::f16;
    infer::context ctx(*m, co);
    const int64_t first = n_ctx / 2, n_vocab = m->hp().n_vocab;
    double nll = 0;
    int64_t n_scored = 0;
    double t0 = now_seconds();
    for (int64_t c = 0; c < n_chunks; ++c) {
      std::vector<int32_t> w(toks.begin() + c * n_ctx, toks.begin() + (c + 1) * n_ctx);
      if (add_bos) w[0] = tok.special().bos;
      ctx.clear();
      ctx.eval(w, infer::logits_mode::all);
      for (int64_t j = first; j < n_ctx - 1; ++j) {
        std::span<const float> l = ctx.logits(j);
        float mx = l[0];
        for (int64_t v = 1; v < n_vocab; ++v) mx = std::max(mx, l[v]);
        double sum = 0;
        for (int64_t v = 0; v < n_vocab; ++v) sum += std::exp(static_cast<double>(l[v]) - mx);
        nll += -(static_cast<double>(l[w[j + 1]]) - mx - std::log(sum));
        ++n_scored;
      }
      std::fprintf(stderr, "[%lld]%.4f ", static_cast<long long>(c + 1), std::exp(nll / n_scored));
    }
    double secs = now_seconds() - t0;
    std::fprintf(stderr, "\n%lld tokens scored in %.2f s (%.2f tokens/s evaluated)\n",
                 static_cast<long long>(n_scored), secs, secs > 0 ? n_chunks * n_ctx / secs : 0.0);
    std::printf("%.4f\n", std::exp(nll / n_scored));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "quickfill perplexity: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace qf::cli
