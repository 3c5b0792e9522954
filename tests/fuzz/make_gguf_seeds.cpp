// Writes the seed files of corpus/fuzz_gguf/: tiny synthetic models of every
// architecture the loader knows (the smallest shapes the loader accepts, so the seeds stay a few KB)
// in the tensor types the engine supports for small rows.
// Usage: make_gguf_seeds <output folder>
#include <cstdio>
#include <string>

#include "inference/core/ggml_types.h"
#include "tests/inference/model/synthetic.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_gguf_seeds <output folder>\n");
    return 2;
  }
  const std::string dir = argv[1];
  struct seed {
    const char* name;
    const char* arch;
    int embd;
    qf::infer::ggml_type type;
    bool rope_freqs;
    bool yarn = false;
  };
  const seed seeds[] = {
      {"llama-f32.gguf", "llama", 8, qf::infer::ggml_type::f32, false},
      {"llama-f16-rope-freqs.gguf", "llama", 8, qf::infer::ggml_type::f16, true},
      {"qwen2-f32.gguf", "qwen2", 8, qf::infer::ggml_type::f32, false},
      {"llama-q8_0.gguf", "llama", 32, qf::infer::ggml_type::q8_0, false},
      {"qwen3-f32.gguf", "qwen3", 8, qf::infer::ggml_type::f32, false},
      {"qwen2-f32-yarn.gguf", "qwen2", 8, qf::infer::ggml_type::f32, false, true},
      {"starcoder2-f32.gguf", "starcoder2", 8, qf::infer::ggml_type::f32, false},
      {"gemma-f32.gguf", "gemma", 8, qf::infer::ggml_type::f32, false},
      {"granite-f32.gguf", "granite", 8, qf::infer::ggml_type::f32, false},
  };
  for (const seed& s : seeds) {
    qf::test::synth_config c;
    c.arch = s.arch;
    c.n_embd = s.embd;
    c.n_layer = 1;
    c.n_head = 2;
    c.n_head_kv = 1;
    c.n_ff = s.embd * 2;
    c.n_ctx_train = 64;
    c.tied = true;
    c.rope_freqs = s.rope_freqs;
    c.yarn = s.yarn;
    c.wtype = s.type;
    qf::test::write_gguf(qf::test::make_synth(c), dir + "/" + s.name);
    std::printf("wrote %s/%s\n", dir.c_str(), s.name);
  }
  return 0;
}
