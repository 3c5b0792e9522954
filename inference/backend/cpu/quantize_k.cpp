// Reference quantizers of the k-quants (Q4_K, Q5_K, Q6_K).
//
// As in llama.cpp: each 32-value (Q4_K/Q5_K) sub-block gets a scale and a min
// from a weighted least-squares search over a few candidate scales
// (fit_scale_min); each 16-value Q6_K sub-block gets a symmetric scale from a
// similar search (fit_scale_sym). Sub-block scales are then quantized to 6 or
// 8 bits against a per-super-block fp16 scale, and the values re-quantized
// with the scales actually stored, so the blocks decode to what was fitted.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "inference/backend/cpu/quants.h"

namespace qf::infer::cpu::detail {
namespace {

// Asymmetric fit x ~ scale * L - min_out with L in [0, nmax]; returns scale,
// writes min_out (>= 0). Weighted squared error, candidates iscale around
// nmax / (max - min).
float fit_scale_min(int n, int nmax, const float* x, const float* w, uint8_t* L, float* min_out) {
  float min = x[0], max = x[0], sum_w = w[0], sum_x = w[0] * x[0];
  for (int i = 1; i < n; ++i) {
    min = std::min(min, x[i]);
    max = std::max(max, x[i]);
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    std::fill(L, L + n, 0);
    *min_out = -min;
    return 0.0f;
  }
  float iscale = nmax / (max - min);
  float scale = 1.0f / iscale;
  float best_err = 0.0f;
  for (int i = 0; i < n; ++i) {
    L[i] = static_cast<uint8_t>(std::clamp(nearest_int(iscale * (x[i] - min)), 0, nmax));
    const float diff = scale * L[i] + min - x[i];
    best_err += w[i] * diff * diff;
  }
  uint8_t aux[32];
  for (int step = 0; step <= 20; ++step) {
    iscale = (-1.0f + 0.1f * step + nmax) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(nearest_int(iscale * (x[i] - min)), 0, nmax);
      aux[i] = static_cast<uint8_t>(l);
      sum_l += w[i] * l;
      sum_l2 += w[i] * l * l;
      sum_xl += w[i] * l * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D <= 0) continue;
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
    float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
    if (this_min > 0) {
      this_min = 0;
      this_scale = sum_xl / sum_l2;
    }
    float err = 0;
    for (int i = 0; i < n; ++i) {
      const float diff = this_scale * aux[i] + this_min - x[i];
      err += w[i] * diff * diff;
    }
    if (err < best_err) {
      std::memcpy(L, aux, static_cast<size_t>(n));
      best_err = err;
      scale = this_scale;
      min = this_min;
    }
  }
  *min_out = -min;
  return scale;
}

// Symmetric fit x ~ scale * (L - nmax), L in [0, 2*nmax), weighted by x^2.
// The value of largest magnitude maps to -nmax, so the scale's sign follows it.
float fit_scale_sym(int n, int nmax, const float* x, int8_t* L) {
  float amax = 0, max = 0;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  }
  if (amax < 1e-30f) {
    std::fill(L, L + n, 0);
    return 0.0f;
  }
  float best_scale = 0, best = 0;
  bool have = false;
  for (int step = -9; step <= 9; ++step) {
    const float iscale = -(nmax + 0.1f * step) / max;
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
      const float w = x[i] * x[i];
      sumlx += w * x[i] * l;
      suml2 += w * l * l;
    }
    if (suml2 <= 0) continue;
    if (!have || sumlx * sumlx > best * suml2) {
      have = true;
      best_scale = sumlx / suml2;
      best = best_scale * sumlx;
      for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1) + nmax);
    }
  }
  return best_scale;
}

// Shared by Q4_K and Q5_K: per super-block, 8 scales/mins fitted and packed.
template <int NMAX>
void quantize_superblock_k(const float* x, float* d_out, float* dmin_out, uint8_t* scales12, uint8_t* L) {
  float scales[8], mins[8], weights[32];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < 8; ++j) {
    const float* xs = x + 32 * j;
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += xs[l] * xs[l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xs[l]);
    scales[j] = fit_scale_min(32, NMAX, xs, weights, L + 32 * j, &mins[j]);
    max_scale = std::max(max_scale, scales[j]);
    max_min = std::max(max_min, mins[j]);
  }
  const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
  std::memset(scales12, 0, k_scale_size);
  for (int j = 0; j < 8; ++j) {
    const int ls = std::min(63, nearest_int(inv_scale * scales[j]));
    const int lm = std::min(63, nearest_int(inv_min * mins[j]));
    if (j < 4) {
      scales12[j] = static_cast<uint8_t>(ls);
      scales12[j + 4] = static_cast<uint8_t>(lm);
    } else {
      scales12[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
      scales12[j - 4] |= static_cast<uint8_t>((ls >> 4) << 6);
      scales12[j] |= static_cast<uint8_t>((lm >> 4) << 6);
    }
  }
  const fp16_t dh = f32_to_fp16(max_scale / 63.0f);
  const fp16_t mh = f32_to_fp16(max_min / 63.0f);
  *d_out = fp16_to_f32(dh);
  *dmin_out = fp16_to_f32(mh);
  // Re-quantize against the scales as stored.
  uint8_t sc[8], mn[8];
  unpack_scale_min_k4(scales12, sc, mn);
  for (int j = 0; j < 8; ++j) {
    const float d = *d_out * sc[j];
    if (d == 0.0f) continue;
    const float dm = *dmin_out * mn[j];
    for (int l = 0; l < 32; ++l)
      L[32 * j + l] = static_cast<uint8_t>(std::clamp(nearest_int((x[32 * j + l] + dm) / d), 0, NMAX));
  }
}

}  // namespace

