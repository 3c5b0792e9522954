// The engine against an independent NumPy forward pass
// (tools/reference/reference_forward.py) on small synthetic models of every
// architecture (llama, qwen2, qwen3, starcoder2, gemma, granite) written by `quickfill gguf synth`: `quickfill run --dump-logits`
// records the logits of every prompt position (one prefill) and of every
// decode step; the reference recomputes them (as one prefill and token by
// token) in float64 and checks each row within a relative tolerance. Variants
// cover GQA, q/k/v biases, NEOX vs adjacent-pair RoPE, tied and untied
// classifiers, qwen3's q/k norms, starcoder2's LayerNorm and GELU MLP,
// gemma's embedding scale and GeGLU, granite's multipliers, F16 and Q8_0 weights, prefill split into several ubatches,
// and F16 vs F32 KV cache. Skips when /usr/bin/python3 with numpy is absent.
#include <gtest/gtest.h>

#include "tests/server/cli/tool_runner.h"

namespace qf::test {
namespace {

struct variant {
  const char* name;
  const char* arch;
  const char* type;      // synth --type
  const char* kv_type;   // run --kv-type
  const char* ubatch;    // run --ubatch
  const char* rtol;      // reference tolerance (relative to the row's max |logit|)
  const char* yarn = nullptr;  // synth --yarn FACTOR (original context: --ctx / factor)
};

// F32 KV: only float rounding differences remain (measured ~4e-7), with F16
// weights too (their products take the activations in f32: 3e-7 starcoder2,
// 8e-7 qwen3; rounding the activations to F16, as llama.cpp's F16 dot does,
// gives ~8e-4); F16 KV adds K/V rounding (measured ~6e-4). Q8_0 weights add
// the rounding of each product's input to Q8_0, as llama.cpp's Q8_0 dot does
// (measured 1.7e-2 starcoder2, 4.0e-2 qwen3 with F16 KV; other seeds up to
// 2.0e-2 and 3.7e-2 with F32 KV); that rounding's own precision is pinned by
// matmul.q8_0_is_the_exact_product_of_the_rounded_activations (inference_cpu_tests).
// A wrong RoPE style or a dropped bias gives ~0.4.
const variant k_variants[] = {
    {"llama_f32_kv32", "llama", "f32", "f32", "512", "1e-5"},
    {"llama_f32_kv16_ubatch5", "llama", "f32", "f16", "5", "2e-3"},
    {"llama_f16_kv16", "llama", "f16", "f16", "512", "2e-3"},
    {"qwen2_f32_kv32", "qwen2", "f32", "f32", "512", "1e-5"},
    {"qwen2_f32_kv16_ubatch7", "qwen2", "f32", "f16", "7", "2e-3"},
    {"qwen2_f16_kv16", "qwen2", "f16", "f16", "512", "2e-3"},
    {"qwen3_f32_kv32", "qwen3", "f32", "f32", "512", "1e-5"},
    {"qwen3_f32_kv16_ubatch5", "qwen3", "f32", "f16", "5", "2e-3"},
    {"qwen3_f16_kv32", "qwen3", "f16", "f32", "512", "1e-5"},
    {"qwen3_q8_0_kv16_ubatch5", "qwen3", "q8_0", "f16", "5", "6e-2"},
    {"starcoder2_f32_kv32", "starcoder2", "f32", "f32", "512", "1e-5"},
    {"starcoder2_f16_kv16_ubatch7", "starcoder2", "f16", "f16", "7", "2e-3"},
    {"starcoder2_f16_kv32", "starcoder2", "f16", "f32", "512", "1e-5"},
    {"starcoder2_q8_0_kv32", "starcoder2", "q8_0", "f32", "512", "3e-2"},
    {"gemma_f32_kv32", "gemma", "f32", "f32", "512", "1e-5"},
    {"gemma_f16_kv16", "gemma", "f16", "f16", "512", "2e-3"},
    {"granite_f32_kv32", "granite", "f32", "f32", "512", "1e-5"},
    {"granite_f32_kv16_ubatch5", "granite", "f32", "f16", "5", "2e-3"},
    {"llama_yarn4_f32_kv32", "llama", "f32", "f32", "512", "1e-5", "4"},
    {"qwen3_yarn8_f32_kv16", "qwen3", "f32", "f16", "512", "2e-3", "8"},
};

void PrintTo(const variant& v, std::ostream* os) { *os << v.name; }

class ReferenceForward : public ::testing::TestWithParam<variant> {};

TEST_P(ReferenceForward, LogitsAgreeAtEveryPosition) {
  const variant& v = GetParam();
  std::string py = python_with_numpy();
  if (py.empty()) GTEST_SKIP() << "/usr/bin/python3 with numpy not available";
  std::string dir = scratch_dir(std::string("ref_") + v.name);
  std::string model = dir + "/model.gguf", dump = dir + "/logits.bin";
  // A larger init std than the default makes the layers' nonlinearities matter.
  std::vector<std::string> synth = {"gguf", "synth", "--arch", v.arch, "--preset", "tiny", "--type", v.type,
                                    "--std", "0.08", "--seed", "7", "-o", model};
  if (v.yarn) synth.insert(synth.end(), {"--yarn", v.yarn});
  run_result s = run_quickfill(synth);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  run_result r = run_quickfill({"run", "-m", model, "-p",
                                "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n", "-n", "16",
                                "--temp", "0", "--ignore-eos", "-t", "2", "--kv-type", v.kv_type, "--ubatch",
                                v.ubatch, "--dump-logits", dump});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  run_result c = run_process(
      {py, source_dir() + "/tools/reference/reference_forward.py", model, "--compare", dump, "--rtol", v.rtol});
  std::printf("%s", c.out.c_str());
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
}

INSTANTIATE_TEST_SUITE_P(Synthetic, ReferenceForward, ::testing::ValuesIn(k_variants),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace qf::test
