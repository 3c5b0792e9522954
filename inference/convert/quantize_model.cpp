// Whole-model quantization: see quantize_model.h. Tensors are produced one at
// a time while the writer streams the output file (peak memory is one tensor
// in and out; the input is mapped, not copied), rows quantized in parallel on
// the kernel thread pool. The output may not be the input (same path or link).
#include "inference/convert/quantize_model.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <vector>

#include "inference/backend/cpu/ops.h"
#include "inference/gguf/gguf.h"

namespace qf::infer::gguf {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

int64_t layer_of(std::string_view name) {
  if (name.substr(0, 4) != "blk.") return -1;
  int64_t v = 0;
  size_t i = 4;
  if (i >= name.size() || name[i] < '0' || name[i] > '9') return -1;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i) v = v * 10 + (name[i] - '0');
  return v;
}

bool more_bits(int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

bool is_float(ggml_type t) { return t == ggml_type::f32 || t == ggml_type::f16 || t == ggml_type::bf16; }

// llama.cpp's substitute for a K-quant when the row length is not a multiple
// of 256 (e.g. Qwen2.5-0.5B's 896): a 32-element type of similar size.
ggml_type k_quant_fallback(ggml_type t) {
  switch (t) {
    case ggml_type::q4_k: return ggml_type::q5_0;
    case ggml_type::q5_k: return ggml_type::q5_1;
    case ggml_type::q6_k: return ggml_type::q8_0;
    default: return t;
  }
}

}  // namespace

int file_type_for(std::string_view recipe) {
  if (recipe == "q8_0") return 7;
  if (recipe == "q4_0") return 2;
  if (recipe == "q4_1") return 3;
  if (recipe == "q5_0") return 8;
  if (recipe == "q5_1") return 9;
  if (recipe == "q4_k") return 14;  // Q4_K_S
  if (recipe == "q4_k_m") return 15;
  if (recipe == "q6_k") return 18;
  throw gguf_error("quantize: unknown recipe '" + std::string(recipe) + "' (supported: q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q4_k_m, q6_k)");
}

ggml_type quantized_type_for(std::string_view recipe, std::string_view name, ggml_type source, int n_dims,
                             int64_t cols, int64_t layer, int64_t n_layer, bool tied) {
  file_type_for(recipe);  // validates
  if (!is_float(source)) return source;    // already quantized: copied
  if (n_dims < 2) return ggml_type::f32;   // norms, biases
  ggml_type want;
  if (recipe == "q8_0") want = ggml_type::q8_0;
  else if (recipe == "q4_0") want = ggml_type::q4_0;
  else if (recipe == "q4_1") want = ggml_type::q4_1;
  else if (recipe == "q5_0") want = ggml_type::q5_0;
  else if (recipe == "q5_1") want = ggml_type::q5_1;
  else if (recipe == "q6_k") want = ggml_type::q6_k;
  else want = ggml_type::q4_k;
  const bool classifier = name == "output.weight" || (tied && name == "token_embd.weight");
  if (classifier && recipe != "q8_0") want = ggml_type::q6_k;
  if (recipe == "q4_k_m" && layer >= 0 && n_layer > 0 &&
      (ends_with(name, "attn_v.weight") || ends_with(name, "ffn_down.weight")) && more_bits(layer, n_layer))
    want = ggml_type::q6_k;
  for (ggml_type t : {want, k_quant_fallback(want), ggml_type::q8_0, ggml_type::f16})
    if (row_size(t, cols)) return t;
  return ggml_type::f32;
}

void quantize_model(const std::string& in_path, const std::string& out_path, std::string_view recipe, int n_threads) {
  const int ftype = file_type_for(recipe);
  check_not_input(in_path, out_path);
  // One pass over the input: mapped, not copied (the output goes to a
  // temporary file renamed at the end, so it never truncates this mapping).
  auto in = file::open(in_path, data_storage::mapped);
  const std::string arch = in->get_string("general.architecture").value_or("");
  const int64_t n_layer = in->get_int(arch + ".block_count").value_or(0);
  const bool tied = in->find_tensor("output.weight") == nullptr;

  writer w;
  w.protect_input(in_path);
  w.set_alignment(static_cast<uint32_t>(in->alignment()));
  for (const auto& [k, v] : in->metadata()) w.add_value(k, v);
  w.add_u32("general.quantization_version", 2);
  w.add_u32("general.file_type", static_cast<uint32_t>(ftype));

  auto pool = std::make_shared<cpu::thread_pool>(n_threads);
  for (const auto& t : in->tensors()) {
    const int64_t cols = t.ne[0], rows = t.n_rows();
    const ggml_type dst = quantized_type_for(recipe, t.name, t.type, static_cast<int>(t.ne.size()), cols,
                                             layer_of(t.name), n_layer, tied);
    const uint8_t* src = in->tensor_data(t);
    if (dst == t.type) {
      w.add_tensor(t.name, t.type, t.ne, [src, n = t.n_bytes] { return std::vector<uint8_t>(src, src + n); });
      continue;
    }
    const size_t src_row = t.n_bytes / static_cast<size_t>(std::max<int64_t>(rows, 1));
    const size_t dst_row = *row_size(dst, cols);
    const ggml_type src_type = t.type;
    w.add_tensor(t.name, dst, t.ne, [=, &pool] {
      std::vector<uint8_t> out(dst_row * static_cast<size_t>(rows));
      std::atomic<int64_t> next{0};
      pool->run_dynamic([&](int, int) {
        std::vector<float> f(static_cast<size_t>(cols));
        for (int64_t r; (r = next.fetch_add(1, std::memory_order_relaxed)) < rows;) {
          cpu::dequantize_row(src_type, src + static_cast<size_t>(r) * src_row, f.data(), cols);
          cpu::quantize_row(dst, f.data(), out.data() + static_cast<size_t>(r) * dst_row, cols);
        }
      });
      return out;
    });
  }
  w.write(out_path);
}

}  // namespace qf::infer::gguf