void quantize_row_q4_k_ref(const float* x, block_q4_k* y, int64_t n) {
  for (int64_t i = 0; i < n / qk_k; ++i, x += qk_k) {
    uint8_t L[qk_k];
    float d, dmin;
    quantize_superblock_k<15>(x, &d, &dmin, y[i].scales, L);
    y[i].d = f32_to_fp16(d);
    y[i].dmin = f32_to_fp16(dmin);
    uint8_t* q = y[i].qs;
    for (int j = 0; j < qk_k; j += 64) {
      for (int l = 0; l < 32; ++l) q[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
      q += 32;
    }
  }
}

void quantize_row_q5_k_ref(const float* x, block_q5_k* y, int64_t n) {
  for (int64_t i = 0; i < n / qk_k; ++i, x += qk_k) {
    uint8_t L[qk_k];
    float d, dmin;
    quantize_superblock_k<31>(x, &d, &dmin, y[i].scales, L);
    y[i].d = f32_to_fp16(d);
    y[i].dmin = f32_to_fp16(dmin);
    std::memset(y[i].qh, 0, sizeof y[i].qh);
    uint8_t* ql = y[i].qs;
    uint8_t m1 = 1, m2 = 2;
    for (int j = 0; j < qk_k; j += 64) {
      for (int l = 0; l < 32; ++l) {
        int l1 = L[j + l], l2 = L[j + l + 32];
        if (l1 > 15) {
          l1 -= 16;
          y[i].qh[l] |= m1;
        }
        if (l2 > 15) {
          l2 -= 16;
          y[i].qh[l] |= m2;
        }
        ql[l] = static_cast<uint8_t>(l1 | (l2 << 4));
      }
      m1 = static_cast<uint8_t>(m1 << 2);
      m2 = static_cast<uint8_t>(m2 << 2);
      ql += 32;
    }
  }
}

void quantize_row_q6_k_ref(const float* x, block_q6_k* y, int64_t n) {
  for (int64_t i = 0; i < n / qk_k; ++i, x += qk_k) {
    int8_t L[qk_k];
    float scales[qk_k / 16];
    float max_scale = 0, max_abs_scale = 0;
    for (int ib = 0; ib < qk_k / 16; ++ib) {
      scales[ib] = fit_scale_sym(16, 32, x + 16 * ib, L + 16 * ib);
      if (std::fabs(scales[ib]) > max_abs_scale) {
        max_abs_scale = std::fabs(scales[ib]);
        max_scale = scales[ib];
      }
    }
    if (max_abs_scale == 0.0f) {
      std::memset(&y[i], 0, sizeof(block_q6_k));
      continue;
    }
    const float iscale = -128.0f / max_scale;
    y[i].d = f32_to_fp16(1.0f / iscale);
    for (int ib = 0; ib < qk_k / 16; ++ib)
      y[i].scales[ib] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
    const float dd = fp16_to_f32(y[i].d);
    for (int j = 0; j < qk_k / 16; ++j) {
      const float d = dd * y[i].scales[j];
      if (d == 0.0f) continue;
      for (int l = 0; l < 16; ++l)
        L[16 * j + l] = static_cast<int8_t>(std::clamp(nearest_int(x[16 * j + l] / d), -32, 31) + 32);
    }
    uint8_t* ql = y[i].ql;
    uint8_t* qh = y[i].qh;
    for (int j = 0; j < qk_k; j += 128) {
      for (int l = 0; l < 32; ++l) {
        const int q1 = L[j + l] & 0xF, q2 = L[j + l + 32] & 0xF;
        const int q3 = L[j + l + 64] & 0xF, q4 = L[j + l + 96] & 0xF;
        ql[l] = static_cast<uint8_t>(q1 | (q3 << 4));
        ql[l + 32] = static_cast<uint8_t>(q2 | (q4 << 4));
        qh[l] = static_cast<uint8_t>((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) | ((L[j + l + 64] >> 4) << 4) |
                                     ((L[j + l + 96] >> 4) << 6));
      }
      ql += 64;
      qh += 32;
    }
  }
}

}  // namespace qf::infer::cpu::detail
