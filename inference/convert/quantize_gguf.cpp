// GGUF model quantization with llama.cpp's per-tensor type choice (see
// quantize_gguf.h). Tensors are converted while the writer streams them out,
// so one tensor at a time is held in memory.
#include "inference/convert/quantize_gguf.h"

#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

#include "inference/backend/cpu/ops.h"
#include "inference/convert/token_type.h"
#include "inference/gguf/gguf.h"

namespace qf::infer::convert {
namespace {

bool is_float(ggml_type t) { return t == ggml_type::f32 || t == ggml_type::f16 || t == ggml_type::bf16; }

// llama.cpp's use_more_bits(i_layer, n_layers).
bool use_more_bits(int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

int64_t layer_of(const std::string& name) {
  if (name.rfind("blk.", 0) != 0) return -1;
  int64_t v = 0;
  size_t i = 4;
  if (i >= name.size() || name[i] < '0' || name[i] > '9') return -1;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i) v = v * 10 + (name[i] - '0');
  return v;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

uint32_t file_type_of(quant_scheme s) {
  switch (s) {
    case quant_scheme::q8_0: return ft_mostly_q8_0;
    case quant_scheme::q4_0: return ft_mostly_q4_0;
    case quant_scheme::q4_k: return ft_mostly_q4_k_s;
    case quant_scheme::q6_k: return ft_mostly_q6_k;
    case quant_scheme::q4_k_m: return ft_mostly_q4_k_m;
  }
  return ft_mostly_q8_0;
}

}  // namespace

std::optional<quant_scheme> quant_scheme_from_name(const std::string& name) {
  if (name == "q8_0") return quant_scheme::q8_0;
  if (name == "q4_0") return quant_scheme::q4_0;
  if (name == "q4_k") return quant_scheme::q4_k;
  if (name == "q6_k") return quant_scheme::q6_k;
  if (name == "q4_k_m") return quant_scheme::q4_k_m;
  return std::nullopt;
}

ggml_type quant_type_for(quant_scheme s, const std::string& name, ggml_type source, int64_t cols, int64_t layer,
                         int64_t n_layer, bool tied) {
  if (!is_float(source)) return source;
  const bool classifier = name == "output.weight" || (tied && name == "token_embd.weight");
  ggml_type t = ggml_type::q8_0;
  switch (s) {
    case quant_scheme::q8_0: t = ggml_type::q8_0; break;
    case quant_scheme::q4_0: t = ggml_type::q4_0; break;
    case quant_scheme::q4_k: t = ggml_type::q4_k; break;
    case quant_scheme::q6_k: t = ggml_type::q6_k; break;
    case quant_scheme::q4_k_m:
      t = ggml_type::q4_k;
      if ((ends_with(name, ".attn_v.weight") || ends_with(name, ".ffn_down.weight")) && layer >= 0 &&
          use_more_bits(layer, n_layer))
        t = ggml_type::q6_k;
      break;
  }
  if (classifier && s != quant_scheme::q8_0) t = ggml_type::q6_k;
  if (!row_size(t, cols)) {
    if (t == ggml_type::q4_k) t = ggml_type::q4_0;
    else if (t == ggml_type::q6_k) t = ggml_type::q8_0;
  }
  if (!row_size(t, cols)) t = ggml_type::f16;
  return t;
}

std::string quantize_gguf(const std::string& in_path, const std::string& out_path, quant_scheme s) {
  std::shared_ptr<gguf::file> in = gguf::file::open(in_path);
  auto arch = in->get_string("general.architecture");
  if (!arch) throw std::runtime_error("'" + in_path + "' has no general.architecture");
  const int64_t n_layer = in->get_int(*arch + ".block_count").value_or(0);
  const bool tied = in->find_tensor("output.weight") == nullptr;

  gguf::writer out;
  if (in->alignment() != 32) out.set_alignment(static_cast<uint32_t>(in->alignment()));
  for (const auto& [k, v] : in->metadata()) {
    if (k == "general.file_type" || k == "general.quantization_version" || k == "general.alignment") continue;
    out.add_value(k, v);
  }
  out.add_u32("general.file_type", file_type_of(s));
  out.add_u32("general.quantization_version", 2);

  std::map<std::string, int> count;
  size_t bytes_in = 0, bytes_out = 0;
  for (const gguf::tensor_info& t : in->tensors()) {
    const int64_t cols = t.ne.empty() ? 1 : t.ne[0], rows = t.n_rows();
    const ggml_type dst = t.ne.size() < 2 ? t.type : quant_type_for(s, t.name, t.type, cols, layer_of(t.name), n_layer, tied);
    const auto dst_row = row_size(dst, cols);
    if (!dst_row) throw std::runtime_error("tensor " + t.name + ": cannot store rows of " + std::to_string(cols));
    count[std::string(traits(dst).name)]++;
    bytes_in += t.n_bytes;
    bytes_out += *dst_row * static_cast<size_t>(rows);
    if (dst == t.type) {
      out.add_tensor(t.name, dst, t.ne, std::function<std::vector<uint8_t>()>([in, t] {
                       const uint8_t* p = in->tensor_data(t);
                       return std::vector<uint8_t>(p, p + t.n_bytes);
                     }));
      continue;
    }
    const size_t src_row = t.n_bytes / static_cast<size_t>(rows), out_row = *dst_row;
    out.add_tensor(t.name, dst, t.ne, std::function<std::vector<uint8_t>()>([in, t, dst, cols, rows, src_row, out_row] {
                     std::vector<uint8_t> q(out_row * static_cast<size_t>(rows));
                     std::vector<float> f(static_cast<size_t>(cols));
                     const uint8_t* src = in->tensor_data(t);
                     for (int64_t r = 0; r < rows; ++r) {
                       cpu::dequantize_row(t.type, src + r * src_row, f.data(), cols);
                       cpu::quantize_row(dst, f.data(), q.data() + r * out_row, cols);
                     }
                     return q;
                   }));
  }
  out.write(out_path);
  std::string summary = std::to_string(in->tensors().size()) + " tensors:";
  bool first = true;
  for (const auto& [name, n] : count) {
    summary += (first ? " " : ", ") + std::to_string(n) + " " + name;
    first = false;
  }
  char sz[96];
  std::snprintf(sz, sizeof sz, "; %.1f MiB -> %.1f MiB", bytes_in / 1048576.0, bytes_out / 1048576.0);
  return summary + sz;
}

}  // namespace qf::infer::convert
