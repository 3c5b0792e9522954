// Shared device helpers for the CUDA kernels: error checking, F16 loads,
// warp reductions, and the dequantization of one GGUF block element range.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "inference/backend/cuda/cuda_ops.h"

#define QF_CUDA_CHECK(expr) ::qf::infer::cuda::check(static_cast<int>(expr), #expr)

namespace qf::infer::cuda {

__host__ __device__ __forceinline__ float h2f(uint16_t h) { return __half2float(__ushort_as_half(h)); }
__host__ __device__ __forceinline__ float bf16_to_float(uint16_t h) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(uint32_t(h) << 16);
#else
  const uint32_t u = uint32_t(h) << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
#endif
}
__device__ __forceinline__ uint16_t f2h(float f) { return __half_as_ushort(__float2half_rn(f)); }
// F16 without overflow to inf: for the cuBLAS operands, where an inf would
// turn a whole output row into NaN (decode, in F32, would not overflow).
__device__ __forceinline__ uint16_t f2h_sat(float f) { return f2h(fminf(fmaxf(f, -65504.0f), 65504.0f)); }

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

inline unsigned grid_1d(int64_t n, int threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

// k-quant 6-bit scale/min unpacking (12 bytes hold 8 scales and 8 mins).
__host__ __device__ __forceinline__ void scale_min_k4(int j, const uint8_t* q, float& sc, float& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// Per-type "part" decoding: a row is split into blocks, each block into
// `parts` parts of 8 elements. part(block, p, idx, val) fills the 8 element
// indices (relative to the block start) and values of part p.
//
// Where those 8 elements form two runs of 4 (quad_gap > 0): elements
// quad_a(p) .. +3 and quad_a(p) + quad_gap .. +3, in that order, so that a
// kernel can fetch the matching activations with two 16-byte loads.
// tests/inference/backend/cuda/test_cuda_block_decode.cu checks this against part()'s indices.
template <ggml_type T> struct qtraits;

template <> struct qtraits<ggml_type::f32> {
  static constexpr int qk = 32, parts = 4;
  static constexpr int bytes = 128;
  static constexpr int quad_gap = 4;
  __host__ __device__ static int quad_a(int p) { return p * 8; }
  __host__ __device__ static void part(const uint8_t* b, int p, int* idx, float* val) {
    const float* f = reinterpret_cast<const float*>(b);
#pragma unroll
    for (int i = 0; i < 8; ++i) { idx[i] = p * 8 + i; val[i] = f[p * 8 + i]; }
  }
};
template <> struct qtraits<ggml_type::f16> {
  static constexpr int qk = 32, parts = 4;
  static constexpr int bytes = 64;
  static constexpr int quad_gap = 4;
  __host__ __device__ static int quad_a(int p) { return p * 8; }
  __host__ __device__ static void part(const uint8_t* b, int p, int* idx, float* val) {
    const uint16_t* h = reinterpret_cast<const uint16_t*>(b);
#pragma unroll
    for (int i = 0; i < 8; ++i) { idx[i] = p * 8 + i; val[i] = h2f(h[p * 8 + i]); }
  }
};
template <> struct qtraits<ggml_type::bf16> {
  static constexpr int qk = 32, parts = 4;
  static constexpr int bytes = 64;
  static constexpr int quad_gap = 4;
  __host__ __device__ static int quad_a(int p) { return p * 8; }
  __host__ __device__ static void part(const uint8_t* b, int p, int* idx, float* val) {
    const uint16_t* h = reinterpret_cast<const uint16_t*>(b);
#pragma unroll
    for (int i = 0; i < 8; ++i) { idx[i] = p * 8 + i; val[i] = bf16_to_float(h[p * 8 + i]); }
  }
};
template <> struct qtraits<ggml_type::q8_0> {
  static constexpr int qk = 32, parts = 4;
  static constexpr int bytes = sizeof(block_q8_0);
  static constexpr int quad_gap = 4;
  __host__ __device__ static int quad_a(int p) { return p * 8; }
  // Blocks are 34 bytes, so only 2-byte loads are aligned: four of them fetch
  // the part's 8 quants (little-endian: the lower address is the low byte).
  __host__ __device__ static void part(const uint8_t* b, int p, int* idx, float* val) {
    const uint16_t* h = reinterpret_cast<const uint16_t*>(b);
    const float d = h2f(h[0]);
    const uint16_t* q = h + 1 + p * 4;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint16_t v = q[k];
      idx[2 * k] = p * 8 + 2 * k;         val[2 * k] = d * float(int8_t(v & 0xFF));
      idx[2 * k + 1] = p * 8 + 2 * k + 1; val[2 * k + 1] = d * float(int8_t(v >> 8));
    }
  }
};
template <> struct qtraits<ggml_type::q4_0> {
  static constexpr int qk = 32, parts = 4;
  static constexpr int bytes = sizeof(block_q4_0);
  static constexpr int quad_gap = 16;
  __host__ __device__ static int quad_a(int p) { return p * 4; }
  // 18-byte blocks: the part's 4 bytes of nibbles as two aligned 2-byte loads.
  __host__ __device__ static void part(const uint8_t* b, int p, int* idx, float* val) {
    const uint16_t* h = reinterpret_cast<const uint16_t*>(b);
    const float d = h2f(h[0]);
    const uint32_t q = uint32_t(h[1 + 2 * p]) | (uint32_t(h[2 + 2 * p]) << 16);  // bytes 4p .. 4p+3 of qs
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int j = p * 4 + i;
      const uint32_t byte = (q >> (8 * i)) & 0xFF;
      idx[i] = j;          val[i] = d * (float(byte & 0xF) - 8.0f);
      idx[4 + i] = j + 16; val[4 + i] = d * (float(byte >> 4) - 8.0f);
    }
  }
};
template <> struct qtraits<ggml_type::q4_1> {
  static constexpr int qk = 32, parts = 4;
  static constexpr int bytes = sizeof(block_q4_1);
  static constexpr int quad_gap = 16;
  __host__ __device__ static int quad_a(int p) { return p * 4; }
  __host__ __device__ static void part(const uint8_t* b, int p, int* idx, float* val) {
    const uint16_t* dm = reinterpret_cast<const uint16_t*>(b);
    const float d = h2f(dm[0]), m = h2f(dm[1]);
    const uint8_t* qs = b + 4;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int j = p * 4 + i;
      idx[i] = j;          val[i] = d * float(qs[j] & 0xF) + m;
      idx[4 + i] = j + 16; val[4 + i] = d * float(qs[j] >> 4) + m;
    }
  }
};
// The 5th bit of element j is bit j of qh (a little-endian uint32, read
// bytewise: blocks are only 2-byte aligned).
__host__ __device__ __forceinline__ uint32_t load_qh(const uint8_t* q) {
  return uint32_t(q[0]) | (uint32_t(q[1]) << 8) | (uint32_t(q[2]) << 16) | (uint32_t(q[3]) << 24);
}
template <> struct qtraits<ggml_type::q5_0> {
  static constexpr int qk = 32, parts = 4;
  static constexpr int bytes = sizeof(block_q5_0);
  static constexpr int quad_gap = 16;
  __host__ __device__ static int quad_a(int p) { return p * 4; }
  __host__ __device__ static void part(const uint8_t* b, int p, int* idx, float* val) {
    const float d = h2f(reinterpret_cast<const uint16_t*>(b)[0]);
    const uint32_t qh = load_qh(b + 2);
    const uint8_t* qs = b + 6;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int j = p * 4 + i;
      const int lo = int((qs[j] & 0xF) | (((qh >> j) & 1u) << 4));
      const int hi = int((qs[j] >> 4) | (((qh >> (j + 16)) & 1u) << 4));
      idx[i] = j;          val[i] = d * float(lo - 16);
      idx[4 + i] = j + 16; val[4 + i] = d * float(hi - 16);
    }
  }
};
template <> struct qtraits<ggml_type::q5_1> {
  static constexpr int qk = 32, parts = 4;
  static constexpr int bytes = sizeof(block_q5_1);
  static constexpr int quad_gap = 16;
  __host__ __device__ static int quad_a(int p) { return p * 4; }
  __host__ __device__ static void part(const uint8_t* b, int p, int* idx, float* val) {
    const uint16_t* dm = reinterpret_cast<const uint16_t*>(b);
    const float d = h2f(dm[0]), m = h2f(dm[1]);
    const uint32_t qh = load_qh(b + 4);
    const uint8_t* qs = b + 8;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int j = p * 4 + i;
      const int lo = int((qs[j] & 0xF) | (((qh >> j) & 1u) << 4));
      const int hi = int((qs[j] >> 4) | (((qh >> (j + 16)) & 1u) << 4));
      idx[i] = j;          val[i] = d * float(lo) + m;
      idx[4 + i] = j + 16; val[4 + i] = d * float(hi) + m;
    }
  }
};
template <> struct qtraits<ggml_type::q4_k> {
  static constexpr int qk = 256, parts = 32;
  static constexpr int bytes = sizeof(block_q4_k);
  static constexpr int quad_gap = 32;
  __host__ __device__ static int quad_a(int p) { return (p / 8) * 64 + (p % 8) * 4; }
  __host__ __device__ static void part(const uint8_t* b, int p, int* idx, float* val) {
    const block_q4_k* x = reinterpret_cast<const block_q4_k*>(b);
    const float d = h2f(x->d), dmin = h2f(x->dmin);
    const int c = p / 8;            // 64-element chunk
    const int l0 = (p % 8) * 4;     // 4 quant bytes of the chunk
    float sc1, m1, sc2, m2;
    scale_min_k4(2 * c, x->scales, sc1, m1);
    scale_min_k4(2 * c + 1, x->scales, sc2, m2);
    const uint8_t* q = x->qs + c * 32;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int l = l0 + i;
      idx[i] = c * 64 + l;          val[i] = d * sc1 * float(q[l] & 0xF) - dmin * m1;
      idx[4 + i] = c * 64 + 32 + l; val[4 + i] = d * sc2 * float(q[l] >> 4) - dmin * m2;
    }
  }
};
template <> struct qtraits<ggml_type::q5_k> {
  static constexpr int qk = 256, parts = 32;
  static constexpr int bytes = sizeof(block_q5_k);
  static constexpr int quad_gap = 32;
  __host__ __device__ static int quad_a(int p) { return (p / 8) * 64 + (p % 8) * 4; }
  __host__ __device__ static void part(const uint8_t* b, int p, int* idx, float* val) {
    const block_q5_k* x = reinterpret_cast<const block_q5_k*>(b);
    const float d = h2f(x->d), dmin = h2f(x->dmin);
    const int c = p / 8;
    const int l0 = (p % 8) * 4;
    float sc1, m1, sc2, m2;
    scale_min_k4(2 * c, x->scales, sc1, m1);
    scale_min_k4(2 * c + 1, x->scales, sc2, m2);
    const uint8_t* ql = x->qs + c * 32;
    const uint8_t u1 = uint8_t(1u << (2 * c)), u2 = uint8_t(2u << (2 * c));
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int l = l0 + i;
      const float lo = float((ql[l] & 0xF) + ((x->qh[l] & u1) ? 16 : 0));
      const float hi = float((ql[l] >> 4) + ((x->qh[l] & u2) ? 16 : 0));
      idx[i] = c * 64 + l;          val[i] = d * sc1 * lo - dmin * m1;
      idx[4 + i] = c * 64 + 32 + l; val[4 + i] = d * sc2 * hi - dmin * m2;
    }
  }
};
template <> struct qtraits<ggml_type::q6_k> {
  static constexpr int qk = 256, parts = 32;
  static constexpr int bytes = sizeof(block_q6_k);
  static constexpr int quad_gap = 0;  // strided by 32: no runs of 4
  __host__ __device__ static int quad_a(int) { return 0; }
  __host__ __device__ static void part(const uint8_t* b, int p, int* idx, float* val) {
    const block_q6_k* x = reinterpret_cast<const block_q6_k*>(b);
    const float d = h2f(x->d);
    const int n = p / 16;            // 128-element half
    const int l0 = (p % 16) * 2;     // two l values, each giving 4 elements
    const uint8_t* ql = x->ql + n * 64;
    const uint8_t* qh = x->qh + n * 32;
    const int8_t* sc = x->scales + n * 8;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int l = l0 + i;
      const int is = l / 16;
      const int q1 = int((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = int((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = int((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = int((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      const int base = n * 128 + l;
      idx[4 * i + 0] = base;      val[4 * i + 0] = d * sc[is + 0] * q1;
      idx[4 * i + 1] = base + 32; val[4 * i + 1] = d * sc[is + 2] * q2;
      idx[4 * i + 2] = base + 64; val[4 * i + 2] = d * sc[is + 4] * q3;
      idx[4 * i + 3] = base + 96; val[4 * i + 3] = d * sc[is + 6] * q4;
    }
  }
};

template <ggml_type T> using type_tag = std::integral_constant<ggml_type, T>;

// Calls f(type_tag<T>{}) for the runtime type; returns false if unsupported.
template <class F> bool dispatch_type(ggml_type t, F&& f) {
  switch (t) {
    case ggml_type::f32: f(type_tag<ggml_type::f32>{}); return true;
    case ggml_type::f16: f(type_tag<ggml_type::f16>{}); return true;
    case ggml_type::bf16: f(type_tag<ggml_type::bf16>{}); return true;
    case ggml_type::q8_0: f(type_tag<ggml_type::q8_0>{}); return true;
    case ggml_type::q4_0: f(type_tag<ggml_type::q4_0>{}); return true;
    case ggml_type::q4_1: f(type_tag<ggml_type::q4_1>{}); return true;
    case ggml_type::q5_0: f(type_tag<ggml_type::q5_0>{}); return true;
    case ggml_type::q5_1: f(type_tag<ggml_type::q5_1>{}); return true;
    case ggml_type::q4_k: f(type_tag<ggml_type::q4_k>{}); return true;
    case ggml_type::q5_k: f(type_tag<ggml_type::q5_k>{}); return true;
    case ggml_type::q6_k: f(type_tag<ggml_type::q6_k>{}); return true;
    default: return false;
  }
}

// The cell of a sequence's position p: p itself (contiguous cache, blocks
// null) or, paged, row p % 2^shift of block blocks[p >> shift].
__device__ __forceinline__ int64_t kv_cell(const int32_t* blocks, int shift, int64_t p) {
  return blocks ? (int64_t(blocks[p >> shift]) << shift) | (p & ((int64_t(1) << shift) - 1)) : p;
}

}  // namespace qf::infer::cuda
