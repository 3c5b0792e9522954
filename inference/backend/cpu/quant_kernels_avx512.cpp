// AVX-512 + VNNI kernels for the quantized weight types.
//
// vpdpbusd multiplies unsigned by signed bytes and sums groups of four
// straight into int32 lanes, replacing the maddubs/madd pair of AVX2:
//  - Q8_0/Q4_0: eight blocks per step, two per register; the eight scale
//    products d_x * d_y form one vector, spread over each pair's lanes with a
//    permute. Q8_0 moves x's sign onto y (|x| * ±y) with a mask; Q4_0 keeps
//    nibbles unsigned (0..15) and folds the -8 offset in with the activation
//    block sums s = d_y * sum(q_y) that matmul stores with the activations.
//  - Q4_1/Q5_0/Q5_1: two blocks per register, unsigned quants (the qh words
//    are the byte mask that adds the 5th bit); offsets -16 * d_x or m times
//    the activation block sums s. Q5_0's eight-block groups (repack_q5_0.h)
//    unpack from two loads and a byte test of the group's qh.
//  - Q4_K/Q5_K/Q6_K: sub-block dot products land in their own int32 lanes and
//    are multiplied by the matching integer sub-block scales; min/offset terms
//    come from the Q8_K 16-value sums.
//  - Q8_0/Q5_0/Q4_K/Q6_K interleaved sixteen rows at a time (the repack_*x16
//    and repack_q8_0.h layouts): lane r of every register is row r, each
//    activation word is broadcast to all sixteen, and the sixteen sums leave
//    as one vector.
// Against several tokens (prefill) every step asks for the weights 2 KiB
// ahead (simd_prefetch.h): GEMM 5-20 % faster on a Zen 4 core. Against one
// token (decode) that depends on the CPU (prefetch_one_token): on a Zen 4
// core, with the weights on huge pages as a loaded model's are, the hardware
// prefetchers keep up and the requests only cost issue slots (GEMV up to
// 23 % slower with them, bench_matmul; on 4 KiB pages they were worth
// 14.9 -> 19.9 GB/s at 4864x896 Q8_0); on an Intel Xeon core they keep more
// misses in flight than the hardware does (GEMV from memory 7-15 % faster
// with them, Q8_0, Q4_K and Q6_K groups). Q5_0's eight-block groups (weights
// of fewer than sixteen rows), the most work per byte, ask against one token
// everywhere: 4864x896 GEMV on one Zen 4 thread streamed 16-18 GB/s with the
// requests and 13.5-17 without. Its sixteen-row groups follow the rule of
// the others (on a Zen 5 core the requests cost them up to 20 % on two
// threads).
// The first include of <immintrin.h> (the header says why).
#include "inference/backend/cpu/immintrin_avx512.h"

#include <cstring>
#include <type_traits>

#include "inference/backend/cpu/kernels.h"
#include "inference/backend/cpu/quants.h"
#include "inference/backend/cpu/repack_q4_k.h"
#include "inference/backend/cpu/repack_q5_0.h"
#include "inference/backend/cpu/repack_q5_0x16.h"
#include "inference/backend/cpu/repack_q6_k.h"
#include "inference/backend/cpu/repack_q8_0.h"
#include "inference/backend/cpu/simd_prefetch.h"
#include "inference/backend/cpu/simd_reduce.h"

namespace qf::infer::cpu::detail {
namespace {

// Whether the kernels ask for the weights ahead against one token too (set
// once by fill_avx512_kernels; see the top of the file).
bool prefetch_one_token = false;

inline float h2f(fp16_t h) { return _cvtsh_ss(h); }
inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline __m512i load512(const void* p) { return _mm512_loadu_si512(p); }
inline __m512i join(__m256i lo, __m256i hi) { return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1); }
inline __m512 halves(float lo, float hi) { return _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(lo), _mm512_set1_ps(hi)); }

// Scales of blocks b..b+7 of a weight row as floats.
template <class B>
inline __m256 scales8(const B* x) {
  const __m128i h = _mm_setr_epi16(static_cast<short>(x[0].d), static_cast<short>(x[1].d), static_cast<short>(x[2].d),
                                   static_cast<short>(x[3].d), static_cast<short>(x[4].d), static_cast<short>(x[5].d),
                                   static_cast<short>(x[6].d), static_cast<short>(x[7].d));
  return _mm256_cvtph_ps(h);
}

// Mins of blocks b..b+7 (Q4_1/Q5_1) as floats.
template <class B>
inline __m256 mins8(const B* x) {
  const __m128i h = _mm_setr_epi16(static_cast<short>(x[0].m), static_cast<short>(x[1].m), static_cast<short>(x[2].m),
                                   static_cast<short>(x[3].m), static_cast<short>(x[4].m), static_cast<short>(x[5].m),
                                   static_cast<short>(x[6].m), static_cast<short>(x[7].m));
  return _mm256_cvtph_ps(h);
}

// Bit k in every byte of the low 256 bits, bit k + 1 in the high: tested
// against a broadcast 32-byte qh word (byte j, bit k: element j of block or
// sub-block k), the mask of a register holding blocks k and k + 1.
inline __m512i bit_pair(int k) {
  return _mm512_mask_blend_epi32(0xFF00, _mm512_set1_epi8(static_cast<char>(1 << k)),
                                 _mm512_set1_epi8(static_cast<char>(1 << (k + 1))));
}

// Lane layout of a dot product over blocks 2p, 2p+1: lanes 0..7 block 2p, 8..15 block 2p+1.
inline __m512i pair_index(int p) {
  return _mm512_mask_blend_epi32(0xFF00, _mm512_set1_epi32(2 * p), _mm512_set1_epi32(2 * p + 1));
}

// Q4_0 nibbles of blocks a and b as [a 0..31 | b 0..31] unsigned bytes.
inline __m512i unpack_q4_0_pair(const block_q4_0& a, const block_q4_0& b) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i raw = _mm256_set_m128i(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs)),
                                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(a.qs)));
  const __m256i lo = _mm256_and_si256(raw, m4), hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
  const __m512i q = join(lo, hi);                       // [lo a, lo b, hi a, hi b]
  return _mm512_shuffle_i64x2(q, q, _MM_SHUFFLE(3, 1, 2, 0));  // [lo a, hi a, lo b, hi b]
}

