// Hostile GGUF inputs: every malformed file must give gguf_error with a clear
// message, never a crash or an out-of-bounds read. This file is also compiled
// into a separate executable together with the reader sources under
// AddressSanitizer + UBSan (see CMakeLists.txt), so a stray read fails there.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "inference/gguf/gguf.h"
#include "tests/temp_file.h"

using namespace qf::infer;
using namespace qf::infer::gguf;
using qf::test::byte_builder;
using qf::test::temp_file;

namespace {

// A small valid file with metadata of several kinds and two tensors.
std::vector<uint8_t> small_valid_file() {
  temp_file tmp("valid");
  writer w;
  w.add_string("general.architecture", "llama");
  w.add_u32("llama.block_count", 2);
  w.add_string_array("tokenizer.ggml.tokens", {"<s>", "a", "bc"});
  w.add_f32_array("tokenizer.ggml.scores", {0.f, -1.f, -2.f});
  std::vector<uint8_t> a(sizeof(block_q8_0) * 2);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i);
  w.add_tensor("a", ggml_type::q8_0, {32, 2}, a);
  w.add_tensor("b", ggml_type::f32, {3}, std::vector<uint8_t>(12, 1));
  w.write(tmp.path());
  return tmp.read();
}

// Expects open() to throw gguf_error whose message contains `needle`.
void expect_error(const std::vector<uint8_t>& bytes, const std::string& needle) {
  temp_file tmp("hostile");
  tmp.write(bytes);
  try {
    auto f = file::open(tmp.path());
    ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
  } catch (const gguf_error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// One tensor info followed by aligned data of `data_bytes` bytes.
std::vector<uint8_t> one_tensor(uint32_t n_dims, std::vector<int64_t> ne, uint32_t type, uint64_t offset,
                                size_t data_bytes) {
  byte_builder b;
  b.header(1, 0).str("t").put<uint32_t>(n_dims);
  for (int64_t d : ne) b.put<int64_t>(d);
  b.put<uint32_t>(type).put<uint64_t>(offset);
  b.pad_to(32);
  b.b.resize(b.b.size() + data_bytes, 0);
  return b.b;
}

}  // namespace

TEST(gguf_hostile, valid_file_opens) {
  temp_file tmp("ok");
  tmp.write(small_valid_file());
  auto f = file::open(tmp.path());
  EXPECT_EQ(f->tensors().size(), 2u);
}

TEST(gguf_hostile, truncated_at_every_byte) {
  auto full = small_valid_file();
  temp_file tmp("trunc");
  tmp.write(full);
  size_t needed = 0;  // the trailing alignment padding after the last tensor is optional
  {
    auto f = file::open(tmp.path());
    for (const auto& t : f->tensors())
      needed = std::max<size_t>(needed, f->data_offset() + t.offset + t.n_bytes);
  }
  ASSERT_GT(needed, 100u);
  for (size_t n = 0; n < needed; ++n) {
    tmp.write(std::vector<uint8_t>(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n)));
    EXPECT_THROW(file::open(tmp.path()), gguf_error) << "truncated to " << n << " bytes";
  }
}

TEST(gguf_hostile, corrupted_bytes_never_crash) {
  // Flip every byte of the header/metadata region to a few hostile values; the
  // reader may accept some (e.g. a changed string character) but must not crash.
  auto full = small_valid_file();
  temp_file tmp("flip");
  size_t limit = std::min<size_t>(full.size(), 400);
  for (size_t i = 0; i < limit; ++i) {
    for (uint8_t v : {uint8_t{0x00}, uint8_t{0xff}, uint8_t{0x7f}, uint8_t{0x20}}) {
      auto bad = full;
      bad[i] = v;
      tmp.write(bad);
      try {
        auto f = file::open(tmp.path());
        for (const auto& t : f->tensors()) {
          volatile uint8_t sink = 0;
          const uint8_t* p = f->tensor_data(t);
          for (size_t k = 0; k < t.n_bytes; ++k) sink = sink + p[k];
        }
      } catch (const gguf_error&) {
      }
    }
  }
}

TEST(gguf_hostile, bad_magic_and_version) {
  expect_error({'G', 'G', 'M', 'L', 3, 0, 0, 0}, "bad magic");
  byte_builder b;
  b.header(0, 0, 1);
  expect_error(b.b, "unsupported GGUF version 1");
  byte_builder c;
  c.header(0, 0, 99);
  expect_error(c.b, "supported: 2, 3");
}

TEST(gguf_hostile, empty_file) { expect_error({}, "empty"); }

TEST(gguf_hostile, huge_counts) {
  byte_builder a;
  a.header(0, ~0ull);
  expect_error(a.b, "metadata count");
  byte_builder b;
  b.header(~0ull >> 1, 0);
  expect_error(b.b, "tensor count");
  byte_builder c;  // array claiming 2^62 elements
  c.header(0, 1).str("arr").put<uint32_t>(9).put<uint32_t>(4).put<uint64_t>(1ull << 62).put<uint32_t>(1);
  expect_error(c.b, "array length");
  byte_builder d;  // string array whose count is plausible for bytes but not for strings
  d.header(0, 1).str("arr").put<uint32_t>(9).put<uint32_t>(8).put<uint64_t>(100);
  for (int i = 0; i < 100; ++i) d.put<uint8_t>(0);
  expect_error(d.b, "array length");
}

