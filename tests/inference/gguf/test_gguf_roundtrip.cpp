// GGUF writer -> reader roundtrip of every metadata value type, nested arrays,
// alignment, tensor infos and tensor bytes; and the type traits / exact fp16
// and bf16 conversions the format relies on.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>

#include "inference/gguf/gguf.h"
#include "tests/temp_file.h"

using namespace qf::infer;
using namespace qf::infer::gguf;

namespace {

value scalar(value_type t, std::variant<uint64_t, int64_t, double, bool, std::string, value::array_t> v) {
  value out;
  out.type = t;
  out.v = std::move(v);
  return out;
}

std::vector<uint8_t> bytes_of(size_t n, uint8_t seed) {
  std::vector<uint8_t> b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(seed + i * 7);
  return b;
}

}  // namespace

TEST(gguf_roundtrip, every_value_type_and_tensors) {
  qf::test::temp_file tmp("roundtrip");
  writer w;
  w.add_string("general.architecture", "llama");
  w.add_u32("u32", 4000000000u);
  w.add_i32("i32", -123456);
  w.add_u64("u64", 1ull << 60);
  w.add_f32("f32", 0.125f);
  w.add_bool("bool", true);
  w.add_value("u8", scalar(value_type::u8, uint64_t{200}));
  w.add_value("i8", scalar(value_type::i8, int64_t{-100}));
  w.add_value("u16", scalar(value_type::u16, uint64_t{60000}));
  w.add_value("i16", scalar(value_type::i16, int64_t{-30000}));
  w.add_value("i64", scalar(value_type::i64, int64_t{-(1ll << 50)}));
  w.add_value("f64", scalar(value_type::f64, 3.141592653589793));
  w.add_string_array("strs", {"a", "", "héllo"});
  w.add_f32_array("floats", {1.5f, -2.25f});
  w.add_i32_array("ints", {1, -2, 3});
  value::array_t inner1{value_type::i32, {scalar(value_type::i32, int64_t{7})}};
  value::array_t inner2{value_type::i32, {}};
  value::array_t outer{value_type::array,
                       {scalar(value_type::array, inner1), scalar(value_type::array, inner2)}};
  w.add_value("nested", scalar(value_type::array, outer));

  auto t0 = bytes_of(4 * 8 * 3, 1);
  auto t1 = bytes_of(sizeof(block_q8_0) * 2 * 5, 2);
  auto t2 = bytes_of(sizeof(block_q4_k) * 1 * 3, 3);
  w.add_tensor("t.f32", ggml_type::f32, {8, 3}, t0);
  w.add_tensor("t.q8_0", ggml_type::q8_0, {64, 5}, t1);
  w.add_tensor("t.q4_k", ggml_type::q4_k, {256, 3}, [&] { return t2; });
  w.write(tmp.path());

  auto f = file::open(tmp.path());
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->alignment(), 32u);
  EXPECT_EQ(f->get_string("general.architecture"), "llama");
  EXPECT_EQ(f->get_int("u32"), 4000000000ll);
  EXPECT_EQ(f->get_int("i32"), -123456);
  EXPECT_EQ(f->get_int("u64"), static_cast<int64_t>(1ull << 60));
  EXPECT_EQ(f->get_float("f32"), 0.125);
  EXPECT_EQ(f->get_bool("bool"), true);
  EXPECT_EQ(f->get_int("u8"), 200);
  EXPECT_EQ(f->get_int("i8"), -100);
  EXPECT_EQ(f->get_int("u16"), 60000);
  EXPECT_EQ(f->get_int("i16"), -30000);
  EXPECT_EQ(f->get_int("i64"), -(1ll << 50));
  EXPECT_EQ(f->get_float("f64"), 3.141592653589793);
  EXPECT_EQ(f->find("u8")->type, value_type::u8);
  EXPECT_EQ(f->find("f64")->type, value_type::f64);
  EXPECT_EQ(f->get_string_array("strs"), (std::vector<std::string>{"a", "", "héllo"}));
  EXPECT_EQ(f->get_float_array("floats"), (std::vector<float>{1.5f, -2.25f}));
  EXPECT_EQ(f->get_int_array("ints"), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_FALSE(f->get_string_array("ints").has_value());
  const auto* nested = f->find("nested")->as_array();
  ASSERT_NE(nested, nullptr);
  ASSERT_EQ(nested->size(), 2u);
  ASSERT_NE(nested->array_at(0), nullptr);
  EXPECT_EQ(nested->array_at(0)->int_at(0), 7);
  EXPECT_TRUE(nested->array_at(1)->empty());
  ASSERT_EQ(f->metadata().size(), 16u);
  EXPECT_EQ(f->metadata()[0].first, "general.architecture");  // file order kept

  ASSERT_EQ(f->tensors().size(), 3u);
  const auto* a = f->find_tensor("t.f32");
  const auto* b = f->find_tensor("t.q8_0");
  const auto* c = f->find_tensor("t.q4_k");
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->ne, (std::vector<int64_t>{8, 3}));
  EXPECT_EQ(b->type, ggml_type::q8_0);
  EXPECT_EQ(b->n_rows(), 5);
  EXPECT_EQ(c->n_elements(), 768);
  EXPECT_EQ(f->data_offset() % 32, 0u);
  for (const auto* t : {a, b, c}) EXPECT_EQ(t->offset % 32, 0u);
  EXPECT_EQ(0, std::memcmp(f->tensor_data(*a), t0.data(), t0.size()));
  EXPECT_EQ(0, std::memcmp(f->tensor_data(*b), t1.data(), t1.size()));
  EXPECT_EQ(0, std::memcmp(f->tensor_data(*c), t2.data(), t2.size()));

  // Rewriting everything from the reader gives the same bytes (stable layout).
  qf::test::temp_file tmp2("roundtrip2");
  writer w2;
  for (const auto& [k, v] : f->metadata()) w2.add_value(k, v);
  for (const auto& t : f->tensors()) {
    const uint8_t* p = f->tensor_data(t);
    w2.add_tensor(t.name, t.type, t.ne, std::vector<uint8_t>(p, p + t.n_bytes));
  }
  w2.write(tmp2.path());
  EXPECT_EQ(tmp.read(), tmp2.read());
}