// Eight Q4_0 blocks (144 bytes, 18 per block) gathered with 16-bit permutes
// from three loads (the last masked to the 16 bytes that belong to the
// blocks): the eight scales as floats and the nibbles as four registers
// [lo 2k, hi 2k, lo 2k+1, hi 2k+1].
inline void unpack_q4_0_octet(const block_q4_0* x, __m256* d, __m512i q[4]) {
  const auto* p = reinterpret_cast<const uint8_t*>(x);
  const __m512i a = _mm512_loadu_si512(p);
  const __m512i b = _mm512_loadu_si512(p + 64);
  const __m512i c = _mm512_maskz_loadu_epi16(0xFF, p + 128);
  // Block k starts at 16-bit word 9k: its scale, then 8 words of nibbles.
  alignas(64) static constexpr int16_t d_words[32] = {0, 9, 18, 27, 36, 45, 54, 63};
  alignas(64) static constexpr int16_t q0_words[32] = {1,  2,  3,  4,  5,  6,  7,  8,  10, 11, 12, 13, 14, 15, 16, 17,
                                                       19, 20, 21, 22, 23, 24, 25, 26, 28, 29, 30, 31, 32, 33, 34, 35};
  // Blocks 4..7 relative to b (word 32): words 37.. -> 5.., the last block's from c (index 32+).
  alignas(64) static constexpr int16_t q1_words[32] = {5,  6,  7,  8,  9,  10, 11, 12, 14, 15, 16, 17, 18, 19, 20, 21,
                                                       23, 24, 25, 26, 27, 28, 29, 30, 32, 33, 34, 35, 36, 37, 38, 39};
  const __m512i d_idx = _mm512_load_si512(d_words), q0_idx = _mm512_load_si512(q0_words);
  const __m512i q1_idx = _mm512_load_si512(q1_words);
  *d = _mm256_cvtph_ps(_mm512_castsi512_si128(_mm512_permutex2var_epi16(a, d_idx, b)));
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  const __m512i lo_idx = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), hi_idx = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
  for (int k = 0; k < 2; ++k) {
    const __m512i raw = k == 0 ? _mm512_permutex2var_epi16(a, q0_idx, b) : _mm512_permutex2var_epi16(b, q1_idx, c);
    const __m512i lo = _mm512_and_si512(raw, m4), hi = _mm512_and_si512(_mm512_srli_epi16(raw, 4), m4);
    q[2 * k] = _mm512_permutex2var_epi64(lo, lo_idx, hi);
    q[2 * k + 1] = _mm512_permutex2var_epi64(lo, hi_idx, hi);
  }
}

// Q8_0 x Q8_0: eight blocks per step; the eight products d_x * d_y are one
// vector, spread over the lanes of each block pair with a permute.
template <int NT>
void dot_q8_0(int64_t n, const void* w, const uint8_t* acts, size_t stride, float* out) {
  const auto* x = static_cast<const block_q8_0*>(w);
  const int64_t nb = n / qk8_0;
  const float* yd[NT];
  const int8_t* yq[NT];
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) {
    yd[t] = act_q8_0_d(acts + t * stride);
    yq[t] = act_q8_0_q(acts + t * stride, nb);
    acc[t] = _mm512_setzero_ps();
  }
  const __m512i zero = _mm512_setzero_si512();
  const __m512i pidx[4] = {pair_index(0), pair_index(1), pair_index(2), pair_index(3)};
  int64_t b = 0;
  for (; b + 8 <= nb; b += 8) {
    if (NT > 1 || prefetch_one_token) simd::prefetch_ahead<8 * sizeof(block_q8_0)>(x + b);
    const __m256 dx = scales8(x + b);
    __m512i ax[4];
    __mmask64 neg[4];
    for (int p = 0; p < 4; ++p) {
      const __m512i qx = join(load256(x[b + 2 * p].qs), load256(x[b + 2 * p + 1].qs));
      neg[p] = _mm512_movepi8_mask(qx);
      ax[p] = _mm512_abs_epi8(qx);
    }
    for (int t = 0; t < NT; ++t) {
      const __m512 dd = _mm512_castps256_ps512(_mm256_mul_ps(dx, _mm256_loadu_ps(yd[t] + b)));
      const int8_t* q = yq[t] + b * qk8_0;
      for (int p = 0; p < 4; ++p) {
        const __m512i qy = load512(q + 64 * p);
        const __m512i prod = _mm512_dpbusd_epi32(zero, ax[p], _mm512_mask_sub_epi8(qy, neg[p], zero, qy));
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(prod), _mm512_permutexvar_ps(pidx[p], dd), acc[t]);
      }
    }
  }
  for (; b + 2 <= nb; b += 2) {
    const __m512i qx = join(load256(x[b].qs), load256(x[b + 1].qs));
    const __mmask64 neg = _mm512_movepi8_mask(qx);
    const __m512i ax = _mm512_abs_epi8(qx);
    const float d0 = h2f(x[b].d), d1 = h2f(x[b + 1].d);
    for (int t = 0; t < NT; ++t) {
      const __m512i qy = load512(yq[t] + b * qk8_0);
      const __m512i prod = _mm512_dpbusd_epi32(zero, ax, _mm512_mask_sub_epi8(qy, neg, zero, qy));
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(prod), halves(d0 * yd[t][b], d1 * yd[t][b + 1]), acc[t]);
    }
  }
  for (int t = 0; t < NT; ++t) {
    float s = _mm512_reduce_add_ps(acc[t]);
    if (b < nb) {  // odd block count: one 256-bit step
      const __m256i qx = load256(x[b].qs);
      const __m256i prod = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_abs_epi8(qx),
                                               _mm256_sign_epi8(load256(yq[t] + b * qk8_0), qx));
      s += simd::hsum(_mm256_cvtepi32_ps(prod)) * (h2f(x[b].d) * yd[t][b]);
    }
    out[t] = s;
  }
}

// Q4_0 x Q8_0: unsigned nibbles times activations, minus 8 * sum_b d_x * s_b.
template <int NT>
void dot_q4_0(int64_t n, const void* w, const uint8_t* acts, size_t stride, float* out) {
  const auto* x = static_cast<const block_q4_0*>(w);
  const int64_t nb = n / qk4_0;
  const float* yd[NT];
  const float* ys[NT];
  const int8_t* yq[NT];
  __m512 acc[NT];
  __m256 off[NT];
  for (int t = 0; t < NT; ++t) {
    yd[t] = act_q8_0_d(acts + t * stride);
    ys[t] = act_q8_0_s(acts + t * stride, nb);
    yq[t] = act_q8_0_q(acts + t * stride, nb);
    acc[t] = _mm512_setzero_ps();
    off[t] = _mm256_setzero_ps();
  }
  const __m512i zero = _mm512_setzero_si512();
  const __m512i pidx[4] = {pair_index(0), pair_index(1), pair_index(2), pair_index(3)};
  int64_t b = 0;
  for (; b + 8 <= nb; b += 8) {
    if (NT > 1 || prefetch_one_token) simd::prefetch_ahead<8 * sizeof(block_q4_0)>(x + b);
    __m256 dx;
    __m512i q[4];
    unpack_q4_0_octet(x + b, &dx, q);
    for (int t = 0; t < NT; ++t) {
      const __m512 dd = _mm512_castps256_ps512(_mm256_mul_ps(dx, _mm256_loadu_ps(yd[t] + b)));
      off[t] = _mm256_fmadd_ps(dx, _mm256_loadu_ps(ys[t] + b), off[t]);
      const int8_t* qy = yq[t] + b * qk4_0;
      for (int p = 0; p < 4; ++p) {
        const __m512i prod = _mm512_dpbusd_epi32(zero, q[p], load512(qy + 64 * p));
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(prod), _mm512_permutexvar_ps(pidx[p], dd), acc[t]);
      }
    }
  }
  float tail_off[NT] = {};
  for (; b + 2 <= nb; b += 2) {
    const __m512i q = unpack_q4_0_pair(x[b], x[b + 1]);
    const float d0 = h2f(x[b].d), d1 = h2f(x[b + 1].d);
    for (int t = 0; t < NT; ++t) {
      const __m512i prod = _mm512_dpbusd_epi32(zero, q, load512(yq[t] + b * qk4_0));
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(prod), halves(d0 * yd[t][b], d1 * yd[t][b + 1]), acc[t]);
      tail_off[t] += d0 * ys[t][b] + d1 * ys[t][b + 1];
    }
  }
  for (int t = 0; t < NT; ++t) {
    float s = _mm512_reduce_add_ps(acc[t]) - 8.0f * (simd::hsum(off[t]) + tail_off[t]);
    if (b < nb) {
      const int8_t* yb = yq[t] + b * qk4_0;
      int sum = 0;
      for (int j = 0; j < qk4_0 / 2; ++j)
        sum += ((x[b].qs[j] & 0xF) - 8) * yb[j] + ((x[b].qs[j] >> 4) - 8) * yb[j + 16];
      s += sum * (h2f(x[b].d) * yd[t][b]);
    }
    out[t] = s;
  }
}