TEST(gguf_hostile, string_lengths) {
  byte_builder a;  // key length near 2^64: must not wrap when added to the position
  a.header(0, 1).put<uint64_t>(~0ull - 3).put<uint32_t>(0).put<uint64_t>(0).put<uint64_t>(0);
  expect_error(a.b, "string length");
  byte_builder b;  // plausible length, longer than the file
  b.header(0, 1).put<uint64_t>(1000).put<uint32_t>(0).put<uint64_t>(0).put<uint64_t>(0);
  expect_error(b.b, "truncated");
  byte_builder c;  // string value longer than the file
  c.header(0, 1).str("k").put<uint32_t>(8).put<uint64_t>(64).put<uint32_t>(0);
  expect_error(c.b, "truncated");
}

TEST(gguf_hostile, unknown_value_types) {
  byte_builder a;
  a.header(0, 1).str("k").put<uint32_t>(13).put<uint32_t>(0);
  expect_error(a.b, "unknown value type 13");
  byte_builder b;
  b.header(0, 1).str("k").put<uint32_t>(9).put<uint32_t>(0xdeadbeef).put<uint64_t>(1).put<uint32_t>(0);
  expect_error(b.b, "unknown array element type");
  byte_builder c;  // bool that is neither 0 nor 1
  c.header(0, 1).str("k").put<uint32_t>(7).put<uint8_t>(2);
  expect_error(c.b, "bool");
}

TEST(gguf_hostile, deeply_nested_arrays) {
  byte_builder a;
  a.header(0, 1).str("k").put<uint32_t>(9);
  for (int i = 0; i < 100; ++i) a.put<uint32_t>(9).put<uint64_t>(1);
  a.put<uint32_t>(0).put<uint64_t>(0);
  expect_error(a.b, "nested");
}

// An array of empty arrays: 12 bytes each in the file, a whole value each in
// memory. Unbounded, 2 MiB of them took ~9x that; the reader refuses before
// allocating.
TEST(gguf_hostile, array_of_empty_arrays_is_bounded) {
  const uint64_t n = 400000;  // 4.8 MB of file
  byte_builder a;
  a.header(0, 1).str("k").put<uint32_t>(9).put<uint32_t>(9).put<uint64_t>(n);
  for (uint64_t i = 0; i < n; ++i) a.put<uint32_t>(0).put<uint64_t>(0);
  expect_error(a.b, "bytes of memory");
  // Spread over many keys, nested one level deeper: refused all the same.
  byte_builder b;
  const int keys = 64;
  b.header(0, keys);
  for (int k = 0; k < keys; ++k) {
    b.str(std::string("k").append(std::to_string(k))).put<uint32_t>(9).put<uint32_t>(9).put<uint64_t>(1);
    b.put<uint32_t>(9).put<uint64_t>(n / keys);
    for (uint64_t i = 0; i < n / keys; ++i) b.put<uint32_t>(0).put<uint64_t>(0);
  }
  expect_error(b.b, "bytes of memory");
}

// A flood of tiny keys (13 bytes each) is charged for its vector, strings and
// duplicate check, and refused the same way; so is a tensor count whose
// table alone would pass the bound.
TEST(gguf_hostile, many_tiny_keys_are_bounded) {
  const uint64_t n = 400000;
  byte_builder a;
  a.header(0, n);
  for (uint64_t i = 0; i < n; ++i) {
    char key[8];
    std::snprintf(key, sizeof key, "%06llx", static_cast<unsigned long long>(i));
    a.str(key).put<uint32_t>(0).put<uint8_t>(0);
  }
  expect_error(a.b, "bytes of memory");
}

// Under the bound, the charge covers what the arrays really hold and stays
// within 16 MiB + 2x the file: the accounting is what the bound is checked on.
TEST(gguf_hostile, metadata_accounting_covers_nested_arrays) {
  const uint64_t n = 20000;
  byte_builder a;
  a.header(0, 1).str("k").put<uint32_t>(9).put<uint32_t>(9).put<uint64_t>(n);
  for (uint64_t i = 0; i < n; ++i) a.put<uint32_t>(4).put<uint64_t>(1).put<uint32_t>(7);
  temp_file tmp("nested_ok");
  tmp.write(a.b);
  auto f = file::open(tmp.path());
  const auto* arr = f->find("k")->as_array();
  ASSERT_NE(arr, nullptr);
  ASSERT_EQ(arr->size(), n);
  EXPECT_EQ(arr->array_at(n - 1)->int_at(0), 7);
  EXPECT_GE(f->metadata_bytes(), arr->heap_bytes());
  EXPECT_LE(f->metadata_bytes(), (16u << 20) + 2 * a.b.size());
}

