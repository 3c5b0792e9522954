// A loaded model does not depend on its file: truncating the file, or
// rewriting it in place with another model (what `cp new.gguf model.gguf`
// does to a served model), leaves every later evaluation bit-identical. With
// the weights mapped from the file, the first would end the process with
// SIGBUS and the second would silently change the weights.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include "tests/inference/model/model_test_util.h"

namespace qf::test {
namespace {

using namespace qf::infer;

void overwrite_in_place(const std::string& path, const std::string& from) {
  std::ifstream in(from, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);  // same inode, truncated then written
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

ino_t inode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  return st.st_ino;
}

class model_file : public ::testing::TestWithParam<ggml_type> {};

TEST_P(model_file, evaluation_is_unchanged_after_the_file_is_truncated_or_rewritten) {
  synth_config c;
  c.arch = "qwen2";
  c.wtype = GetParam();
  c.n_layer = 3;
  const synth_model sm = make_synth(c);
  const std::string path = temp_path(std::string("served_") + std::string(traits(c.wtype).name) + ".gguf");
  write_gguf(sm, path);
  model_options mo;
  mo.n_threads = 2;
  mo.device = "cpu";
  auto m = model::load(path, mo);
  const ino_t inode = inode_of(path);

  const auto toks = some_tokens(16, m->hp().n_vocab);
  const std::span<const int32_t> prompt(toks.data(), 15), next(toks.data() + 15, 1);
  context_options co;
  co.n_ctx = 64;
  // Reference: prefill logits of every row, then one decode step.
  std::vector<std::vector<float>> want_rows;
  std::vector<float> want_decode;
  {
    context ref(*m, co);
    ref.eval(prompt, logits_mode::all);
    for (int64_t i = 0; i < 15; ++i) want_rows.push_back(copy(ref.logits(i)));
    ref.eval(next, logits_mode::last);
    want_decode = copy(ref.logits());
  }
  context live(*m, co);  // prefilled before the file changes, decoded after
  live.eval(prompt, logits_mode::none);

  auto check = [&](const char* when) {
    context fresh(*m, co);
    fresh.eval(prompt, logits_mode::all);
    for (int64_t i = 0; i < 15; ++i)
      ASSERT_EQ(copy(fresh.logits(i)), want_rows[static_cast<size_t>(i)]) << when << ", row " << i;
  };

  ASSERT_EQ(::truncate(path.c_str(), 0), 0);
  check("after truncation to 0 bytes");

  synth_config other = c;
  other.seed = 12345;
  const std::string other_path = temp_path("other_model.gguf");
  write_gguf(make_synth(other), other_path);
  overwrite_in_place(path, other_path);
  ASSERT_EQ(inode_of(path), inode);  // rewritten in place, not replaced
  check("after the file was rewritten with another model");

  live.eval(next, logits_mode::last);
  EXPECT_EQ(copy(live.logits()), want_decode);

  // The file itself now holds the other model, as a fresh load shows.
  auto m2 = model::load(path, mo);
  context c2(*m2, co);
  c2.eval(prompt, logits_mode::last);
  EXPECT_NE(copy(c2.logits()), want_rows.back());
}

INSTANTIATE_TEST_SUITE_P(types, model_file, ::testing::Values(ggml_type::f32, ggml_type::q8_0),
                         [](const auto& info) { return std::string(traits(info.param).name); });

}  // namespace
}  // namespace qf::test