// Q4_1/Q5_0/Q5_1 blocks a and b as [a 0..31 | b 0..31] unsigned bytes; the
// two 32-bit qh words are directly the byte mask that adds the 5th bit (16).
template <class B>
inline __m512i unpack_q32_pair(const B& a, const B& b) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i raw = _mm256_set_m128i(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs)),
                                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(a.qs)));
  const __m256i lo = _mm256_and_si256(raw, m4), hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
  const __m512i q4 = join(lo, hi);
  __m512i q = _mm512_shuffle_i64x2(q4, q4, _MM_SHUFFLE(3, 1, 2, 0));
  if constexpr (!std::is_same_v<B, block_q4_1>) {
    const __mmask64 h = static_cast<__mmask64>(load_qh(a.qh)) | static_cast<__mmask64>(load_qh(b.qh)) << 32;
    q = _mm512_mask_add_epi8(q, h, q, _mm512_set1_epi8(16));
  }
  return q;
}
template <class B>
inline __m256i unpack_q32_one(const B& a) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a.qs));
  __m256i q = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(raw, 4), raw), _mm256_set1_epi8(0x0F));
  if constexpr (!std::is_same_v<B, block_q4_1>)
    q = _mm256_mask_add_epi8(q, static_cast<__mmask32>(load_qh(a.qh)), q, _mm256_set1_epi8(16));
  return q;
}
// The offset coefficient of a block: -16 * d (Q5_0) or the min m (Q4_1/Q5_1).
template <class B>
inline float offset_of(const B& blk) {
  if constexpr (std::is_same_v<B, block_q5_0>) return -16.0f * h2f(blk.d);
  else return h2f(blk.m);
}

// Four blocks starting at block b, as registers [0 | 1] and [2 | 3] of
// unsigned quants, with their scales dx and offset coefficients cx.
template <int NT>
inline void add_quad(__m512i q0, __m512i q1, __m128 dx, __m128 cx, int64_t b, const float* const* yd,
                     const float* const* ys, const int8_t* const* yq, __m512* acc, float* off) {
  const __m512i zero = _mm512_setzero_si512(), p0 = pair_index(0), p1 = pair_index(1);
  for (int t = 0; t < NT; ++t) {
    const __m512 dd = _mm512_castps128_ps512(_mm_mul_ps(dx, _mm_loadu_ps(yd[t] + b)));
    const int8_t* qy = yq[t] + b * 32;
    const __m512i d0 = _mm512_dpbusd_epi32(zero, q0, load512(qy)), d1 = _mm512_dpbusd_epi32(zero, q1, load512(qy + 64));
    acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d0), _mm512_permutexvar_ps(p0, dd), acc[t]);
    acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d1), _mm512_permutexvar_ps(p1, dd), acc[t]);
    off[t] += simd::hsum(_mm256_zextps128_ps256(_mm_mul_ps(cx, _mm_loadu_ps(ys[t] + b))));
  }
}

// Blocks [b0, nb) of a Q4_1/Q5_0/Q5_1 row (x points at block b0), the tail
// after the eight-block steps: four with vector scales (the 4 of 896-column
// rows), then two at a time, then an odd one in 256 bits;
// the scaled dots go to acc, the offsets and the odd block to off.
template <int NT, class B>
inline void add_q32u_tail(const B* x, int64_t b0, int64_t nb, const float* const* yd, const float* const* ys,
                          const int8_t* const* yq, __m512* acc, float* off) {
  const __m512i zero = _mm512_setzero_si512();
  int64_t b = b0;
  if (b + 4 <= nb) {  // four blocks: scales and offsets as one 128-bit vector each
    const __m128 dx = _mm_cvtph_ps(_mm_setr_epi16(static_cast<short>(x[0].d), static_cast<short>(x[1].d),
                                                  static_cast<short>(x[2].d), static_cast<short>(x[3].d), 0, 0, 0, 0));
    __m128 cx;
    if constexpr (std::is_same_v<B, block_q5_0>) cx = _mm_mul_ps(dx, _mm_set1_ps(-16.0f));
    else cx = _mm_cvtph_ps(_mm_setr_epi16(static_cast<short>(x[0].m), static_cast<short>(x[1].m),
                                          static_cast<short>(x[2].m), static_cast<short>(x[3].m), 0, 0, 0, 0));
    add_quad<NT>(unpack_q32_pair(x[0], x[1]), unpack_q32_pair(x[2], x[3]), dx, cx, b, yd, ys, yq, acc, off);
    b += 4, x += 4;
  }
  for (; b + 2 <= nb; b += 2, x += 2) {
    const __m512i q = unpack_q32_pair(x[0], x[1]);
    const float d0 = h2f(x[0].d), d1 = h2f(x[1].d);
    const float c0 = offset_of(x[0]), c1 = offset_of(x[1]);
    for (int t = 0; t < NT; ++t) {
      const __m512i prod = _mm512_dpbusd_epi32(zero, q, load512(yq[t] + b * 32));
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(prod), halves(d0 * yd[t][b], d1 * yd[t][b + 1]), acc[t]);
      off[t] += c0 * ys[t][b] + c1 * ys[t][b + 1];
    }
  }
  if (b < nb)  // odd block count: one 256-bit step
    for (int t = 0; t < NT; ++t) {
      const __m256i prod = _mm256_dpbusd_epi32(_mm256_setzero_si256(), unpack_q32_one(x[0]), load256(yq[t] + b * 32));
      off[t] += simd::hsum(_mm256_cvtepi32_ps(prod)) * (h2f(x[0].d) * yd[t][b]) + offset_of(x[0]) * ys[t][b];
    }
}

