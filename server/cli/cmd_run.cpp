// `quickfill run`: load a GGUF model, evaluate a prompt, generate N tokens.
//
// stdout carries the generated text alone (streamed through the detokenizer,
// so multi-byte characters are never split), nothing else, so that scripts can
// compare outputs; model description and prompt/generation speeds go to
// stderr. -n counts generated tokens. An empty prompt starts from BOS alone;
// then, for SentencePiece vocabularies, the first piece's leading space is
// dropped (as llama2.c's run.c and SentencePiece decoding do), so
// `run -m stories260K.gguf -n 200 --temp 0` prints what llama2.c prints for
// `-t 0 -n 200` (its 200 steps count the BOS position and print the 200 tokens
// sampled after positions 0..199). Generation stops early at an
// end-of-generation token or at BOS (llama2.c's sequence delimiter) unless
// --ignore-eos.
//
// Hidden test hooks: --dump-logits FILE writes every position's logits (the
// prompt evaluated as one prefill with all logits, then each decode step) for
// tools/reference/reference_forward.py; --ubatch and --kv-type set the
// context options.
#include <cstdio>
#include <exception>
#include <fstream>

#include "inference/model/context.h"
#include "inference/sampling/sampler.h"
#include "inference/tokenizer/tokenizer.h"
#include "server/cli/cli_args.h"
#include "server/cli/cli_model.h"
#include "server/cli/commands.h"
#include "server/core/settings.h"

namespace qf::cli {
namespace {

// QFLOGIT1, int32 n_rows, n_vocab, n_prompt, int32 tokens[n_rows], float32 logits[n_rows][n_vocab].
class logits_dump {
 public:
  bool open(const std::string& path) {
    path_ = path;
    return !path.empty();
  }
  void add(int32_t token, std::span<const float> row) {
    tokens_.push_back(token);
    rows_.insert(rows_.end(), row.begin(), row.end());
    n_vocab_ = static_cast<int32_t>(row.size());
  }
  bool write(int32_t n_prompt) const {
    std::ofstream out(path_, std::ios::binary);
    int32_t hdr[3] = {static_cast<int32_t>(tokens_.size()), n_vocab_, n_prompt};
    out.write("QFLOGIT1", 8);
    out.write(reinterpret_cast<const char*>(hdr), sizeof hdr);
    out.write(reinterpret_cast<const char*>(tokens_.data()), static_cast<std::streamsize>(tokens_.size() * 4));
    out.write(reinterpret_cast<const char*>(rows_.data()), static_cast<std::streamsize>(rows_.size() * 4));
    return static_cast<bool>(out);
  }

