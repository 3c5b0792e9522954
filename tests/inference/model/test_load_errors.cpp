// Loading errors: unknown architecture names the supported ones, a missing
// or misshapen tensor is named, an unknown device is refused, auto falls back
// to the CPU.
#include <gtest/gtest.h>

#include "inference/model/model.h"
#include "tests/inference/model/synthetic.h"

namespace qf::test {
namespace {

using infer::model;
using infer::model_error;
using infer::model_options;

write_options with_arch(const std::string& a) {
  write_options w;
  w.arch_override = a;
  return w;
}
write_options without(const std::string& t) {
  write_options w;
  w.omit = {t};
  return w;
}
write_options misshaped(const std::string& t) {
  write_options w;
  w.misshape = t;
  return w;
}

std::string load_error(const synth_model& sm, const std::string& name, const write_options& wo,
                       const std::string& device = "cpu") {
  const std::string path = temp_path(name + ".gguf");
  write_gguf(sm, path, wo);
  model_options mo;
  mo.n_threads = 1;
  mo.device = device;
  try {
    model::load(path, mo);
  } catch (const model_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(load_errors, unknown_architecture_names_supported) {
  const synth_model sm = make_synth({});
  const std::string e = load_error(sm, "gpt99", with_arch("gpt99"));
  EXPECT_NE(e.find("gpt99"), std::string::npos) << e;
  EXPECT_NE(e.find("llama"), std::string::npos) << e;
  EXPECT_NE(e.find("qwen2"), std::string::npos) << e;
}

TEST(load_errors, missing_tensor_is_named) {
  synth_config c;
  c.arch = "qwen2";
  const synth_model sm = make_synth(c);
  for (const char* t : {"blk.1.ffn_up.weight", "blk.0.attn_k.bias", "output_norm.weight", "token_embd.weight"}) {
    const std::string e = load_error(sm, std::string("missing_") + t, without(t));
    EXPECT_NE(e.find(t), std::string::npos) << e;
  }
}

TEST(load_errors, misshapen_tensor_is_named) {
  const synth_model sm = make_synth({});
  const std::string e = load_error(sm, "misshapen", misshaped("blk.0.attn_v.weight"));
  EXPECT_NE(e.find("blk.0.attn_v.weight"), std::string::npos) << e;
  EXPECT_NE(e.find("shape"), std::string::npos) << e;
}

TEST(load_errors, untied_without_output_is_tied) {
  // A llama without output.weight reuses token_embd (llama2.c style).
  synth_config c;
  c.tied = true;
  const synth_model sm = make_synth(c);
  EXPECT_EQ(load_error(sm, "tied_ok", {}), "no error");
}

TEST(load_errors, devices) {
  const synth_model sm = make_synth({});
  const std::string e = load_error(sm, "dev_bogus", {}, "tpu");
  EXPECT_NE(e.find("tpu"), std::string::npos) << e;
  EXPECT_NE(e.find("cpu"), std::string::npos) << e;
  // auto always works: CUDA when present, else the CPU.
  EXPECT_EQ(load_error(sm, "dev_auto", {}, "auto"), "no error");
}

}  // namespace
}  // namespace qf::test