// Q4_1/Q5_0/Q5_1 x Q8_0: two blocks per register, eight per step (as Q4_0),
// unsigned quants straight into vpdpbusd, offsets through the activation
// block sums.
template <int NT, class B>
void dot_q32u(int64_t n, const void* w, const uint8_t* acts, size_t stride, float* out) {
  const auto* x = static_cast<const B*>(w);
  const int64_t nb = n / 32;
  const float* yd[NT];
  const float* ys[NT];
  const int8_t* yq[NT];
  __m512 acc[NT];
  float off[NT];
  for (int t = 0; t < NT; ++t) {
    yd[t] = act_q8_0_d(acts + t * stride);
    ys[t] = act_q8_0_s(acts + t * stride, nb);
    yq[t] = act_q8_0_q(acts + t * stride, nb);
    acc[t] = _mm512_setzero_ps();
    off[t] = 0.0f;
  }
  const __m512i zero = _mm512_setzero_si512();
  const __m512i pidx[4] = {pair_index(0), pair_index(1), pair_index(2), pair_index(3)};
  __m256 offv[NT];
  for (int t = 0; t < NT; ++t) offv[t] = _mm256_setzero_ps();
  int64_t b = 0;
  for (; b + 8 <= nb; b += 8) {  // eight blocks: scales and offsets as one vector each
    if (NT > 1 || prefetch_one_token) simd::prefetch_ahead<8 * sizeof(B)>(x + b);
    const __m256 dx = scales8(x + b);
    __m256 cx;
    if constexpr (std::is_same_v<B, block_q5_0>) cx = _mm256_mul_ps(dx, _mm256_set1_ps(-16.0f));
    else cx = mins8(x + b);
    __m512i q[4];
    for (int p = 0; p < 4; ++p) q[p] = unpack_q32_pair(x[b + 2 * p], x[b + 2 * p + 1]);
    for (int t = 0; t < NT; ++t) {
      const __m512 dd = _mm512_castps256_ps512(_mm256_mul_ps(dx, _mm256_loadu_ps(yd[t] + b)));
      offv[t] = _mm256_fmadd_ps(cx, _mm256_loadu_ps(ys[t] + b), offv[t]);
      const int8_t* qy = yq[t] + b * 32;
      for (int p = 0; p < 4; ++p) {
        const __m512i prod = _mm512_dpbusd_epi32(zero, q[p], load512(qy + 64 * p));
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(prod), _mm512_permutexvar_ps(pidx[p], dd), acc[t]);
      }
    }
  }
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_add_ps(acc[t], _mm512_zextps256_ps512(offv[t]));
  add_q32u_tail<NT>(x + b, b, nb, yd, ys, yq, acc, off);
  for (int t = 0; t < NT; ++t) out[t] = _mm512_reduce_add_ps(acc[t]) + off[t];
}
template <int NT>
void dot_q4_1_t(int64_t n, const void* w, const uint8_t* a, size_t s, float* o) { dot_q32u<NT, block_q4_1>(n, w, a, s, o); }
template <int NT>
void dot_q5_0_t(int64_t n, const void* w, const uint8_t* a, size_t s, float* o) { dot_q32u<NT, block_q5_0>(n, w, a, s, o); }
template <int NT>
void dot_q5_1_t(int64_t n, const void* w, const uint8_t* a, size_t s, float* o) { dot_q32u<NT, block_q5_1>(n, w, a, s, o); }

// Q5_0 in the eight-block groups of repack_q5_0.h. A 64-byte load holds the
// nibbles of blocks [4h | 4h+1] (low) and [4h+2 | 4h+3] (high), already in
// the activations' order, and a byte test of the broadcast qh word against
// [bit k | bit k+1] is the mask that adds those blocks' fifth bits. The eight
// scales are one conversion, the offsets -16 d_x s_b one FMA per group; a
// half group's qh words are its masks; the last blocks are plain.
template <int NT>
void dot_q5_0x8(int64_t n, const void* w, const uint8_t* acts, size_t stride, float* out) {
  const auto* grp = static_cast<const block_q5_0x8*>(w);
  const int64_t nb = n / 32, ng = nb / k_q5_0x8_blocks;
  const float* yd[NT];
  const float* ys[NT];
  const int8_t* yq[NT];
  __m512 acc[NT];
  __m256 offv[NT];
  for (int t = 0; t < NT; ++t) {
    yd[t] = act_q8_0_d(acts + t * stride);
    ys[t] = act_q8_0_s(acts + t * stride, nb);
    yq[t] = act_q8_0_q(acts + t * stride, nb);
    acc[t] = _mm512_setzero_ps();
    offv[t] = _mm256_setzero_ps();
  }
  const __m512i zero = _mm512_setzero_si512(), m4 = _mm512_set1_epi8(0x0F), sixteen = _mm512_set1_epi8(16);
  const __m512i pidx[4] = {pair_index(0), pair_index(1), pair_index(2), pair_index(3)};
  const __m512i bit[4] = {bit_pair(0), bit_pair(2), bit_pair(4), bit_pair(6)};
  for (int64_t gi = 0; gi < ng; ++gi) {
    const block_q5_0x8& g = grp[gi];
    simd::prefetch_ahead<sizeof(block_q5_0x8)>(&g);  // against one token too: see the top of the file
    const int64_t b = gi * k_q5_0x8_blocks;
    const __m256 dx = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g.d)));
    const __m512i qh = _mm512_broadcast_i64x4(load256(g.qh));
    __m512i q[4];  // q[p]: blocks [2p | 2p+1], 0..31
    for (int h = 0; h < 2; ++h) {
      const __m512i z = load512(g.qs[2 * h]);  // low nibbles: blocks [4h | 4h+1], high: [4h+2 | 4h+3]
      const __m512i a = _mm512_and_si512(z, m4), c = _mm512_and_si512(_mm512_srli_epi16(z, 4), m4);
      q[2 * h] = _mm512_mask_add_epi8(a, _mm512_test_epi8_mask(qh, bit[2 * h]), a, sixteen);
      q[2 * h + 1] = _mm512_mask_add_epi8(c, _mm512_test_epi8_mask(qh, bit[2 * h + 1]), c, sixteen);
    }
    for (int t = 0; t < NT; ++t) {
      const __m512 dd = _mm512_castps256_ps512(_mm256_mul_ps(dx, _mm256_loadu_ps(yd[t] + b)));
      offv[t] = _mm256_fmadd_ps(dx, _mm256_loadu_ps(ys[t] + b), offv[t]);
      const int8_t* qy = yq[t] + b * 32;
      for (int p = 0; p < 4; ++p) {
        const __m512i prod = _mm512_dpbusd_epi32(zero, q[p], load512(qy + 64 * p));
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(prod), _mm512_permutexvar_ps(pidx[p], dd), acc[t]);
      }
    }
  }
  float off[NT] = {};
  for (int t = 0; t < NT; ++t)  // the offsets join the dot products' final sum
    acc[t] = _mm512_add_ps(acc[t], _mm512_zextps256_ps512(_mm256_mul_ps(offv[t], _mm256_set1_ps(-16.0f))));
  const q5_0x8_row_layout lay(nb);
  if (lay.half) {  // the half group: its qh words are the byte masks as they stand
    const block_q5_0x4& hg = *lay.half_group(w);
    const __m128 dx = _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(hg.d)));
    uint64_t h01, h23;
    std::memcpy(&h01, hg.qh, 8);
    std::memcpy(&h23, hg.qh + 8, 8);
    const __m512i z = load512(hg.qs[0]);  // low nibbles: blocks [0 | 1], high: [2 | 3]
    const __m512i a = _mm512_and_si512(z, m4), c = _mm512_and_si512(_mm512_srli_epi16(z, 4), m4);
    const __m512i q01 = _mm512_mask_add_epi8(a, _cvtu64_mask64(h01), a, sixteen);
    const __m512i q23 = _mm512_mask_add_epi8(c, _cvtu64_mask64(h23), c, sixteen);
    add_quad<NT>(q01, q23, dx, _mm_mul_ps(dx, _mm_set1_ps(-16.0f)), ng * k_q5_0x8_blocks, yd, ys, yq, acc, off);
  }
  add_q32u_tail<NT>(lay.plain_blocks(w), lay.plain, nb, yd, ys, yq, acc, off);
  for (int t = 0; t < NT; ++t) out[t] = _mm512_reduce_add_ps(acc[t]) + off[t];
}