// A real vocabulary far larger than the slack (400k tokens, ~6 MB) opens: the
// bound is relative to the bytes parsed.
TEST(gguf_hostile, large_vocabulary_is_within_the_bound) {
  std::vector<std::string> tokens;
  for (int i = 0; i < 400000; ++i) tokens.push_back("token_" + std::to_string(i) + std::string(i % 7, 'x'));
  writer w;
  w.add_string("general.architecture", "llama");
  w.add_string_array("tokenizer.ggml.tokens", tokens);
  w.add_f32_array("tokenizer.ggml.scores", std::vector<float>(tokens.size(), 0.f));
  temp_file tmp("vocab");
  w.write(tmp.path());
  auto f = file::open(tmp.path());
  EXPECT_EQ(f->get_string_array("tokenizer.ggml.tokens")->size(), tokens.size());
  EXPECT_LE(f->metadata_bytes(), 2 * std::filesystem::file_size(tmp.path()));
}

// A FIFO (or any non-regular file) named as a model is refused at once, not
// waited on.
TEST(gguf_hostile, a_fifo_is_refused_without_blocking) {
  const std::string path = std::filesystem::temp_directory_path().string() + "/qf_gguf_fifo_" +
                           std::to_string(::getpid()) + ".gguf";
  std::filesystem::remove(path);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  for (data_storage s : {data_storage::in_memory, data_storage::mapped}) {
    try {
      auto f = file::open(path, s);
      ADD_FAILURE() << "a FIFO opened";
    } catch (const gguf_error& e) {
      EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
    }
  }
  std::filesystem::remove(path);
}

TEST(gguf_hostile, duplicate_keys_and_tensors) {
  byte_builder a;
  a.header(0, 2).str("k").put<uint32_t>(0).put<uint8_t>(1).str("k").put<uint32_t>(0).put<uint8_t>(2);
  expect_error(a.b, "duplicate metadata key");
  byte_builder b;
  b.header(2, 0);
  for (int i = 0; i < 2; ++i) b.str("t").put<uint32_t>(1).put<int64_t>(8).put<uint32_t>(0).put<uint64_t>(0);
  b.pad_to(32);
  b.b.resize(b.b.size() + 64);
  expect_error(b.b, "duplicate tensor name");
}

TEST(gguf_hostile, bad_alignment_value) {
  byte_builder a;
  a.header(0, 1).str("general.alignment").put<uint32_t>(4).put<uint32_t>(48);
  expect_error(a.b, "power of two");
  byte_builder b;
  b.header(0, 1).str("general.alignment").put<uint32_t>(4).put<uint32_t>(0);
  expect_error(b.b, "power of two");
}

TEST(gguf_hostile, tensor_shapes_and_types) {
  expect_error(one_tensor(5, {1, 1, 1, 1, 1}, 0, 0, 32), "dimensions");
  expect_error(one_tensor(0, {}, 0, 0, 32), "dimensions");
  expect_error(one_tensor(2, {-4, 2}, 0, 0, 32), "negative dimension");
  expect_error(one_tensor(4, {1ll << 20, 1ll << 20, 1ll << 20, 1ll << 20}, 0, 0, 32), "element count overflows");
  // A zero dimension makes the element count 0, but the row count (the
  // product of the others) must still not overflow.
  expect_error(one_tensor(3, {0, 192, 60798594969501696ll}, 0, 0, 32), "element count overflows");
  expect_error(one_tensor(2, {1ll << 30, 4}, 0, 0, 32), "outside");  // bytes > file  // bytes > file
  expect_error(one_tensor(2, {256, 1ll << 60}, 12, 0, 32), "overflow");
  expect_error(one_tensor(1, {32}, 10, 0, 64), "unsupported tensor type 10");  // q2_k
  expect_error(one_tensor(1, {32}, 10, 0, 64), "q5_0");  // lists what is supported
  expect_error(one_tensor(1, {32}, 15, 0, 320), "unsupported tensor type 15");  // q8_k is activation-only
  expect_error(one_tensor(1, {33}, 8, 0, 64), "block size");
}

TEST(gguf_hostile, tensor_offsets) {
  expect_error(one_tensor(1, {8}, 0, 0, 31), "outside");    // one byte short
  expect_error(one_tensor(1, {8}, 0, 16, 64), "alignment");  // misaligned
  expect_error(one_tensor(1, {8}, 0, ~0ull - 31, 64), "outside");  // offset + size wraps
  expect_error(one_tensor(1, {8}, 0, 1ull << 40, 64), "outside");
  byte_builder b;  // two tensors whose ranges overlap
  b.header(2, 0);
  b.str("x").put<uint32_t>(1).put<int64_t>(16).put<uint32_t>(0).put<uint64_t>(0);
  b.str("y").put<uint32_t>(1).put<int64_t>(16).put<uint32_t>(0).put<uint64_t>(32);
  b.pad_to(32);
  b.b.resize(b.b.size() + 128);
  expect_error(b.b, "overlap");
  EXPECT_NO_THROW({
    temp_file ok("ok_single");
    ok.write(one_tensor(1, {8}, 0, 0, 32));
    file::open(ok.path());
  });
}

TEST(gguf_hostile, missing_file_is_an_error) {
  EXPECT_THROW(file::open("/nonexistent/dir/model.gguf"), gguf_error);
}
