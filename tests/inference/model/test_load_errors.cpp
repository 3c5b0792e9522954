// Loading errors: unknown architecture names the supported ones, a missing
// or misshapen tensor is named, an unknown device is refused, auto falls back
// to the CPU; hostile hyperparameters are refused by name and value before
// anything is sized by them (the 100,000,000-block file, in a child process
// whose address space is capped).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <new>

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

TEST(load_errors, hostile_hyperparameters_are_named_with_their_value) {
  const synth_model sm = make_synth({});  // llama: n_embd 64, 2 blocks, 4 heads, 2 kv heads, n_ff 96
  struct hostile {
    std::string key;
    uint64_t value;
    std::vector<std::string> needles;
  };
  const std::vector<hostile> cases = {
      {"llama.block_count", 100000000, {"'llama.block_count' = 100000000", "out of range"}},
      {"llama.block_count", 3, {"'llama.block_count' = 3", "tensors for 2 blocks"}},
      {"llama.block_count", 0, {"'llama.block_count' = 0", "out of range"}},
      {"llama.block_count", UINT64_MAX, {"llama.block_count", "not an integer"}},
      {"llama.embedding_length", 1ull << 40, {"'llama.embedding_length' = 1099511627776", "out of range"}},
      {"llama.embedding_length", 128, {"token_embd.weight", "embedding_length 128"}},
      {"llama.attention.head_count", 1ull << 20, {"'llama.attention.head_count' = 1048576"}},
      {"llama.attention.head_count_kv", 8, {"'llama.attention.head_count_kv' = 8", "(1..4)"}},
      {"llama.attention.key_length", 1ull << 40, {"'llama.attention.key_length' = 1099511627776"}},
      {"llama.attention.key_length", 32, {"blk.0.attn_q.weight", "shape"}},  // 4 x 32 != 64 rows
      {"llama.feed_forward_length", 1ull << 62, {"'llama.feed_forward_length' = 4611686018427387904"}},
      {"llama.feed_forward_length", 97, {"blk.0.ffn_gate.weight", "shape"}},
      {"llama.context_length", 1ull << 40, {"'llama.context_length' = 1099511627776"}},
      {"llama.rope.dimension_count", 1ull << 30, {"'llama.rope.dimension_count' = 1073741824"}},
      {"llama.rope.dimension_count", 3, {"rope.dimension_count 3", "even"}},
  };
  for (const hostile& h : cases) {
    write_options wo;
    wo.set_u64[h.key] = h.value;
    const std::string e = load_error(sm, "hostile_" + h.key + "_" + std::to_string(h.value), wo);
    for (const std::string& n : h.needles)
      EXPECT_NE(e.find(n), std::string::npos) << h.key << "=" << h.value << ": " << e;
  }
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define QF_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define QF_SANITIZED 1
#endif
#endif

#ifndef QF_SANITIZED
size_t address_space_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0;
  statm >> pages;
  return pages * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}
#endif

TEST(load_errors, hundred_million_blocks_fail_without_a_huge_allocation) {
#ifdef QF_SANITIZED
  GTEST_SKIP() << "sanitizers reserve terabytes of address space: RLIMIT_AS cannot be used";
#else
  // A small file that claims 100,000,000 blocks. Without bounds the loader sized
  // its per-layer tables from it (9.3 GiB) before noticing the missing tensors.
  const synth_model sm = make_synth({});
  write_options wo;
  wo.set_u64["llama.block_count"] = 100000000;
  const std::string path = temp_path("blocks_1e8.gguf");
  write_gguf(sm, path, wo);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The child may grow its address space by 256 MiB at most.
    struct rlimit rl {};
    rl.rlim_cur = rl.rlim_max = address_space_bytes() + (size_t{256} << 20);
    if (setrlimit(RLIMIT_AS, &rl) != 0) _exit(10);
    int code = 0;
    try {
      model_options mo;
      mo.n_threads = 1;
      mo.device = "cpu";
      model::load(path, mo);
      code = 2;
    } catch (const model_error& e) {
      const std::string m = e.what();
      code = m.find("block_count") != std::string::npos && m.find("100000000") != std::string::npos ? 0 : 3;
    } catch (const std::bad_alloc&) {
      code = 4;
    } catch (...) {
      code = 5;
    }
    _exit(code);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: it loaded, 3: another error, 4: out of memory, 5: another exception, "
                                       "10: setrlimit failed";
#endif
}

}  // namespace
}  // namespace qf::test