// Sub-block scales as int32 lanes -> the same value in both 16-bit halves of
// each lane, the multiplier vpdpwssd wants: maddubs turns quants times
// activations into int16 pairs (at most 63 * 128 * 2 in magnitude, no
// saturation) and vpdpwssd scales and accumulates them in one instruction,
// where vpdpbusd left a vpmulld and an add per register.
inline __m512i pair16(__m512i s32) {
  return _mm512_or_si512(_mm512_and_si512(s32, _mm512_set1_epi32(0xFFFF)), _mm512_slli_epi32(s32, 16));
}

// Q4_K/Q5_K scales and mins, unpacked to bytes [sc0..sc7, m0..m7] in
// registers (no round trip through memory). With u0..u2 the three 32-bit
// words of the packed scales: sc0-3 = u0 & 0x3f.., sc4-7 = (u2 & 0x0f..) |
// ((u0 >> 6) & 3..) << 4, m0-3 = u1 & 0x3f.., m4-7 = ((u2 >> 4) & 0x0f..) |
// ((u1 >> 6) & 3..) << 4. `scales` is followed by the block's quants, so the
// 16-byte load stays inside the block.
inline __m128i unpack_scales_k4(const uint8_t* scales) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(scales));
  const __m128i a = _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 1, 2, 0));  // [u0, u2, u1, u2]
  const __m128i low = _mm_and_si128(_mm_srlv_epi32(a, _mm_setr_epi32(0, 0, 0, 4)),
                                    _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
  const __m128i b = _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 1, 0, 0));  // [u0, u0, u1, u1]
  const __m128i high = _mm_and_si128(_mm_slli_epi32(_mm_and_si128(_mm_srli_epi32(b, 6), _mm_set1_epi32(0x03030303)), 4),
                                     _mm_setr_epi32(0, -1, 0, -1));
  return _mm_or_si128(low, high);
}

// Q4_K/Q5_K x Q8_K. Each 64 bytes of nibbles are rearranged to
// [sub-block 4h | 4h+1] and [4h+2 | 4h+3] so the activations load contiguously.
template <int NT, bool FIVE>
void dot_qk45(int64_t n, const void* w, const uint8_t* acts, size_t stride, float* out) {
  const int64_t nb = n / qk_k;
  const block_q8_k* y[NT];
  __m512 acc[NT];
  __m256 accm[NT];
  for (int t = 0; t < NT; ++t) {
    y[t] = reinterpret_cast<const block_q8_k*>(acts + t * stride);
    acc[t] = _mm512_setzero_ps();
    accm[t] = _mm256_setzero_ps();
  }
  const __m512i m4 = _mm512_set1_epi8(0x0F), sixteen = _mm512_set1_epi8(16), zero = _mm512_setzero_si512();
  const __m512i first = _mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11), second = _mm512_setr_epi64(4, 5, 6, 7, 12, 13, 14, 15);
  const __m512i sidx[4] = {pair_index(0), pair_index(1), pair_index(2), pair_index(3)};  // sub-blocks (2k, 2k+1)
  const __m128i dup_mins = _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* scales;
    const uint8_t* qs;
    const uint8_t* qh = nullptr;
    float d, dmin;
    if constexpr (FIVE) {
      const auto& blk = static_cast<const block_q5_k*>(w)[b];
      if (NT > 1 || prefetch_one_token) simd::prefetch_ahead<sizeof(block_q5_k)>(&blk);
      scales = blk.scales, qs = blk.qs, qh = blk.qh, d = h2f(blk.d), dmin = h2f(blk.dmin);
    } else {
      const auto& blk = static_cast<const block_q4_k*>(w)[b];
      if (NT > 1 || prefetch_one_token) simd::prefetch_ahead<sizeof(block_q4_k)>(&blk);
      scales = blk.scales, qs = blk.qs, d = h2f(blk.d), dmin = h2f(blk.dmin);
    }
    const __m128i scm = unpack_scales_k4(scales);
    const __m512i sc32 = pair16(_mm512_cvtepu8_epi32(scm));
    const __m256i mp = _mm256_cvtepu8_epi16(_mm_shuffle_epi8(scm, dup_mins));
    const __m512i qhz = FIVE ? _mm512_broadcast_i64x4(load256(qh)) : zero;
    __m512i sumi[NT];
    for (int t = 0; t < NT; ++t) sumi[t] = zero;
    for (int h = 0; h < 2; ++h) {
      const __m512i z = load512(qs + 64 * h);
      const __m512i lo = _mm512_and_si512(z, m4);                         // sub-blocks 4h | 4h+2
      const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(z, 4), m4);  // sub-blocks 4h+1 | 4h+3
      __m512i qa = _mm512_permutex2var_epi64(lo, first, hi);             // 4h | 4h+1
      __m512i qb = _mm512_permutex2var_epi64(lo, second, hi);            // 4h+2 | 4h+3
      if constexpr (FIVE) {
        qa = _mm512_mask_add_epi8(qa, _mm512_test_epi8_mask(qhz, bit_pair(4 * h)), qa, sixteen);
        qb = _mm512_mask_add_epi8(qb, _mm512_test_epi8_mask(qhz, bit_pair(4 * h + 2)), qb, sixteen);
      }
      const __m512i sa = _mm512_permutexvar_epi32(sidx[2 * h], sc32);
      const __m512i sb = _mm512_permutexvar_epi32(sidx[2 * h + 1], sc32);
      for (int t = 0; t < NT; ++t) {
        const int8_t* yq = y[t][b].qs + 128 * h;
        sumi[t] = _mm512_dpwssd_epi32(sumi[t], _mm512_maddubs_epi16(qa, load512(yq)), sa);
        sumi[t] = _mm512_dpwssd_epi32(sumi[t], _mm512_maddubs_epi16(qb, load512(yq + 64)), sb);
      }
    }
    for (int t = 0; t < NT; ++t) {
      const float yd = y[t][b].d;
      acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(d * yd), _mm512_cvtepi32_ps(sumi[t]), acc[t]);
      const __m256i mt = _mm256_madd_epi16(mp, load256(y[t][b].bsums));
      accm[t] = _mm256_fmadd_ps(_mm256_set1_ps(dmin * yd), _mm256_cvtepi32_ps(mt), accm[t]);
    }
  }
  for (int t = 0; t < NT; ++t) out[t] = _mm512_reduce_add_ps(acc[t]) - simd::hsum(accm[t]);
}
template <int NT>
void dot_q4_k_t(int64_t n, const void* w, const uint8_t* a, size_t s, float* o) { dot_qk45<NT, false>(n, w, a, s, o); }
template <int NT>
void dot_q5_k_t(int64_t n, const void* w, const uint8_t* a, size_t s, float* o) { dot_qk45<NT, true>(n, w, a, s, o); }

