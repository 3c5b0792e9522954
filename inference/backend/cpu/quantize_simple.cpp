// Reference quantizers of the 32-element types (Q8_0 round-to-nearest with a
// max-abs scale; Q4_0/Q5_0 with the signed max mapped to -8/-16; Q4_1/Q5_1
// spanning [min, max] with 15/31 steps) and of the Q8_K
// activation type, following llama.cpp's reference rounding so that results
// match its files. Also the internal activation layouts used by matmul.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "inference/backend/cpu/quants.h"

namespace qf::infer::cpu::detail {

void quantize_row_q8_0_ref(const float* x, block_q8_0* y, int64_t n) {
  for (int64_t i = 0; i < n / qk8_0; ++i) {
    const float* xb = x + i * qk8_0;
    float amax = 0.0f;
    for (int j = 0; j < qk8_0; ++j) amax = std::max(amax, std::fabs(xb[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    for (int j = 0; j < qk8_0; ++j) y[i].qs[j] = static_cast<int8_t>(std::round(xb[j] * id));
  }
}

void quantize_row_q4_0_ref(const float* x, block_q4_0* y, int64_t n) {
  for (int64_t i = 0; i < n / qk4_0; ++i) {
    const float* xb = x + i * qk4_0;
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < qk4_0; ++j) {
      if (amax < std::fabs(xb[j])) {
        amax = std::fabs(xb[j]);
        max = xb[j];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    for (int j = 0; j < qk4_0 / 2; ++j) {
      const int x0 = std::min(15, static_cast<int>(static_cast<int8_t>(xb[j] * id + 8.5f)));
      const int x1 = std::min(15, static_cast<int>(static_cast<int8_t>(xb[j + qk4_0 / 2] * id + 8.5f)));
      y[i].qs[j] = static_cast<uint8_t>(x0 | (x1 << 4));
    }
  }
}

namespace {

// Signed max by magnitude (the first one on ties), as llama.cpp picks it.
float signed_absmax(const float* x, int n) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < n; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

void min_max(const float* x, int n, float& mn, float& mx) {
  mn = std::numeric_limits<float>::max();
  mx = -std::numeric_limits<float>::max();
  for (int j = 0; j < n; ++j) {
    if (x[j] < mn) mn = x[j];
    if (x[j] > mx) mx = x[j];
  }
}

}  // namespace

void quantize_row_q4_1_ref(const float* x, block_q4_1* y, int64_t n) {
  for (int64_t i = 0; i < n / qk4_1; ++i) {
    const float* xb = x + i * qk4_1;
    float mn, mx;
    min_max(xb, qk4_1, mn, mx);
    const float d = (mx - mn) / 15.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    y[i].m = f32_to_fp16(mn);
    for (int j = 0; j < qk4_1 / 2; ++j) {
      const int x0 = std::min(15, static_cast<int>(static_cast<int8_t>((xb[j] - mn) * id + 0.5f)));
      const int x1 = std::min(15, static_cast<int>(static_cast<int8_t>((xb[j + qk4_1 / 2] - mn) * id + 0.5f)));
      y[i].qs[j] = static_cast<uint8_t>(x0 | (x1 << 4));
    }
  }
}

void quantize_row_q5_0_ref(const float* x, block_q5_0* y, int64_t n) {
  for (int64_t i = 0; i < n / qk5_0; ++i) {
    const float* xb = x + i * qk5_0;
    const float d = signed_absmax(xb, qk5_0) / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    uint32_t qh = 0;
    for (int j = 0; j < qk5_0 / 2; ++j) {
      const auto x0 = static_cast<uint8_t>(std::min(31, static_cast<int>(static_cast<int8_t>(xb[j] * id + 16.5f))));
      const auto x1 =
          static_cast<uint8_t>(std::min(31, static_cast<int>(static_cast<int8_t>(xb[j + qk5_0 / 2] * id + 16.5f))));
      y[i].qs[j] = static_cast<uint8_t>((x0 & 0x0F) | ((x1 & 0x0F) << 4));
      qh |= static_cast<uint32_t>((x0 >> 4) & 1) << j;
      qh |= static_cast<uint32_t>((x1 >> 4) & 1) << (j + qk5_0 / 2);
    }
    for (int k = 0; k < 4; ++k) y[i].qh[k] = static_cast<uint8_t>(qh >> (8 * k));
  }
}

void quantize_row_q5_1_ref(const float* x, block_q5_1* y, int64_t n) {
  for (int64_t i = 0; i < n / qk5_1; ++i) {
    const float* xb = x + i * qk5_1;
    float mn, mx;
    min_max(xb, qk5_1, mn, mx);
    const float d = (mx - mn) / 31.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    y[i].m = f32_to_fp16(mn);
    uint32_t qh = 0;
    for (int j = 0; j < qk5_1 / 2; ++j) {
      // (x - min) * id lies in [0, 31] up to rounding: no clamp, as in llama.cpp.
      const auto x0 = static_cast<uint8_t>((xb[j] - mn) * id + 0.5f);
      const auto x1 = static_cast<uint8_t>((xb[j + qk5_1 / 2] - mn) * id + 0.5f);
      y[i].qs[j] = static_cast<uint8_t>((x0 & 0x0F) | ((x1 & 0x0F) << 4));
      qh |= static_cast<uint32_t>((x0 >> 4) & 1) << j;
      qh |= static_cast<uint32_t>((x1 >> 4) & 1) << (j + qk5_1 / 2);
    }
    for (int k = 0; k < 4; ++k) y[i].qh[k] = static_cast<uint8_t>(qh >> (8 * k));
  }
}

void quantize_row_q8_k_ref(const float* x, block_q8_k* y, int64_t n) {
  for (int64_t i = 0; i < n / qk_k; ++i) {
    const float* xb = x + i * qk_k;
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < qk_k; ++j) {
      if (amax < std::fabs(xb[j])) {
        amax = std::fabs(xb[j]);
        max = xb[j];
      }
    }
    if (amax == 0.0f) {
      std::memset(&y[i], 0, sizeof(block_q8_k));
      continue;
    }
    const float iscale = -127.0f / max;
    for (int j = 0; j < qk_k; ++j) y[i].qs[j] = static_cast<int8_t>(std::min(127, nearest_int(iscale * xb[j])));
    for (int j = 0; j < qk_k / 16; ++j) {
      int sum = 0;
      for (int l = 0; l < 16; ++l) sum += y[i].qs[j * 16 + l];
      y[i].bsums[j] = static_cast<int16_t>(sum);
    }
    y[i].d = 1.0f / iscale;
  }
}

size_t act_q8_0_bytes(int64_t n) {
  const int64_t nb = n / qk8_0;
  return static_cast<size_t>(nb) * (2 * sizeof(float) + qk8_0 + sizeof(int32_t));
}

void quantize_act_q8_0(const float* x, uint8_t* dst, int64_t n) {
  const int64_t nb = n / qk8_0;
  auto* d = reinterpret_cast<float*>(dst);
  float* sums = d + nb;
  auto* q = reinterpret_cast<int8_t*>(dst + nb * 2 * sizeof(float));
  auto* isums = reinterpret_cast<int32_t*>(dst + nb * (2 * sizeof(float) + qk8_0));
  for (int64_t i = 0; i < nb; ++i) {
    block_q8_0 b;
    quantize_row_q8_0_ref(x + i * qk8_0, &b, qk8_0);
    int s = 0;
    for (int j = 0; j < qk8_0; ++j) s += b.qs[j];
    std::memcpy(q + i * qk8_0, b.qs, qk8_0);
    d[i] = fp16_to_f32(b.d);
    sums[i] = d[i] * static_cast<float>(s);
    isums[i] = s;
  }
}

size_t act_q8_k_bytes(int64_t n) { return static_cast<size_t>(n / qk_k) * sizeof(block_q8_k); }

void quantize_act_q8_k(const float* x, uint8_t* dst, int64_t n) {
  quantize_row_q8_k_ref(x, reinterpret_cast<block_q8_k*>(dst), n);
}

}  // namespace qf::infer::cpu::detail
