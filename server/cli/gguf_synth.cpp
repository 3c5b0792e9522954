// `quickfill gguf synth`: synthetic random-weight models with exact shapes
// (see inference/convert/synth_model.h). The q4_k_m mix is produced by writing
// an unquantized temporary file and running the same quantizer as
// `quickfill gguf quantize`.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <optional>

#include "inference/convert/synth_model.h"
#include "server/cli/cli_args.h"
#include "server/cli/gguf_commands.h"
#include "server/cli/gguf_quantize.h"

namespace qf::cli {

int gguf_synth(std::span<char*> args) {
  std::string arch, preset = "tiny", out, type = "f32", name;
  int64_t vocab = 0, dim = 0, layers = 0, heads = 0, kv_heads = 0, ff = 0, ctx = 0;
  uint64_t seed = 1;
  float init_std = 0, yarn = 0;
  int64_t yarn_orig_ctx = 0;
  arg_parser p("quickfill gguf synth",
               "Writes a GGUF model with random weights and the exact shapes of a preset\n"
               "(qwen2.5-coder-0.5b, qwen2.5-coder-1.5b, tiny); shape options override the preset.");
  p.add_string({"--arch"}, &arch, "llama, qwen2, qwen3, starcoder2, gemma or granite (the Qwen presets imply qwen2; tiny defaults to llama)");
  p.add_string({"--preset"}, &preset, "qwen2.5-coder-0.5b | qwen2.5-coder-1.5b | tiny (default)");
  p.add_string({"--type"}, &type, "f32 (default) | f16 | q8_0 | q4_0 | q4_1 | q5_0 | q5_1 | q4_k | q6_k | q4_k_m");
  p.add_string({"-o", "--output"}, &out, "output GGUF path (required)");
  p.add_u64({"--seed"}, &seed, "random seed (default 1)");
  p.add_int({"--vocab"}, &vocab, "vocabulary size (>= 512)");
  p.add_int({"--dim"}, &dim, "embedding length");
  p.add_int({"--layers"}, &layers, "number of blocks");
  p.add_int({"--heads"}, &heads, "attention heads");
  p.add_int({"--kv-heads"}, &kv_heads, "key/value heads (GQA)");
  p.add_int({"--ff"}, &ff, "feed-forward length");
  p.add_int({"--ctx"}, &ctx, "training context length written to the metadata");
  p.add_float({"--std"}, &init_std, "standard deviation of the weights (default 0.02)");
  p.add_string({"--name"}, &name, "general.name");
  p.add_float({"--yarn"}, &yarn, "YaRN rope scaling with this factor (>= 1; default: none)");
  p.add_int({"--yarn-orig-ctx"}, &yarn_orig_ctx, "YaRN's original context length (default: --ctx / factor)");
  if (!p.parse(args)) return p.exit_code();
  if (out.empty()) {
    std::fprintf(stderr, "quickfill gguf synth: -o OUT.gguf is required\n");
    return 2;
  }
  std::optional<infer::ggml_type> direct;
  if (type == "f32") direct = infer::ggml_type::f32;
  else if (type == "f16") direct = infer::ggml_type::f16;
  else if (type != "q4_k_m" && !quantize_type_from_name(type)) {
    std::fprintf(stderr, "quickfill gguf synth: unknown --type '%s' (f32, f16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q6_k, q4_k_m)\n",
                 type.c_str());
    return 2;
  }
  try {
    infer::convert::synth_spec s = infer::convert::synth_preset(preset, arch);
    if (vocab) s.n_vocab = vocab;
    if (dim) s.n_embd = dim;
    if (layers) s.n_layer = layers;
    if (heads) s.n_head = heads;
    if (kv_heads) s.n_head_kv = kv_heads;
    if (ff) s.n_ff = ff;
    if (ctx) s.n_ctx = ctx;
    if (init_std != 0) s.init_std = init_std;
    if (!name.empty()) s.name = name;
    s.yarn_factor = yarn;
    s.yarn_orig_ctx = yarn_orig_ctx ? yarn_orig_ctx : static_cast<int64_t>(static_cast<float>(s.n_ctx) / std::max(1.0f, yarn));
    s.seed = seed;
    infer::convert::validate(s);
    if (direct) {
      infer::convert::write_synth_model(s, *direct, out);
    } else {
      // Large models go through an F16 temporary to halve the memory the writer holds.
      int64_t params = s.n_vocab * s.n_embd + s.n_layer * (s.n_embd * s.n_embd * 2 + 3 * s.n_embd * s.n_ff);
      auto tmp_type = params > 100'000'000 ? infer::ggml_type::f16 : infer::ggml_type::f32;
      std::string tmp = out + ".unquantized.tmp";
      infer::convert::write_synth_model(s, tmp_type, tmp);
      int rc = quantize_file(tmp, out, type);
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      if (rc != 0) return rc;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "quickfill gguf synth: %s\n", printable(e.what()).c_str());
    return 1;
  }
  std::fprintf(stderr, "wrote %s\n", out.c_str());
  return 0;
}

}  // namespace qf::cli