// Q8_0, sixteen rows interleaved (repack_q8_0.h): lane r is row r, every
// activation word is broadcast to all sixteen, and the stored quants (plus
// 128) are vpdpbusd's unsigned side as they are. A block's sum starts at
// -128 times the activation block's quant sum, which leaves exactly the
// signed dot product; two accumulators halve the chain of eight vpdpbusd.
template <int NT>
void dot_q8_0x16(int64_t n, const void* w, const uint8_t* acts, size_t stride, float* out, int64_t os) {
  const auto* x = static_cast<const block_q8_0x16*>(w);
  const int64_t nb = n / qk8_0;
  __m512 acc[NT];
  const act_q8_0_rows<NT> y(acts, stride, nb);
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const block_q8_0x16& g = x[b];
    if (NT > 1 || prefetch_one_token) simd::prefetch_ahead<sizeof(block_q8_0x16)>(&g);
    __m512i q[8];
    for (int s = 0; s < 8; ++s) q[s] = load512(g.qs[s]);
    const __m512 d = _mm512_cvtph_ps(load256(g.d));
    for (int t = 0; t < NT; ++t) {
      const int8_t* yb = y.q[t] + b * qk8_0;
      __m512i s0 = _mm512_set1_epi32(-128 * y.sum[t][b]), s1 = _mm512_setzero_si512();
      for (int s = 0; s < 8; s += 2) {
        int32_t a0, a1;
        std::memcpy(&a0, yb + 4 * s, 4);
        std::memcpy(&a1, yb + 4 * s + 4, 4);
        s0 = _mm512_dpbusd_epi32(s0, q[s], _mm512_set1_epi32(a0));
        s1 = _mm512_dpbusd_epi32(s1, q[s + 1], _mm512_set1_epi32(a1));
      }
      const __m512i sum = _mm512_add_epi32(s0, s1);
      acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(d, _mm512_set1_ps(y.d[t][b])), _mm512_cvtepi32_ps(sum), acc[t]);
    }
  }
  for (int t = 0; t < NT; ++t) _mm512_storeu_ps(out + t * os, acc[t]);
}

// Q5_0, sixteen rows interleaved (repack_q5_0x16.h): lane r is row r. A
// 64-byte load holds four bytes of each row's nibbles; the low and the high
// nibbles are two registers of unsigned quants. Their fifth bits are bits k
// and 4 + k of the block's 64 qh bytes (lane for lane), each tested into a
// 64-bit mask that adds 16 to the bytes it selects. The low nibbles
// meet activation word k, the high ones word 4 + k. A block's sum starts at
// -16 times the activation block's quant sum, which leaves exactly the
// signed dot product.
template <int NT>
void dot_q5_0x16(int64_t n, const void* w, const uint8_t* acts, size_t stride, float* out, int64_t os) {
  const auto* x = static_cast<const block_q5_0x16*>(w);
  const int64_t nb = n / qk5_0;
  __m512 acc[NT];
  const act_q8_0_rows<NT> y(acts, stride, nb);
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
  const __m512i m4 = _mm512_set1_epi8(0x0F), b16 = _mm512_set1_epi8(0x10);
  for (int64_t b = 0; b < nb; ++b) {
    const block_q5_0x16& g = x[b];
    if (NT > 1 || prefetch_one_token) simd::prefetch_ahead<sizeof(block_q5_0x16)>(&g);
    const __m512i qh = load512(g.qh);
    __m512i lo[4], hi[4];
    for (int k = 0; k < 4; ++k) {
      const __m512i z = load512(g.qs[k]);
      lo[k] = _mm512_and_si512(z, m4);
      hi[k] = _mm512_and_si512(_mm512_srli_epi16(z, 4), m4);
      lo[k] = _mm512_mask_add_epi8(lo[k], _mm512_test_epi8_mask(qh, _mm512_set1_epi8(1 << k)), lo[k], b16);
      hi[k] = _mm512_mask_add_epi8(hi[k], _mm512_test_epi8_mask(qh, _mm512_set1_epi8(16 << k)), hi[k], b16);
    }
    const __m512 d = _mm512_cvtph_ps(load256(g.d));
    for (int t = 0; t < NT; ++t) {
      const int8_t* yb = y.q[t] + b * qk5_0;
      __m512i s0 = _mm512_set1_epi32(-16 * y.sum[t][b]), s1 = _mm512_setzero_si512();
      for (int k = 0; k < 4; ++k) {
        int32_t a0, a1;
        std::memcpy(&a0, yb + 4 * k, 4);
        std::memcpy(&a1, yb + 16 + 4 * k, 4);
        s0 = _mm512_dpbusd_epi32(s0, lo[k], _mm512_set1_epi32(a0));
        s1 = _mm512_dpbusd_epi32(s1, hi[k], _mm512_set1_epi32(a1));
      }
      const __m512i sum = _mm512_add_epi32(s0, s1);
      acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(d, _mm512_set1_ps(y.d[t][b])), _mm512_cvtepi32_ps(sum), acc[t]);
    }
  }
  for (int t = 0; t < NT; ++t) _mm512_storeu_ps(out + t * os, acc[t]);
}