TEST(gguf_roundtrip, custom_alignment_is_recorded_and_honoured) {
  qf::test::temp_file tmp("align");
  writer w;
  w.set_alignment(64);
  w.add_tensor("a", ggml_type::f16, {3}, bytes_of(6, 1));
  w.add_tensor("b", ggml_type::f32, {5}, bytes_of(20, 2));
  w.write(tmp.path());
  auto f = file::open(tmp.path());
  EXPECT_EQ(f->alignment(), 64u);
  EXPECT_EQ(f->get_int("general.alignment"), 64);
  EXPECT_EQ(f->find_tensor("b")->offset, 64u);
  EXPECT_EQ(f->data_offset() % 64, 0u);
  EXPECT_THROW(w.set_alignment(48), gguf_error);
}

TEST(gguf_roundtrip, reads_version_2) {
  qf::test::temp_file tmp("v2");
  qf::test::byte_builder b;
  b.header(1, 1, 2).str("k").put<uint32_t>(4).put<uint32_t>(9);
  b.str("w").put<uint32_t>(1).put<int64_t>(4).put<uint32_t>(0).put<uint64_t>(0);
  b.pad_to(32);
  for (int i = 0; i < 16; ++i) b.put<uint8_t>(static_cast<uint8_t>(i));
  tmp.write(b.b);
  auto f = file::open(tmp.path());
  EXPECT_EQ(f->version(), 2u);
  EXPECT_EQ(f->get_int("k"), 9);
  EXPECT_EQ(f->tensor_data(f->tensors()[0])[5], 5);
}

TEST(gguf_roundtrip, writer_rejects_wrong_sizes) {
  writer w;
  EXPECT_THROW(w.add_tensor("x", ggml_type::q8_0, {33}, bytes_of(34, 0)), gguf_error);
  EXPECT_THROW(w.add_tensor("x", ggml_type::f32, {4}, bytes_of(15, 0)), gguf_error);
}

TEST(ggml_types, traits_and_row_size) {
  EXPECT_EQ(traits(ggml_type::q4_k).type_size, 144u);
  EXPECT_EQ(traits(ggml_type::q6_k).block_size, 256);
  EXPECT_EQ(row_size(ggml_type::q8_0, 64), 68u);
  EXPECT_EQ(row_size(ggml_type::bf16, 3), 6u);
  EXPECT_FALSE(row_size(ggml_type::q4_0, 33).has_value());
  EXPECT_FALSE(row_size(ggml_type::f32, -1).has_value());
  EXPECT_FALSE(row_size(ggml_type::f32, INT64_MAX).has_value());
  EXPECT_FALSE(traits_of(10).has_value());  // q2_k: not supported
  // The 32-element types with llama.cpp's ids and block sizes.
  EXPECT_EQ(traits_of(3)->name, "q4_1");
  EXPECT_EQ(traits_of(3)->type_size, 20u);
  EXPECT_EQ(traits_of(6)->name, "q5_0");
  EXPECT_EQ(traits_of(6)->type_size, 22u);
  EXPECT_EQ(traits_of(7)->name, "q5_1");
  EXPECT_EQ(traits_of(7)->type_size, 24u);
  EXPECT_EQ(row_size(ggml_type::q5_0, 896), 28u * 22u);  // Qwen2.5-0.5B rows
  EXPECT_FALSE(row_size(ggml_type::q5_1, 48).has_value());
  EXPECT_NE(supported_type_names().find("q5_0"), std::string_view::npos);
  EXPECT_NE(supported_type_names().find("q6_k"), std::string_view::npos);
}

TEST(ggml_types, fp16_conversions_are_exact_for_every_half) {
  for (uint32_t h = 0; h < 65536; ++h) {
    float f = fp16_to_f32(static_cast<fp16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(fp16_to_f32(f32_to_fp16(f))));
      continue;
    }
    ASSERT_EQ(f32_to_fp16(f), h) << h;
  }
  EXPECT_EQ(fp16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(fp16_to_f32(0x0001), 0x1p-24f);
  EXPECT_EQ(f32_to_fp16(65520.0f), 0x7c00);         // rounds to infinity
  EXPECT_EQ(f32_to_fp16(65519.0f), 0x7bff);
  EXPECT_EQ(f32_to_fp16(1.0f + 0x1p-11f), 0x3c00);  // tie -> even
  EXPECT_EQ(f32_to_fp16(1.0f + 3 * 0x1p-11f), 0x3c02);
  EXPECT_EQ(f32_to_fp16(0x1p-25f), 0x0000);         // tie -> even (zero)
  EXPECT_EQ(f32_to_fp16(0x1.8p-24f), 0x0002);       // 1.5 ulp -> 2
  EXPECT_EQ(f32_to_fp16(-0.0f), 0x8000);
}

TEST(ggml_types, bf16_conversions_round_to_nearest_even) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie -> even
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f818000u)), 0x3f82);
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f808001u)), 0x3f81);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::nanf("")))));
  for (uint32_t h = 0; h < 65536; ++h) {
    float f = bf16_to_f32(static_cast<bf16_t>(h));
    if (!std::isnan(f)) {
      ASSERT_EQ(f32_to_bf16(f), h);
    }
  }
}
