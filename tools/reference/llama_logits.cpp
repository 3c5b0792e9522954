// llama.cpp's logits for the token ids of a `quickfill run --dump-logits`
// file, written in the same format (QFLOGIT1), so that reference_forward.py
// --compare and quant_agreement.py measure both engines the same way: the
// dump's prompt rows as one batch, then the remaining rows one token at a
// time, as `quickfill run` evaluated them. One thread; KV cache F16 or F32;
// flash attention off or on. Not part of the CMake build; against the
// llama.cpp that scripts/build_llama_server.sh builds:
//
//   L=build/llama-server S=build/llama.cpp-src
//   LIBS="$L/src/libllama.a $L/ggml/src/libggml.a $L/ggml/src/libggml-cpu.a $L/ggml/src/libggml-base.a"
//   g++ -O2 -std=c++17 tools/reference/llama_logits.cpp -I$S/include -I$S/ggml/include $LIBS -fopenmp -ldl -o /tmp/llama_logits
//   /tmp/llama_logits MODEL.gguf IN.dump OUT.dump [f16|f32] [0|1]
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "llama.h"

namespace {

struct dump {
  int32_t n_rows = 0, n_vocab = 0, n_prompt = 0;
  std::vector<int32_t> tokens;
};

bool read_dump(const char* path, dump& d) {
  FILE* f = std::fopen(path, "rb");
  if (!f) return false;
  char magic[8];
  int32_t hdr[3];
  bool ok = std::fread(magic, 1, 8, f) == 8 && std::memcmp(magic, "QFLOGIT1", 8) == 0 &&
            std::fread(hdr, 4, 3, f) == 3 && hdr[0] > 0 && hdr[2] > 0 && hdr[2] <= hdr[0];
  if (ok) {
    d.n_rows = hdr[0], d.n_vocab = hdr[1], d.n_prompt = hdr[2];
    d.tokens.resize(static_cast<size_t>(d.n_rows));
    ok = std::fread(d.tokens.data(), 4, d.tokens.size(), f) == d.tokens.size();
  }
  std::fclose(f);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s MODEL.gguf IN.dump OUT.dump [f16|f32] [flash-attn 0|1]\n", argv[0]);
    return 2;
  }
  dump d;
  if (!read_dump(argv[2], d)) {
    std::fprintf(stderr, "%s: not a logits dump\n", argv[2]);
    return 1;
  }
  const bool kv_f32 = argc > 4 && std::string(argv[4]) == "f32";
  const bool flash = argc > 5 && std::string(argv[5]) == "1";

  llama_backend_init();
  llama_model* model = llama_model_load_from_file(argv[1], llama_model_default_params());
  if (!model) return 1;
  if (llama_vocab_n_tokens(llama_model_get_vocab(model)) != d.n_vocab) {
    std::fprintf(stderr, "the dump's vocabulary (%d) is not the model's\n", d.n_vocab);
    return 1;
  }
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = cp.n_batch = cp.n_ubatch = static_cast<uint32_t>(d.n_rows);
  cp.n_threads = cp.n_threads_batch = 1;
  cp.type_k = cp.type_v = kv_f32 ? GGML_TYPE_F32 : GGML_TYPE_F16;
  cp.flash_attn_type = flash ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
  llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) return 1;

  const size_t nv = static_cast<size_t>(d.n_vocab);
  std::vector<float> logits(static_cast<size_t>(d.n_rows) * nv);
  llama_batch b = llama_batch_init(d.n_rows, 0, 1);
  auto run = [&](int first, int n) {
    b.n_tokens = n;
    for (int i = 0; i < n; ++i) {
      b.token[i] = d.tokens[static_cast<size_t>(first + i)];
      b.pos[i] = first + i;
      b.n_seq_id[i] = 1;
      b.seq_id[i][0] = 0;
      b.logits[i] = 1;
    }
    if (llama_decode(ctx, b) != 0) return false;
    for (int i = 0; i < n; ++i) std::memcpy(&logits[(first + i) * nv], llama_get_logits_ith(ctx, i), nv * 4);
    return true;
  };
  bool ok = run(0, d.n_prompt);
  for (int i = d.n_prompt; ok && i < d.n_rows; ++i) ok = run(i, 1);
  llama_batch_free(b);
  llama_free(ctx);
  llama_model_free(model);
  if (!ok) {
    std::fprintf(stderr, "llama_decode failed\n");
    return 1;
  }

  FILE* o = std::fopen(argv[3], "wb");
  if (!o) return 1;
  const int32_t hdr[3] = {d.n_rows, d.n_vocab, d.n_prompt};
  ok = std::fwrite("QFLOGIT1", 1, 8, o) == 8 && std::fwrite(hdr, 4, 3, o) == 3 &&
       std::fwrite(d.tokens.data(), 4, d.tokens.size(), o) == d.tokens.size() &&
       std::fwrite(logits.data(), 4, logits.size(), o) == logits.size();
  return std::fclose(o) == 0 && ok ? 0 : 1;
}