// Q4_K, sixteen rows interleaved (repack_q4_k.h): lane r is row r
// throughout, and every activation word is broadcast to all sixteen. Per
// sub-block, vpdpbusd sums the low-nibble and the high-nibble elements (16
// products each, at most 16 * 15 * 128 in magnitude) in accumulators of
// their own; each sum fits 16 bits, so vpdpwssd against the scale byte
// zero-extended to the lane (low word sc, high word 0) scales and adds it.
// Against one token, a block's mins are summed before its quants are read:
// they lie at its front, so that is read before the quants that follow it,
// and that sum is off the sub-blocks' chain. With the next activation block
// asked for ahead too (simd::prefetch_lines), GEMV from memory on one Zen 4
// thread went from 23.6-26.8 to 25.3-29.2 GB/s at 8960x1536 and from
// 20.0-24.4 to 22.3-28.9 at 1536x8960 (docs/benchmarks.md). Against several
// tokens the mins come last as before (with both changes there, 64-token
// GEMM was about 10 % slower).
template <int NT>
void dot_q4_kx16(int64_t n, const void* w, const uint8_t* acts, size_t stride, float* out, int64_t os) {
  const auto* x = static_cast<const block_q4_kx16*>(w);
  const int64_t nb = n / qk_k;
  const block_q8_k* y[NT];
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) {
    y[t] = reinterpret_cast<const block_q8_k*>(acts + t * stride);
    acc[t] = _mm512_setzero_ps();
  }
  const __m512i m4 = _mm512_set1_epi8(0x0F), zero = _mm512_setzero_si512();
  for (int64_t b = 0; b < nb; ++b) {
    const block_q4_kx16& g = x[b];
    __m512i sumi[NT], summ[NT];
    for (int t = 0; t < NT; ++t) sumi[t] = summ[t] = zero;
    const auto mins = [&] {
      for (int p = 0; p < 4; ++p) {
        const __m512i mp = _mm512_cvtepu8_epi16(load256(g.m[p]));  // lane r: mins 2p, 2p+1 of row r
        for (int t = 0; t < NT; ++t)
          summ[t] = _mm512_dpwssd_epi32(summ[t], mp, _mm512_set1_epi32(q8_k_sum_pair(y[t][b].bsums, p)));
      }
    };
    if constexpr (NT == 1) {
      if (b + 1 < nb) simd::prefetch_lines<sizeof(block_q8_k)>(&y[0][b + 1]);
      mins();
    }
    for (int j = 0; j < 8; ++j) {
      __m512i lo[NT], hi[NT];
      for (int t = 0; t < NT; ++t) lo[t] = hi[t] = zero;
      for (int s = 0; s < 4; ++s) {
        if (NT > 1 || prefetch_one_token) _mm_prefetch(reinterpret_cast<const char*>(g.qs[j][s]) + simd::k_prefetch_bytes, _MM_HINT_T0);
        const __m512i z = load512(g.qs[j][s]);
        const __m512i ql = _mm512_and_si512(z, m4), qh = _mm512_and_si512(_mm512_srli_epi16(z, 4), m4);
        for (int t = 0; t < NT; ++t) {
          const int8_t* yq = y[t][b].qs + 32 * j + 4 * s;
          int32_t a0, a1;
          std::memcpy(&a0, yq, 4);
          std::memcpy(&a1, yq + 16, 4);
          lo[t] = _mm512_dpbusd_epi32(lo[t], ql, _mm512_set1_epi32(a0));
          hi[t] = _mm512_dpbusd_epi32(hi[t], qh, _mm512_set1_epi32(a1));
        }
      }
      const __m512i sc = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g.sc[j])));
      for (int t = 0; t < NT; ++t) sumi[t] = _mm512_dpwssd_epi32(_mm512_dpwssd_epi32(sumi[t], lo[t], sc), hi[t], sc);
    }
    if constexpr (NT > 1) mins();
    const __m512 d = _mm512_cvtph_ps(load256(g.d)), dmin = _mm512_cvtph_ps(load256(g.dmin));
    for (int t = 0; t < NT; ++t) {
      const __m512 yd = _mm512_set1_ps(y[t][b].d);
      acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(d, yd), _mm512_cvtepi32_ps(sumi[t]), acc[t]);
      acc[t] = _mm512_fnmadd_ps(_mm512_mul_ps(dmin, yd), _mm512_cvtepi32_ps(summ[t]), acc[t]);
    }
  }
  for (int t = 0; t < NT; ++t) _mm512_storeu_ps(out + t * os, acc[t]);
}

// Q6_K, sixteen rows interleaved (repack_q6_k.h): lane r is row r, every
// activation word is broadcast to all sixteen. The stored values are the
// unsigned 0..63; per sub-block pair j, vpdpbusd sums sub-block 2j's products
// in lo and 2j+1's in hi (16 products, up to 16 * 63 * 128: beyond int16, so
// the scales multiply the int32 lanes), and the -32 offset comes back as 32
// times the scale-weighted 16-value activation sums, one vpdpwssd a pair.
// Bits 2s..2s+1 of a high-bits byte go to bits 4..5 of the value. Against
// one token the next activation block is asked for ahead, as for Q4_K
// (1536x8960 GEMV on one Zen 4 thread from 24.4-27.2 to 26.6-29.9 GB/s).
inline __m512i q6_high_bits(__m512i v, int s) {
  switch (s) {
    case 0: v = _mm512_slli_epi16(v, 4); break;
    case 1: v = _mm512_slli_epi16(v, 2); break;
    case 3: v = _mm512_srli_epi16(v, 2); break;
    default: break;
  }
  return _mm512_and_si512(v, _mm512_set1_epi8(0x30));
}

template <int NT>
void dot_q6_kx16(int64_t n, const void* w, const uint8_t* acts, size_t stride, float* out, int64_t os) {
  const auto* x = static_cast<const block_q6_kx16*>(w);
  const int64_t nb = n / qk_k;
  const block_q8_k* y[NT];
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) {
    y[t] = reinterpret_cast<const block_q8_k*>(acts + t * stride);
    acc[t] = _mm512_setzero_ps();
  }
  const __m512i m4 = _mm512_set1_epi8(0x0F), zero = _mm512_setzero_si512();
  constexpr int k_or_and = 0xEA;  // ternary logic: (a & b) | c
  for (int64_t b = 0; b < nb; ++b) {
    const block_q6_kx16& g = x[b];
    if (NT == 1 && b + 1 < nb) simd::prefetch_lines<sizeof(block_q8_k)>(&y[0][b + 1]);
    __m512i sumi[NT], bias[NT];
    for (int t = 0; t < NT; ++t) sumi[t] = bias[t] = zero;
    for (int j = 0; j < 8; ++j) {
      const __m512i hl = load512(g.q[j].qh[0]), hh = load512(g.q[j].qh[1]);
      __m512i lo[NT], hi[NT];
      for (int t = 0; t < NT; ++t) lo[t] = hi[t] = zero;
      for (int s = 0; s < 4; ++s) {
        if (NT > 1 || prefetch_one_token) _mm_prefetch(reinterpret_cast<const char*>(g.q[j].ql[s]) + simd::k_prefetch_bytes, _MM_HINT_T0);
        const __m512i z = load512(g.q[j].ql[s]);
        const __m512i ql = _mm512_ternarylogic_epi32(z, m4, q6_high_bits(hl, s), k_or_and);
        const __m512i qh = _mm512_ternarylogic_epi32(_mm512_srli_epi16(z, 4), m4, q6_high_bits(hh, s), k_or_and);
        for (int t = 0; t < NT; ++t) {
          const int8_t* yq = y[t][b].qs + 32 * j + 4 * s;
          int32_t a0, a1;
          std::memcpy(&a0, yq, 4);
          std::memcpy(&a1, yq + 16, 4);
          lo[t] = _mm512_dpbusd_epi32(lo[t], ql, _mm512_set1_epi32(a0));
          hi[t] = _mm512_dpbusd_epi32(hi[t], qh, _mm512_set1_epi32(a1));
        }
      }
      const __m512i sp = _mm512_cvtepi8_epi16(load256(g.sc[j]));  // lane r: scales 2j, 2j+1 of row r
      const __m512i slo = _mm512_srai_epi32(_mm512_slli_epi32(sp, 16), 16), shi = _mm512_srai_epi32(sp, 16);
      for (int t = 0; t < NT; ++t) {
        sumi[t] = _mm512_add_epi32(sumi[t], _mm512_add_epi32(_mm512_mullo_epi32(lo[t], slo), _mm512_mullo_epi32(hi[t], shi)));
        int32_t pair;  // the 16-value sums of sub-blocks 2j, 2j+1 as two int16
        std::memcpy(&pair, y[t][b].bsums + 2 * j, 4);
        bias[t] = _mm512_dpwssd_epi32(bias[t], sp, _mm512_set1_epi32(pair));
      }
    }
    const __m512 d = _mm512_cvtph_ps(load256(g.d));
    for (int t = 0; t < NT; ++t) {
      const __m512i s = _mm512_sub_epi32(sumi[t], _mm512_slli_epi32(bias[t], 5));
      acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(d, _mm512_set1_ps(y[t][b].d)), _mm512_cvtepi32_ps(s), acc[t]);
    }
  }
  for (int t = 0; t < NT; ++t) _mm512_storeu_ps(out + t * os, acc[t]);
}

