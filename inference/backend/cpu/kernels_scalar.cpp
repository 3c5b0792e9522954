// Scalar reference kernels: the definition every SIMD kernel is tested
// against. Integer dot products are exact; each block contributes
// (weight scale * activation scale * integer sum) in llama.cpp's order.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "inference/backend/cpu/kernels.h"
#include "inference/backend/cpu/quants.h"
#include "inference/backend/cpu/repack_q4_k.h"
#include "inference/backend/cpu/repack_q6_k.h"
#include "inference/backend/cpu/repack_q8_0.h"
#include "inference/backend/cpu/repack_q5_0.h"
#include "inference/backend/cpu/repack_q5_0x16.h"

namespace qf::infer::cpu::detail {
namespace {

// fp16 -> f32 through a 64K-entry table (exact: built from fp16_to_f32).
struct f16_table {
  float v[65536];
  f16_table() {
    for (uint32_t i = 0; i < 65536; ++i) v[i] = fp16_to_f32(static_cast<fp16_t>(i));
  }
};
const f16_table& f16() {
  static const f16_table t;
  return t;
}

void dot_f32(int64_t n, const void* w, const uint8_t* acts, size_t stride, int nt, float* out) {
  const auto* a = static_cast<const float*>(w);
  for (int t = 0; t < nt; ++t) {
    const auto* x = reinterpret_cast<const float*>(acts + t * stride);
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * x[i];
    out[t] = static_cast<float>(s);
  }
}

void dot_f16(int64_t n, const void* w, const uint8_t* acts, size_t stride, int nt, float* out) {
  const auto* a = static_cast<const fp16_t*>(w);
  const float* tab = f16().v;
  for (int t = 0; t < nt; ++t) {
    const auto* x = reinterpret_cast<const float*>(acts + t * stride);
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += static_cast<double>(tab[a[i]]) * x[i];
    out[t] = static_cast<float>(s);
  }
}

void dot_bf16(int64_t n, const void* w, const uint8_t* acts, size_t stride, int nt, float* out) {
  const auto* a = static_cast<const bf16_t*>(w);
  for (int t = 0; t < nt; ++t) {
    const auto* x = reinterpret_cast<const float*>(acts + t * stride);
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += static_cast<double>(bf16_to_f32(a[i])) * x[i];
    out[t] = static_cast<float>(s);
  }
}

void dot_q8_0(int64_t n, const void* w, const uint8_t* acts, size_t stride, int nt, float* out) {
  const auto* x = static_cast<const block_q8_0*>(w);
  const int64_t nb = n / qk8_0;
  for (int t = 0; t < nt; ++t) {
    const float* yd = act_q8_0_d(acts + t * stride);
    const int8_t* yq = act_q8_0_q(acts + t * stride, nb);
    float sum = 0;
    for (int64_t b = 0; b < nb; ++b) {
      int s = 0;
      for (int j = 0; j < qk8_0; ++j) s += x[b].qs[j] * yq[b * qk8_0 + j];
      sum += s * (fp16_to_f32(x[b].d) * yd[b]);
    }
    out[t] = sum;
  }
}

void dot_q4_0(int64_t n, const void* w, const uint8_t* acts, size_t stride, int nt, float* out) {
  const auto* x = static_cast<const block_q4_0*>(w);
  const int64_t nb = n / qk4_0;
  for (int t = 0; t < nt; ++t) {
    const float* yd = act_q8_0_d(acts + t * stride);
    const int8_t* yq = act_q8_0_q(acts + t * stride, nb);
    float sum = 0;
    for (int64_t b = 0; b < nb; ++b) {
      const int8_t* yb = yq + b * qk4_0;
      int s = 0;
      for (int j = 0; j < qk4_0 / 2; ++j) {
        s += ((x[b].qs[j] & 0xF) - 8) * yb[j];
        s += ((x[b].qs[j] >> 4) - 8) * yb[j + qk4_0 / 2];
      }
      sum += s * (fp16_to_f32(x[b].d) * yd[b]);
    }
    out[t] = sum;
  }
}

// Q4_1/Q5_0/Q5_1 against Q8_0 activations. Unsigned quants q (0..15 or
// 0..31) are dotted with the activation quants; the offset folds in through
// the activation block sums s[b] = d_y * sum(q_y): Q5_0 adds -16 * d_x * s[b],
// Q4_1/Q5_1 add m * s[b].
// sum_j q_j * yb[j] over one block's 32 unsigned quants.
template <class B>
int dot_unsigned_block(const B& x, const int8_t* yb) {
  uint32_t qh = 0;
  if constexpr (!std::is_same_v<B, block_q4_1>) qh = load_qh(x.qh);
  int s = 0;
  for (int j = 0; j < 16; ++j) {
    const int q0 = (x.qs[j] & 0xF) | static_cast<int>((qh >> j) & 1u) << 4;
    const int q1 = (x.qs[j] >> 4) | static_cast<int>((qh >> (j + 16)) & 1u) << 4;
    s += q0 * yb[j] + q1 * yb[j + 16];
  }
  return s;
}

template <class B>
void dot_q32_unsigned(int64_t n, const void* w, const uint8_t* acts, size_t stride, int nt, float* out) {
  const auto* x = static_cast<const B*>(w);
  constexpr int qk = 32;
  const int64_t nb = n / qk;
  for (int t = 0; t < nt; ++t) {
    const float* yd = act_q8_0_d(acts + t * stride);
    const float* ys = act_q8_0_s(acts + t * stride, nb);
    const int8_t* yq = act_q8_0_q(acts + t * stride, nb);
    float sum = 0;
    for (int64_t b = 0; b < nb; ++b) {
      const int s = dot_unsigned_block(x[b], yq + b * qk);
      const float dx = fp16_to_f32(x[b].d);
      if constexpr (std::is_same_v<B, block_q5_0>) sum += s * (dx * yd[b]) - 16.0f * dx * ys[b];
      else sum += s * (dx * yd[b]) + fp16_to_f32(x[b].m) * ys[b];
    }
    out[t] = sum;
  }
}

// Q5_0 regrouped (repack_q5_0.h): the sums of dot_q32_unsigned, block by
// block, each quant read from its group or half group; the rest are plain.
void dot_q5_0x8(int64_t n, const void* w, const uint8_t* acts, size_t stride, int nt, float* out) {
  const int64_t nb = n / 32;
  const q5_0x8_row_layout lay(nb);
  const auto* grp = static_cast<const block_q5_0x8*>(w);
  const block_q5_0x4* half = lay.half_group(w);  // read only when lay.half
  const block_q5_0* tail = lay.plain_blocks(w);
  const int64_t grouped = lay.groups * k_q5_0x8_blocks;
  for (int t = 0; t < nt; ++t) {
    const float* yd = act_q8_0_d(acts + t * stride);
    const float* ys = act_q8_0_s(acts + t * stride, nb);
    const int8_t* yq = act_q8_0_q(acts + t * stride, nb);
    float sum = 0;
    for (int64_t b = 0; b < nb; ++b) {
      const int8_t* yb = yq + b * 32;
      int s = 0;
      float dx;
      if (b < grouped) {
        const block_q5_0x8& g = grp[b / k_q5_0x8_blocks];
        const int k = static_cast<int>(b % k_q5_0x8_blocks);
        for (int j = 0; j < 32; ++j) s += q5_0x8_quant(g, k, j) * yb[j];
        dx = fp16_to_f32(g.d[k]);
      } else if (b < lay.plain) {
        const int k = static_cast<int>(b - grouped);
        for (int j = 0; j < 32; ++j) s += q5_0x4_quant(*half, k, j) * yb[j];
        dx = fp16_to_f32(half->d[k]);
      } else {
        s = dot_unsigned_block(tail[b - lay.plain], yb);
        dx = fp16_to_f32(tail[b - lay.plain].d);
      }
      sum += s * (dx * yd[b]) - 16.0f * dx * ys[b];
    }
    out[t] = sum;
  }
}

// Q4_K/Q5_K: sum_j sc_j * (q . y)_j * d - sum_j mn_j * ysum_j * dmin, per super-block.
template <bool FIVE>
void dot_qk45(int64_t n, const void* w, const uint8_t* acts, size_t stride, int nt, float* out) {
  const int64_t nb = n / qk_k;
  for (int t = 0; t < nt; ++t) {
    const auto* y = reinterpret_cast<const block_q8_k*>(acts + t * stride);
    float sum = 0;
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* scales;
      const uint8_t* qs;
      const uint8_t* qh = nullptr;
      float d, dmin;
      if constexpr (FIVE) {
        const auto& blk = static_cast<const block_q5_k*>(w)[b];
        scales = blk.scales, qs = blk.qs, qh = blk.qh;
        d = fp16_to_f32(blk.d), dmin = fp16_to_f32(blk.dmin);
      } else {
        const auto& blk = static_cast<const block_q4_k*>(w)[b];
        scales = blk.scales, qs = blk.qs;
        d = fp16_to_f32(blk.d), dmin = fp16_to_f32(blk.dmin);
      }
      uint8_t sc[8], mn[8];
      unpack_scale_min_k4(scales, sc, mn);
      int32_t sumi = 0, summ = 0;
      for (int j = 0; j < 8; ++j) {
        const uint8_t* q = qs + 32 * (j / 2);
        const int shift = (j & 1) * 4;
        const int8_t* yq = y[b].qs + 32 * j;
        int s = 0;
        for (int l = 0; l < 32; ++l) {
          int v = (q[l] >> shift) & 0xF;
          if constexpr (FIVE) v += ((qh[l] >> j) & 1) << 4;
          s += v * yq[l];
        }
        sumi += sc[j] * s;
        summ += mn[j] * (y[b].bsums[2 * j] + y[b].bsums[2 * j + 1]);
      }
      sum += y[b].d * d * sumi - y[b].d * dmin * summ;
    }
    out[t] = sum;
  }
}

// Q8_0 interleaved (repack_q8_0.h): dot_q8_0's integer sums and float
// operations row by row, so the two layouts give bit-identical results.
void dot_q8_0x16(int64_t n, const void* w, const uint8_t* acts, size_t stride, int nt, float* out, int64_t os) {
  const auto* x = static_cast<const block_q8_0x16*>(w);
  const int64_t nb = n / qk8_0;
  for (int t = 0; t < nt; ++t) {
    const float* yd = act_q8_0_d(acts + t * stride);
    const int8_t* yq = act_q8_0_q(acts + t * stride, nb);
    for (int r = 0; r < k_q8_0x16_rows; ++r) {
      float sum = 0;
      for (int64_t b = 0; b < nb; ++b) {
        int s = 0;
        for (int e = 0; e < qk8_0; ++e) s += q8_0x16_quant(x[b], r, e) * yq[b * qk8_0 + e];
        sum += s * (fp16_to_f32(x[b].d[r]) * yd[b]);
      }
      out[t * os + r] = sum;
    }
  }
}

// Q5_0 interleaved (repack_q5_0x16.h): dot_q32_unsigned's integer sums and
// float operations row by row, so the two layouts give bit-identical results.
void dot_q5_0x16(int64_t n, const void* w, const uint8_t* acts, size_t stride, int nt, float* out, int64_t os) {
  const auto* x = static_cast<const block_q5_0x16*>(w);
  const int64_t nb = n / qk5_0;
  for (int t = 0; t < nt; ++t) {
    const float* yd = act_q8_0_d(acts + t * stride);
    const float* ys = act_q8_0_s(acts + t * stride, nb);
    const int8_t* yq = act_q8_0_q(acts + t * stride, nb);
    for (int r = 0; r < k_q5_0x16_rows; ++r) {
      float sum = 0;
      for (int64_t b = 0; b < nb; ++b) {
        int s = 0;
        for (int e = 0; e < qk5_0; ++e) s += q5_0x16_quant(x[b], r, e) * yq[b * qk5_0 + e];
        const float dx = fp16_to_f32(x[b].d[r]);
        sum += s * (dx * yd[b]) - 16.0f * dx * ys[b];
      }
      out[t * os + r] = sum;
    }
  }
}

// Q4_K interleaved (repack_q4_k.h): dot_qk45's integer sums and float
// operations row by row, so the two layouts give bit-identical results.
void dot_q4_kx16(int64_t n, const void* w, const uint8_t* acts, size_t stride, int nt, float* out, int64_t os) {
  const auto* x = static_cast<const block_q4_kx16*>(w);
  const int64_t nb = n / qk_k;
  for (int t = 0; t < nt; ++t) {
    const auto* y = reinterpret_cast<const block_q8_k*>(acts + t * stride);
    for (int r = 0; r < k_q4_kx16_rows; ++r) {
      float sum = 0;
      for (int64_t b = 0; b < nb; ++b) {
        int32_t sumi = 0, summ = 0;
        for (int j = 0; j < 8; ++j) {
          const int8_t* yq = y[b].qs + 32 * j;
          int s = 0;
          for (int e = 0; e < 32; ++e) s += q4_kx16_quant(x[b], r, j, e) * yq[e];
          sumi += x[b].sc[j][r] * s;
          summ += x[b].m[j / 2][r][j % 2] * (y[b].bsums[2 * j] + y[b].bsums[2 * j + 1]);
        }
        sum += y[b].d * fp16_to_f32(x[b].d[r]) * sumi - y[b].d * fp16_to_f32(x[b].dmin[r]) * summ;
      }
      out[t * os + r] = sum;
    }
  }
}

void dot_q6_k(int64_t n, const void* w, const uint8_t* acts, size_t stride, int nt, float* out) {
  const auto* x = static_cast<const block_q6_k*>(w);
  const int64_t nb = n / qk_k;
  for (int t = 0; t < nt; ++t) {
    const auto* y = reinterpret_cast<const block_q8_k*>(acts + t * stride);
    float sum = 0;
    for (int64_t b = 0; b < nb; ++b) {
      int8_t q[qk_k];
      const uint8_t* ql = x[b].ql;
      const uint8_t* qh = x[b].qh;
      for (int j = 0; j < qk_k; j += 128) {
        for (int l = 0; l < 32; ++l) {
          q[j + l] = static_cast<int8_t>(((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32);
          q[j + l + 32] = static_cast<int8_t>(((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32);
          q[j + l + 64] = static_cast<int8_t>(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
          q[j + l + 96] = static_cast<int8_t>(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
        }
        ql += 64;
        qh += 32;
      }
      int32_t sumi = 0;
      for (int j = 0; j < qk_k / 16; ++j) {
        int s = 0;
        for (int l = 0; l < 16; ++l) s += q[16 * j + l] * y[b].qs[16 * j + l];
        sumi += x[b].scales[j] * s;
      }
      sum += fp16_to_f32(x[b].d) * y[b].d * sumi;
    }
    out[t] = sum;
  }
}

// Q6_K interleaved (repack_q6_k.h): dot_q6_k's integer sums and float
// operations row by row, so the two layouts give bit-identical results.
void dot_q6_kx16(int64_t n, const void* w, const uint8_t* acts, size_t stride, int nt, float* out, int64_t os) {
  const auto* x = static_cast<const block_q6_kx16*>(w);
  const int64_t nb = n / qk_k;
  for (int t = 0; t < nt; ++t) {
    const auto* y = reinterpret_cast<const block_q8_k*>(acts + t * stride);
    for (int r = 0; r < k_q6_kx16_rows; ++r) {
      float sum = 0;
      for (int64_t b = 0; b < nb; ++b) {
        int32_t sumi = 0;
        for (int k = 0; k < qk_k / 16; ++k) {
          int s = 0;
          for (int l = 0; l < 16; ++l) s += (q6_kx16_quant(x[b], r, 16 * k + l) - 32) * y[b].qs[16 * k + l];
          sumi += x[b].sc[k / 2][r][k % 2] * s;
        }
        sum += fp16_to_f32(x[b].d[r]) * y[b].d * sumi;
      }
      out[t * os + r] = sum;
    }
  }
}

float vec_dot_f32(const float* a, const float* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
  return static_cast<float>(s);
}
float vec_dot_f16_f32(const fp16_t* a, const float* b, int64_t n) {
  const float* tab = f16().v;
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(tab[a[i]]) * b[i];
  return static_cast<float>(s);
}
void axpy_f16(float alpha, const fp16_t* x, float* y, int64_t n) {
  const float* tab = f16().v;
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * tab[x[i]];
}
void f32_to_f16(const float* s, fp16_t* d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = f32_to_fp16(s[i]);
}
void f16_to_f32(const fp16_t* s, float* d, int64_t n) {
  const float* tab = f16().v;
  for (int64_t i = 0; i < n; ++i) d[i] = tab[s[i]];
}
float sum_squares(const float* x, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * x[i];
  return static_cast<float>(s);
}
void add(const float* a, const float* b, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}
void scale_mul(const float* x, const float* w, float s, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s * w[i];
}

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}
void gelu_mul(const float* x, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gelu_tanh(x[i]);
    out[i] = up ? g * up[i] : g;
  }
}
void scale(float* x, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] *= s;
}
float exp_sub_sum(const float* x, float max, int64_t n, float* out) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float e = std::exp(x[i] - max);
    if (out) out[i] = e;
    sum += e;
  }
  return static_cast<float>(sum);
}

float max_f32(const float* x, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

kernel_table make_scalar() {
  kernel_table t;
  t.dot_f32 = dot_f32;
  t.dot_f16 = dot_f16;
  t.dot_bf16 = dot_bf16;
  t.dot_q8_0 = dot_q8_0;
  t.dot_q4_0 = dot_q4_0;
  t.dot_q4_1 = dot_q32_unsigned<block_q4_1>;
  t.dot_q5_0 = dot_q32_unsigned<block_q5_0>;
  t.dot_q5_1 = dot_q32_unsigned<block_q5_1>;
  t.dot_q4_k = dot_qk45<false>;
  t.dot_q5_k = dot_qk45<true>;
  t.dot_q6_k = dot_q6_k;
  t.dot_q5_0x8 = dot_q5_0x8;
  t.dot_q8_0x16 = dot_q8_0x16;
  t.dot_q5_0x16 = dot_q5_0x16;
  t.dot_q4_kx16 = dot_q4_kx16;
  t.dot_q6_kx16 = dot_q6_kx16;
  t.vec_dot_f32 = vec_dot_f32;
  t.vec_dot_f16_f32 = vec_dot_f16_f32;
  t.axpy_f16 = axpy_f16;
  t.f32_to_f16 = f32_to_f16;
  t.f16_to_f32 = f16_to_f32;
  t.sum_squares = sum_squares;
  t.add = add;
  t.scale_mul = scale_mul;
  t.silu_mul = silu_mul;
  t.gelu_mul = gelu_mul;
  t.scale = scale;
  t.exp_sub_sum = exp_sub_sum;
  t.max_f32 = max_f32;
  t.quantize_act_q8_0 = quantize_act_q8_0;
  t.quantize_act_q8_k = quantize_act_q8_k;
  return t;
}

}  // namespace

const kernel_table& scalar_kernels() {
  static const kernel_table t = make_scalar();
  return t;
}

row_dot_fn row_dot_for(const kernel_table& t, ggml_type type) {
  switch (type) {
    case ggml_type::f32: return t.dot_f32;
    case ggml_type::f16: return t.dot_f16;
    case ggml_type::bf16: return t.dot_bf16;
    case ggml_type::q8_0: return t.dot_q8_0;
    case ggml_type::q4_0: return t.dot_q4_0;
    case ggml_type::q4_1: return t.dot_q4_1;
    case ggml_type::q5_0: return t.dot_q5_0;
    case ggml_type::q5_1: return t.dot_q5_1;
    case ggml_type::q4_k: return t.dot_q4_k;
    case ggml_type::q5_k: return t.dot_q5_k;
    case ggml_type::q6_k: return t.dot_q6_k;
    default: return nullptr;
  }
}

}  // namespace qf::infer::cpu::detail