 private:
  std::string path_;
  std::vector<int32_t> tokens_;
  std::vector<float> rows_;
  int32_t n_vocab_ = 0;
};

}  // namespace

int cmd_run(std::span<char*> args) {
  std::string model_path, prompt, prompt_file, device = "auto", dump_path, kv_type = "f16";
  int64_t n_predict = 128, n_ctx = 0, n_ubatch = 512;
  int n_threads = 0;
  bool ignore_eos = false, special = false, no_bos = false;
  infer::sampler_params sp;
  sp.temperature = 0.8f;
  arg_parser p("quickfill run",
               "Generates text from a prompt. The generated text alone goes to stdout;\n"
               "speeds go to stderr. An empty prompt starts from BOS.");
  p.add_string({"-m", "--model"}, &model_path, "GGUF model file (required)");
  p.add_string({"-p", "--prompt"}, &prompt, "prompt text (default empty: start from BOS)");
  p.add_string({"-f", "--file"}, &prompt_file, "read the prompt from a file");
  p.add_int({"-n", "--n-predict"}, &n_predict, "tokens to generate (default 128)");
  p.add_float({"--temp"}, &sp.temperature, "temperature; 0 = greedy (default 0.8)");
  p.add_u64({"--seed"}, &sp.seed, "sampler seed (default 0)");
  p.add_int({"-t", "--threads"}, &n_threads, "threads (default: all cores)");
  p.add_int({"--top-k"}, &sp.top_k, "top-k, 0 = off (default 40)");
  p.add_float({"--top-p"}, &sp.top_p, "top-p, 1 = off (default 1)");
  p.add_float({"--min-p"}, &sp.min_p, "min-p, 0 = off (default 0)");
  p.add_float({"--repeat-penalty"}, &sp.repeat_penalty, "repetition penalty, 1 = off (default 1)");
  p.add_int({"--repeat-last-n"}, &sp.repeat_last_n, "tokens the penalty looks back on (default 64)");
  p.add_int({"-c", "--ctx-size"}, &n_ctx, "context size (default: prompt + n, capped by the model's)");
  p.add_string({"--device"}, &device, "auto | cpu | cuda (default auto)");
  p.add_flag({"--ignore-eos"}, &ignore_eos, "do not stop at end-of-generation tokens");
  p.add_flag({"--special"}, &special, "turn special-token spellings in the prompt into those tokens");
  p.add_flag({"--no-bos"}, &no_bos, "do not add BOS even if the vocabulary asks for it");
  p.add_string({"--dump-logits"}, &dump_path, "write every position's logits to FILE", true);
  p.add_int({"--ubatch"}, &n_ubatch, "prefill ubatch size", true);
  p.add_string({"--kv-type"}, &kv_type, "KV cache type f16|f32", true);
  if (!p.parse(args)) return p.exit_code();
  if (!prompt_file.empty() && !read_text_file("quickfill run", prompt_file, prompt)) return 1;
  if (n_predict < 0) {
    std::fprintf(stderr, "quickfill run: -n must be >= 0\n");
    return 2;
  }
  if (kv_type != "f16" && kv_type != "f32") {
    std::fprintf(stderr, "quickfill run: --kv-type must be f16 or f32\n");
    return 2;
  }

  auto m = load_model_or_report("quickfill run", model_path, n_threads, device);
  if (!m) return 1;
  try {
    const infer::tokenizer& tok = m->vocab();
    const auto& sp_ids = tok.special();
    std::vector<int32_t> toks = tok.encode(prompt, !no_bos && tok.add_bos_default(), special);
    const bool from_bos = toks.empty() || (toks.size() == 1 && toks[0] == sp_ids.bos);
    if (toks.empty()) {
      if (sp_ids.bos < 0) {
        std::fprintf(stderr, "quickfill run: empty prompt and the vocabulary has no BOS token\n");
        return 1;
      }
      toks.push_back(sp_ids.bos);
    }
    const int64_t n_prompt = static_cast<int64_t>(toks.size());
    infer::context_options co;
    co.step_graphs = server::step_graphs_from_environment();  // QUICKFILL_STEP_GRAPHS=0: direct launches
    co.n_ctx = n_ctx > 0 ? n_ctx : n_prompt + n_predict;
    if (n_ctx <= 0 && m->hp().n_ctx_train > 0 && co.n_ctx > m->hp().n_ctx_train) co.n_ctx = m->hp().n_ctx_train;
    co.n_ubatch = n_ubatch;
    co.kv_type = kv_type == "f32" ? infer::ggml_type::f32 : infer::ggml_type::f16;
    if (n_prompt + std::max<int64_t>(n_predict - 1, 0) > co.n_ctx) {
      std::fprintf(stderr, "quickfill run: prompt (%lld tokens) + %lld generated do not fit in a context of %lld\n",
                   static_cast<long long>(n_prompt), static_cast<long long>(n_predict),
                   static_cast<long long>(co.n_ctx));
      return 1;
    }
    infer::context ctx(*m, co);
    std::fprintf(stderr, "model: %s\nprompt: %lld tokens\n", m->describe().c_str(), static_cast<long long>(n_prompt));

    logits_dump dump;
    const bool dumping = dump.open(dump_path);
    double t0 = now_seconds();
    ctx.eval(toks, dumping ? infer::logits_mode::all : infer::logits_mode::last);
    double t_prompt = now_seconds() - t0;
    if (dumping)
      for (int64_t i = 0; i < n_prompt; ++i) dump.add(toks[i], ctx.logits(i));
    std::span<const float> logits = dumping ? ctx.logits(n_prompt - 1) : ctx.logits(0);

    infer::sampler smp(sp);
    infer::detokenizer detok(tok, from_bos && tok.model_kind() == "llama");
    std::vector<int32_t> history = toks;
    int64_t n_gen = 0, n_decoded = 0;
    double t1 = now_seconds();
    while (n_gen < n_predict) {
      int32_t next = smp.sample(logits, history);
      if (!ignore_eos && (tok.is_eog(next) || next == sp_ids.bos)) break;
      ++n_gen;
      history.push_back(next);
      std::string text = detok.push(next);
      if (!text.empty()) {
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
      }
      if (n_gen == n_predict) break;  // the last token need not be evaluated
      int32_t one[1] = {next};
      ctx.eval(one, infer::logits_mode::last);
      ++n_decoded;
      logits = ctx.logits(0);
      if (dumping) dump.add(next, logits);
    }
    std::string rest = detok.flush();
    std::fwrite(rest.data(), 1, rest.size(), stdout);
    std::fflush(stdout);
    double t_gen = now_seconds() - t1;
    std::fprintf(stderr, "\nprompt eval: %lld tokens in %.3f s (%.2f tokens/s)\n", static_cast<long long>(n_prompt),
                 t_prompt, t_prompt > 0 ? n_prompt / t_prompt : 0.0);
    std::fprintf(stderr, "generation:  %lld tokens in %.3f s (%.2f tokens/s, %lld decode steps)\n",
                 static_cast<long long>(n_gen), t_gen, t_gen > 0 ? n_gen / t_gen : 0.0,
                 static_cast<long long>(n_decoded));
    if (dumping && !dump.write(static_cast<int32_t>(n_prompt))) {
      std::fprintf(stderr, "quickfill run: cannot write %s\n", dump_path.c_str());
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "quickfill run: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace qf::cli