template <int NT>
void dot_q6_k(int64_t n, const void* w, const uint8_t* acts, size_t stride, float* out) {
  const auto* x = static_cast<const block_q6_k*>(w);
  const int64_t nb = n / qk_k;
  const block_q8_k* y[NT];
  __m512 acc[NT];
  __m256 accb[NT];
  for (int t = 0; t < NT; ++t) {
    y[t] = reinterpret_cast<const block_q8_k*>(acts + t * stride);
    acc[t] = _mm512_setzero_ps();
    accb[t] = _mm256_setzero_ps();
  }
  const __m512i m4 = _mm512_set1_epi8(0x0F), m2 = _mm512_set1_epi8(3), zero = _mm512_setzero_si512();
  // Lane k of a dot product covers bytes 4k..4k+3, i.e. 16-value sub-block k / 4 of the 64 bytes.
  const __m512i idx[4] = {
      _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3),
      _mm512_setr_epi32(4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7),
      _mm512_setr_epi32(8, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 10, 11, 11, 11, 11),
      _mm512_setr_epi32(12, 12, 12, 12, 13, 13, 13, 13, 14, 14, 14, 14, 15, 15, 15, 15)};
  for (int64_t b = 0; b < nb; ++b) {
    if (NT > 1 || prefetch_one_token) simd::prefetch_ahead<sizeof(block_q6_k)>(x + b);
    const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x[b].scales));
    const __m512i sc32 = pair16(_mm512_cvtepi8_epi32(sc8));
    const __m256i sc16 = _mm256_cvtepi8_epi16(sc8);
    __m512i sumi[NT];
    for (int t = 0; t < NT; ++t) sumi[t] = zero;
    for (int c = 0; c < 2; ++c) {
      const __m512i ql = load512(x[b].ql + 64 * c);
      const __m256i qh = load256(x[b].qh + 32 * c);
      const __m512i qhA = join(qh, _mm256_srli_epi16(qh, 2));
      const __m512i qhB = join(_mm256_srli_epi16(qh, 4), _mm256_srli_epi16(qh, 6));
      const __m512i q12 = _mm512_or_si512(_mm512_and_si512(ql, m4), _mm512_slli_epi16(_mm512_and_si512(qhA, m2), 4));
      const __m512i q34 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4),
                                          _mm512_slli_epi16(_mm512_and_si512(qhB, m2), 4));
      const __m512i s12 = _mm512_permutexvar_epi32(idx[2 * c], sc32);
      const __m512i s34 = _mm512_permutexvar_epi32(idx[2 * c + 1], sc32);
      for (int t = 0; t < NT; ++t) {
        const int8_t* yq = y[t][b].qs + 128 * c;
        sumi[t] = _mm512_dpwssd_epi32(sumi[t], _mm512_maddubs_epi16(q12, load512(yq)), s12);
        sumi[t] = _mm512_dpwssd_epi32(sumi[t], _mm512_maddubs_epi16(q34, load512(yq + 64)), s34);
      }
    }
    const float d = h2f(x[b].d);
    for (int t = 0; t < NT; ++t) {
      const float dd = d * y[t][b].d;
      acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(dd), _mm512_cvtepi32_ps(sumi[t]), acc[t]);
      const __m256i bias = _mm256_madd_epi16(sc16, load256(y[t][b].bsums));
      accb[t] = _mm256_fmadd_ps(_mm256_set1_ps(32.0f * dd), _mm256_cvtepi32_ps(bias), accb[t]);
    }
  }
  for (int t = 0; t < NT; ++t) out[t] = _mm512_reduce_add_ps(acc[t]) - simd::hsum(accb[t]);
}

QF_ROW_DOT_TILES(row_q8_0, dot_q8_0)
QF_ROW_DOT_TILES(row_q4_0, dot_q4_0)
QF_ROW_DOT_TILES(row_q4_1, dot_q4_1_t)
QF_ROW_DOT_TILES(row_q5_0, dot_q5_0_t)
QF_ROW_DOT_TILES(row_q5_0x8, dot_q5_0x8)
QF_ROW_DOT_TILES(row_q5_1, dot_q5_1_t)
QF_ROW_DOT_TILES(row_q4_k, dot_q4_k_t)
QF_ROW_DOT_TILES(row_q5_k, dot_q5_k_t)
QF_ROW_DOT_TILES(row_q6_k, dot_q6_k)
QF_GROUP_DOT_TILES(group_q8_0x16, dot_q8_0x16)
QF_GROUP_DOT_TILES(group_q5_0x16, dot_q5_0x16)
QF_GROUP_DOT_TILES(group_q4_kx16, dot_q4_kx16)
QF_GROUP_DOT_TILES(group_q6_kx16, dot_q6_kx16)

}  // namespace

void fill_avx512_kernels(kernel_table& t, bool prefetch_decode) {
  prefetch_one_token = prefetch_decode;
  t.dot_q8_0 = row_q8_0;
  t.dot_q4_0 = row_q4_0;
  t.dot_q4_1 = row_q4_1;
  t.dot_q5_0 = row_q5_0;
  t.dot_q5_0x8 = row_q5_0x8;
  t.dot_q5_1 = row_q5_1;
  t.dot_q4_k = row_q4_k;
  t.dot_q5_k = row_q5_k;
  t.dot_q6_k = row_q6_k;
  t.dot_q8_0x16 = group_q8_0x16;
  t.dot_q5_0x16 = group_q5_0x16;
  t.dot_q4_kx16 = group_q4_kx16;
  t.dot_q6_kx16 = group_q6_kx16;
  fill_avx512_float_kernels(t);
}

}  // namespace qf::infer::cpu::detail
