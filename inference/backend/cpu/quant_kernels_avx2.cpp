// AVX2/FMA kernels for the quantized weight types.
//
// Integer products use the usual x86 idiom: maddubs (unsigned x signed bytes
// -> pairs of int16) then madd with a vector of ones or of sub-block scales
// (-> int32). Signed x signed (Q8_0) goes through sign(): |x| * (y with x's
// sign); the unsigned Q4_1/Q5_0/Q5_1 quants go straight into maddubs, their
// offsets folded in through the activation block sums. Each weight block is unpacked once and dotted with up to k_max_tile
// activation rows (the prefill tile); sub-block scale and min terms are
// accumulated as vectors so the only horizontal sums are at the end of a row.
// Every block asks for the weights 2 KiB ahead of it (simd_prefetch.h).
#include <immintrin.h>

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

using simd::hsum;
using simd::prefetch_ahead;

inline float h2f(fp16_t h) { return _cvtsh_ss(h); }
inline __m256i load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline __m256i pairs_i32(__m256i u8, __m256i s8) {  // sum of u8*s8 over groups of 4 -> 8 x int32
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u8, s8), _mm256_set1_epi16(1));
}

// Blocks [b0, b1) of a Q8_0 row (x points at block b0), one at a time, added to acc.
template <int NT>
inline void add_q8_0(const block_q8_0* x, int64_t b0, int64_t b1, const float* const* yd, const int8_t* const* yq,
                     __m256* acc) {
  for (int64_t b = b0; b < b1; ++b, ++x) {
    prefetch_ahead<sizeof(block_q8_0)>(x);
    const __m256i qx = load(x->qs);
    const __m256i ax = _mm256_sign_epi8(qx, qx);
    const float dx = h2f(x->d);
    for (int t = 0; t < NT; ++t) {
      const __m256i p = pairs_i32(ax, _mm256_sign_epi8(load(yq[t] + b * qk8_0), qx));
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(dx * yd[t][b]), _mm256_cvtepi32_ps(p), acc[t]);
    }
  }
}

// Q8_0 against several tokens (prefill), four blocks a step: their int32
// dot vectors are summed across lanes together (two hadd levels) into one
// vector whose lanes k and k + 4 hold the two halves of block k's sum, so
// the four scales take one conversion (d0..d3 twice), one multiply and one
// FMA per token, where one block at a time takes a conversion, a multiply,
// a broadcast and an FMA each. The halves meet in the final horizontal sum;
// the last nb % 4 blocks go one at a time. Against one token (decode) the
// row goes one block at a time: the four-block form does less work but
// streamed weights from memory 5-15 % slower (bench_matmul, 151936x896 and
// 4864x896 GEMV), for reasons not found.
template <int NT>
void dot_q8_0(int64_t n, const void* w, const uint8_t* acts, size_t stride, float* out) {
  const auto* x = static_cast<const block_q8_0*>(w);
  const int64_t nb = n / qk8_0;
  const float* yd[NT];
  const int8_t* yq[NT];
  __m256 acc[NT];
  for (int t = 0; t < NT; ++t) {
    yd[t] = act_q8_0_d(acts + t * stride);
    yq[t] = act_q8_0_q(acts + t * stride, nb);
    acc[t] = _mm256_setzero_ps();
  }
  int64_t b = 0;
  for (; NT > 1 && b + 4 <= nb; b += 4) {
    const block_q8_0* x4 = x + b;
    for (int k = 0; k < 4; ++k) prefetch_ahead<sizeof(block_q8_0)>(x4 + k);
    const __m256 dx = _mm256_cvtph_ps(_mm_setr_epi16(static_cast<short>(x4[0].d), static_cast<short>(x4[1].d),
                                                     static_cast<short>(x4[2].d), static_cast<short>(x4[3].d),
                                                     static_cast<short>(x4[0].d), static_cast<short>(x4[1].d),
                                                     static_cast<short>(x4[2].d), static_cast<short>(x4[3].d)));
    __m256i qx[4], ax[4];
    for (int k = 0; k < 4; ++k) {
      qx[k] = load(x4[k].qs);
      ax[k] = _mm256_sign_epi8(qx[k], qx[k]);
    }
    for (int t = 0; t < NT; ++t) {
      const int8_t* yb = yq[t] + b * qk8_0;
      __m256i p[4];
      for (int k = 0; k < 4; ++k) p[k] = pairs_i32(ax[k], _mm256_sign_epi8(load(yb + 32 * k), qx[k]));
      const __m256i s = _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3]));
      const __m256 dy = _mm256_broadcast_ps(reinterpret_cast<const __m128*>(yd[t] + b));
      acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(dx, dy), _mm256_cvtepi32_ps(s), acc[t]);
    }
  }
  add_q8_0<NT>(x + b, b, nb, yd, yq, acc);
  for (int t = 0; t < NT; ++t) out[t] = hsum(acc[t]);
}

template <int NT>
void dot_q4_0(int64_t n, const void* w, const uint8_t* acts, size_t stride, float* out) {
  const auto* x = static_cast<const block_q4_0*>(w);
  const int64_t nb = n / qk4_0;
  const float* yd[NT];
  const int8_t* yq[NT];
  __m256 acc[NT];
  for (int t = 0; t < NT; ++t) {
    yd[t] = act_q8_0_d(acts + t * stride);
    yq[t] = act_q8_0_q(acts + t * stride, nb);
    acc[t] = _mm256_setzero_ps();
  }
  const __m256i m4 = _mm256_set1_epi8(0x0F), off = _mm256_set1_epi8(8);
  for (int64_t b = 0; b < nb; ++b) {
    prefetch_ahead<sizeof(block_q4_0)>(x + b);
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x[b].qs));
    const __m256i qx = _mm256_sub_epi8(_mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(raw, 4), raw), m4), off);
    const __m256i ax = _mm256_sign_epi8(qx, qx);
    const float dx = h2f(x[b].d);
    for (int t = 0; t < NT; ++t) {
      const __m256i p = pairs_i32(ax, _mm256_sign_epi8(load(yq[t] + b * qk8_0), qx));
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(dx * yd[t][b]), _mm256_cvtepi32_ps(p), acc[t]);
    }
  }
  for (int t = 0; t < NT; ++t) out[t] = hsum(acc[t]);
}

// Bit j of a qh word as 16 or 0 in byte j: shuffle byte j/8 into byte j,
// test bit j%8.
inline __m256i fifth_bits_of(uint32_t qh) {
  const __m256i v = _mm256_set1_epi32(static_cast<int>(qh));
  const __m256i idx = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,  //
                                       2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
  const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(v, idx), bit), bit);
  return _mm256_and_si256(set, _mm256_set1_epi8(16));
}

// Q4_1/Q5_0/Q5_1: the 32 quants of a block as unsigned bytes (byte j =
// element j); for the 5-bit types the fifth bits' 16 is or-ed in.
template <class B>
inline __m256i unpack_q32(const B& blk) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.qs));
  __m256i q = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(raw, 4), raw), _mm256_set1_epi8(0x0F));
  if constexpr (!std::is_same_v<B, block_q4_1>) q = _mm256_or_si256(q, fifth_bits_of(load_qh(blk.qh)));
  return q;
}

// Unsigned quants times activations (maddubs), plus the block offset through
// the activation sums: -16 * d_x * s_b (Q5_0) or m * s_b (Q4_1/Q5_1).
// Blocks [b0, b1) of the row (x points at block b0), added to acc (scaled
// dots) and off (offsets).
// Block b, unpacked to q with scale dx and offset coefficient c.
template <int NT>
inline void add_unsigned_block(__m256i q, float dx, float c, int64_t b, const float* const* yd, const float* const* ys,
                               const int8_t* const* yq, __m256* acc, float* off) {
  for (int t = 0; t < NT; ++t) {
    const __m256i p = pairs_i32(q, load(yq[t] + b * 32));
    acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(dx * yd[t][b]), _mm256_cvtepi32_ps(p), acc[t]);
    off[t] += c * ys[t][b];
  }
}

template <int NT, class B>
inline void add_q32u(const B* x, int64_t b0, int64_t b1, const float* const* yd, const float* const* ys,
                     const int8_t* const* yq, __m256* acc, float* off) {
  for (int64_t b = b0; b < b1; ++b, ++x) {
    prefetch_ahead<sizeof(B)>(x);
    const float dx = h2f(x->d);
    float c;
    if constexpr (std::is_same_v<B, block_q5_0>) c = -16.0f * dx;
    else c = h2f(x->m);
    add_unsigned_block<NT>(unpack_q32(*x), dx, c, b, yd, ys, yq, acc, off);
  }
}

template <int NT, class B>
void dot_q32u(int64_t n, const void* w, const uint8_t* acts, size_t stride, float* out) {
  const int64_t nb = n / 32;
  const float* yd[NT];
  const float* ys[NT];
  const int8_t* yq[NT];
  __m256 acc[NT];
  float off[NT];
  for (int t = 0; t < NT; ++t) {
    yd[t] = act_q8_0_d(acts + t * stride);
    ys[t] = act_q8_0_s(acts + t * stride, nb);
    yq[t] = act_q8_0_q(acts + t * stride, nb);
    acc[t] = _mm256_setzero_ps();
    off[t] = 0.0f;
  }
  add_q32u<NT>(static_cast<const B*>(w), 0, nb, yd, ys, yq, acc, off);
  for (int t = 0; t < NT; ++t) out[t] = hsum(acc[t]) + off[t];
}

// Bit K of each byte of qh as 16 or 0: the fifth bits of block K of a Q5_0
// group (repack_q5_0.h), or of word K % 4's nibbles K / 4 in a sixteen-row
// group (repack_q5_0x16.h).
template <int K>
inline __m256i fifth_bits(__m256i qh) {
  const __m256i m = _mm256_set1_epi8(16);
  if constexpr (K < 4) return _mm256_and_si256(_mm256_slli_epi16(qh, 4 - K), m);
  else if constexpr (K == 4) return _mm256_and_si256(qh, m);
  else return _mm256_and_si256(_mm256_srli_epi16(qh, K - 4), m);
}

// Q5_0 in the eight-block groups of repack_q5_0.h. Per group: one load gives
// two blocks' nibbles (blocks lo and lo + 2 of its row), a shift and a mask
// each block's fifth bits, one conversion the eight weight scales. The eight
// blocks' int32 dot vectors are summed across lanes together (hadd tree)
// into one vector, lane k = block k, which takes one multiply by the eight
// combined scales; the offsets -16 d_x s_b are a vector FMA per group. A
// half group and the last blocks go one block at a time.
template <int P>
inline void unpack_pair(const block_q5_0x8& g, __m256i qh, __m256i* q) {
  constexpr int lo = 4 * (P / 2) + P % 2, hi = lo + 2;  // the blocks in row P's nibbles
  static_assert(q5_0x8_row(lo) == P && q5_0x8_row(hi) == P && q5_0x8_shift(hi) == 4);
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i v = load(g.qs[P]);
  q[lo] = _mm256_or_si256(_mm256_and_si256(v, m4), fifth_bits<lo>(qh));
  q[hi] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), m4), fifth_bits<hi>(qh));
}

// The four blocks of a half group (blocks b..b+3), one at a time, as add_q32u.
template <int NT>
inline void add_q5_0x4(const block_q5_0x4& h, int64_t b, const float* const* yd, const float* const* ys,
                       const int8_t* const* yq, __m256* acc, float* off) {
  for (int k = 0; k < 4; ++k, ++b) {
    const __m256i v = load(h.qs[k % 2]);
    const __m256i q = _mm256_or_si256(_mm256_and_si256(k < 2 ? v : _mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0F)),
                                      fifth_bits_of(load_qh(h.qh + 4 * k)));
    const float dx = h2f(h.d[k]);
    add_unsigned_block<NT>(q, dx, -16.0f * dx, b, yd, ys, yq, acc, off);
  }
}

template <int NT>
void dot_q5_0x8(int64_t n, const void* w, const uint8_t* acts, size_t stride, float* out) {
  const auto* grp = static_cast<const block_q5_0x8*>(w);
  const int64_t nb = n / 32, ng = nb / k_q5_0x8_blocks;
  const float* yd[NT];
  const float* ys[NT];
  const int8_t* yq[NT];
  __m256 acc[NT], offv[NT];
  for (int t = 0; t < NT; ++t) {
    yd[t] = act_q8_0_d(acts + t * stride);
    ys[t] = act_q8_0_s(acts + t * stride, nb);
    yq[t] = act_q8_0_q(acts + t * stride, nb);
    acc[t] = offv[t] = _mm256_setzero_ps();
  }
  for (int64_t gi = 0; gi < ng; ++gi) {
    const block_q5_0x8& g = grp[gi];
    prefetch_ahead<sizeof(block_q5_0x8)>(&g);
    const int64_t b = gi * k_q5_0x8_blocks;
    const __m256 dx = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g.d)));
    const __m256i qh = load(g.qh);
    __m256i q[8];  // block k's 32 quants, 0..31
    unpack_pair<0>(g, qh, q);
    unpack_pair<1>(g, qh, q);
    unpack_pair<2>(g, qh, q);
    unpack_pair<3>(g, qh, q);
    for (int t = 0; t < NT; ++t) {
      const int8_t* yb = yq[t] + b * 32;
      __m256i r[4];  // r[p]: blocks 2p, 2p+1 summed in pairs of lanes
      for (int p = 0; p < 4; ++p)
        r[p] = _mm256_hadd_epi32(pairs_i32(q[2 * p], load(yb + 64 * p)), pairs_i32(q[2 * p + 1], load(yb + 64 * p + 32)));
      // s01: blocks 0-3 in each 128-bit half (that half's partial sums),
      // s23: blocks 4-7; adding the halves, lined up, gives lane k = block k.
      const __m256i s01 = _mm256_hadd_epi32(r[0], r[1]), s23 = _mm256_hadd_epi32(r[2], r[3]);
      const __m256i s = _mm256_add_epi32(_mm256_permute2x128_si256(s01, s23, 0x20), _mm256_permute2x128_si256(s01, s23, 0x31));
      acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(dx, _mm256_loadu_ps(yd[t] + b)), _mm256_cvtepi32_ps(s), acc[t]);
      offv[t] = _mm256_fmadd_ps(dx, _mm256_loadu_ps(ys[t] + b), offv[t]);
    }
  }
  float off[NT];
  for (int t = 0; t < NT; ++t) off[t] = -16.0f * hsum(offv[t]);
  const q5_0x8_row_layout lay(nb);
  if (lay.half) add_q5_0x4<NT>(*lay.half_group(w), ng * k_q5_0x8_blocks, yd, ys, yq, acc, off);
  add_q32u<NT>(lay.plain_blocks(w), lay.plain, nb, yd, ys, yq, acc, off);
  for (int t = 0; t < NT; ++t) out[t] = hsum(acc[t]) + off[t];
}

template <int NT>
void dot_q4_1_t(int64_t n, const void* w, const uint8_t* a, size_t s, float* o) { dot_q32u<NT, block_q4_1>(n, w, a, s, o); }
template <int NT>
void dot_q5_0_t(int64_t n, const void* w, const uint8_t* a, size_t s, float* o) { dot_q32u<NT, block_q5_0>(n, w, a, s, o); }
template <int NT>
void dot_q5_1_t(int64_t n, const void* w, const uint8_t* a, size_t s, float* o) { dot_q32u<NT, block_q5_1>(n, w, a, s, o); }

// m_j * (bsums[2j] + bsums[2j+1]) for j < 8, as 8 x int32.
inline __m256i mins_term(__m128i mins_pairs16_lo, __m128i mins_pairs16_hi, const int16_t* bsums) {
  const __m256i m = _mm256_set_m128i(mins_pairs16_hi, mins_pairs16_lo);
  return _mm256_madd_epi16(m, load(bsums));
}

// Q4_K/Q5_K: the 12 packed scale bytes as bytes 0-7 = the eight six-bit
// scales, 8-15 = the eight mins, by 32-bit word operations. (Unpacking them
// into byte arrays first made every vector load of them wait for the byte
// stores to drain: Q4_K GEMV ran at 6.8 GB/s on one thread.)
inline __m128i scales_mins_k4(const uint8_t* q) {
  uint32_t u[3];
  std::memcpy(u, q, sizeof u);
  constexpr uint32_t m6 = 0x3f3f3f3f, m4 = 0x0f0f0f0f, m2 = 0x03030303;
  const uint32_t sc_lo = u[0] & m6, mn_lo = u[1] & m6;
  const uint32_t sc_hi = (u[2] & m4) | ((u[0] >> 6) & m2) << 4;
  const uint32_t mn_hi = ((u[2] >> 4) & m4) | ((u[1] >> 6) & m2) << 4;
  return _mm_setr_epi32(static_cast<int>(sc_lo), static_cast<int>(sc_hi), static_cast<int>(mn_lo),
                        static_cast<int>(mn_hi));
}

// Scale k (an int16 lane of v, 0..7) in every int16 lane.
template <int K>
inline __m256i lane_i16(__m256i v) {
  return _mm256_shuffle_epi8(v, _mm256_set1_epi16(static_cast<short>(0x0100 + 0x0202 * K)));
}

template <int NT, int P, bool FIVE>
inline void qk45_part(const uint8_t* qs, __m256i& hbits, __m256i sc16, const block_q8_k* const* y, int64_t b,
                      __m256i* sumi) {
  const __m256i m4 = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(1);
  const __m256i q = load(qs + 32 * P);
  __m256i lo = _mm256_and_si256(q, m4);
  __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
  if constexpr (FIVE) {
    lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(hbits, one), 4));
    hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hbits, 1), one), 4));
    hbits = _mm256_srli_epi16(hbits, 2);
  }
  const __m256i s_lo = lane_i16<2 * P>(sc16), s_hi = lane_i16<2 * P + 1>(sc16);
  for (int t = 0; t < NT; ++t) {
    const int8_t* yq = y[t][b].qs + 64 * P;
    const __m256i a = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, load(yq)), s_lo);
    const __m256i c = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, load(yq + 32)), s_hi);
    sumi[t] = _mm256_add_epi32(sumi[t], _mm256_add_epi32(a, c));
  }
}

template <int NT, bool FIVE>
void dot_qk45(int64_t n, const void* w, const uint8_t* acts, size_t stride, float* out) {
  const int64_t nb = n / qk_k;
  const block_q8_k* y[NT];
  __m256 acc[NT], accm[NT];
  for (int t = 0; t < NT; ++t) {
    y[t] = reinterpret_cast<const block_q8_k*>(acts + t * stride);
    acc[t] = accm[t] = _mm256_setzero_ps();
  }
  const __m128i dup_mins = _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* scales;
    const uint8_t* qs;
    const uint8_t* qh = nullptr;
    float d, dmin;
    if constexpr (FIVE) {
      const auto& blk = static_cast<const block_q5_k*>(w)[b];
      prefetch_ahead<sizeof(block_q5_k)>(&blk);
      scales = blk.scales, qs = blk.qs, qh = blk.qh, d = h2f(blk.d), dmin = h2f(blk.dmin);
    } else {
      const auto& blk = static_cast<const block_q4_k*>(w)[b];
      prefetch_ahead<sizeof(block_q4_k)>(&blk);
      scales = blk.scales, qs = blk.qs, d = h2f(blk.d), dmin = h2f(blk.dmin);
    }
    const __m128i sm = scales_mins_k4(scales);
    const __m128i mp = _mm_shuffle_epi8(sm, dup_mins);  // m0 m0 m1 m1 ... m7 m7
    const __m128i mp_lo = _mm_cvtepu8_epi16(mp), mp_hi = _mm_cvtepu8_epi16(_mm_srli_si128(mp, 8));
    const __m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sm));  // sc0..sc7, both halves
    __m256i sumi[NT];
    for (int t = 0; t < NT; ++t) sumi[t] = _mm256_setzero_si256();
    __m256i hbits = FIVE ? load(qh) : _mm256_setzero_si256();
    qk45_part<NT, 0, FIVE>(qs, hbits, sc16, y, b, sumi);
    qk45_part<NT, 1, FIVE>(qs, hbits, sc16, y, b, sumi);
    qk45_part<NT, 2, FIVE>(qs, hbits, sc16, y, b, sumi);
    qk45_part<NT, 3, FIVE>(qs, hbits, sc16, y, b, sumi);
    for (int t = 0; t < NT; ++t) {
      const float yd = y[t][b].d;
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d * yd), _mm256_cvtepi32_ps(sumi[t]), acc[t]);
      const __m256i mt = mins_term(mp_lo, mp_hi, y[t][b].bsums);
      accm[t] = _mm256_fmadd_ps(_mm256_set1_ps(dmin * yd), _mm256_cvtepi32_ps(mt), accm[t]);
    }
  }
  for (int t = 0; t < NT; ++t) out[t] = hsum(acc[t]) - hsum(accm[t]);
}
template <int NT>
void dot_q4_k_t(int64_t n, const void* w, const uint8_t* a, size_t s, float* o) { dot_qk45<NT, false>(n, w, a, s, o); }
template <int NT>
void dot_q5_k_t(int64_t n, const void* w, const uint8_t* a, size_t s, float* o) { dot_qk45<NT, true>(n, w, a, s, o); }

template <int NT>
void dot_q6_k(int64_t n, const void* w, const uint8_t* acts, size_t stride, float* out) {
  const auto* x = static_cast<const block_q6_k*>(w);
  const int64_t nb = n / qk_k;
  const block_q8_k* y[NT];
  __m256 acc[NT];
  for (int t = 0; t < NT; ++t) {
    y[t] = reinterpret_cast<const block_q8_k*>(acts + t * stride);
    acc[t] = _mm256_setzero_ps();
  }
  const __m256i m4 = _mm256_set1_epi8(0x0F), m2 = _mm256_set1_epi8(3);
  for (int64_t b = 0; b < nb; ++b) {
    prefetch_ahead<sizeof(block_q6_k)>(x + b);
    const int8_t* sc = x[b].scales;
    const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sc)));
    __m256i sumi[NT];
    for (int t = 0; t < NT; ++t)  // the -32 offset: -32 * sum_j sc_j * bsum_j
      sumi[t] = _mm256_slli_epi32(_mm256_sub_epi32(_mm256_setzero_si256(), _mm256_madd_epi16(sc16, load(y[t][b].bsums))), 5);
    for (int c = 0; c < 2; ++c) {
      const __m256i ql0 = load(x[b].ql + 64 * c), ql1 = load(x[b].ql + 64 * c + 32);
      const __m256i qh = load(x[b].qh + 32 * c);
      const __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(ql0, m4), _mm256_slli_epi16(_mm256_and_si256(qh, m2), 4)),
          _mm256_or_si256(_mm256_and_si256(ql1, m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), m2), 4)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), m2), 4)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), m2), 4))};
      __m256i s[4];
      for (int k = 0; k < 4; ++k)
        s[k] = _mm256_set_m128i(_mm_set1_epi16(sc[8 * c + 2 * k + 1]), _mm_set1_epi16(sc[8 * c + 2 * k]));
      for (int t = 0; t < NT; ++t) {
        const int8_t* yq = y[t][b].qs + 128 * c;
        for (int k = 0; k < 4; ++k)
          sumi[t] = _mm256_add_epi32(sumi[t], _mm256_madd_epi16(_mm256_maddubs_epi16(q[k], load(yq + 32 * k)), s[k]));
      }
    }
    const float d = h2f(x[b].d);
    for (int t = 0; t < NT; ++t)
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d * y[t][b].d), _mm256_cvtepi32_ps(sumi[t]), acc[t]);
  }
  for (int t = 0; t < NT; ++t) out[t] = hsum(acc[t]);
}

// Q8_0, sixteen rows interleaved (repack_q8_0.h), as two halves of eight
// rows: lane r of a register is row 8h + r, every activation word is
// broadcast to all eight. maddubs cannot hold two products of 255 * 127 in
// an int16, so the stored quants go back to signed (xor 0x80) and, as in the
// plain kernel, their signs move onto the activation bytes.
template <int NT>
void dot_q8_0x16(int64_t n, const void* w, const uint8_t* acts, size_t stride, float* out, int64_t os) {
  const auto* x = static_cast<const block_q8_0x16*>(w);
  const int64_t nb = n / qk8_0;
  __m256 acc[2][NT];
  const act_q8_0_rows<NT> y(acts, stride, nb);
  for (int t = 0; t < NT; ++t) acc[0][t] = acc[1][t] = _mm256_setzero_ps();
  const __m256i bias = _mm256_set1_epi8(static_cast<char>(0x80));
  for (int64_t b = 0; b < nb; ++b) {
    const block_q8_0x16& g = x[b];
    prefetch_ahead<sizeof(block_q8_0x16)>(&g);
    for (int h = 0; h < 2; ++h) {
      __m256i sumi[NT];
      for (int t = 0; t < NT; ++t) sumi[t] = _mm256_setzero_si256();
      for (int s = 0; s < 8; ++s) {
        const __m256i qx = _mm256_xor_si256(load(g.qs[s][8 * h]), bias);
        const __m256i ax = _mm256_sign_epi8(qx, qx);
        for (int t = 0; t < NT; ++t) {
          int32_t a;
          std::memcpy(&a, y.q[t] + b * qk8_0 + 4 * s, 4);
          sumi[t] = _mm256_add_epi32(sumi[t], pairs_i32(ax, _mm256_sign_epi8(_mm256_set1_epi32(a), qx)));
        }
      }
      const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g.d + 8 * h)));
      for (int t = 0; t < NT; ++t)
        acc[h][t] = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(y.d[t][b])), _mm256_cvtepi32_ps(sumi[t]), acc[h][t]);
    }
  }
  for (int t = 0; t < NT; ++t) {
    _mm256_storeu_ps(out + t * os, acc[0][t]);
    _mm256_storeu_ps(out + t * os + 8, acc[1][t]);
  }
}

// Q5_0, sixteen rows interleaved (repack_q5_0x16.h), as two halves of eight
// rows: lane r of a register is row 8h + r, every activation word is
// broadcast to all eight. The low and the high nibbles of word K's load are
// two vectors of unsigned quants; their fifth bits are bits K and 4 + K of
// the half's qh bytes, lane for lane, moved to bit 4 by one shift and one
// mask each (fifth_bits). The maddubs pairs of the two vectors (at most
// 2 * 31 * 128 each) add up in int16 before one madd. A block's sum starts
// at -16 times the activation block's quant sum.
template <int K>
inline void unpack_q5_0x16_word(const block_q5_0x16& g, int h, __m256i qh, __m256i* lo, __m256i* hi) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i z = load(g.qs[K][8 * h]);
  lo[K] = _mm256_or_si256(_mm256_and_si256(z, m4), fifth_bits<K>(qh));
  hi[K] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(z, 4), m4), fifth_bits<4 + K>(qh));
}

template <int NT>
void dot_q5_0x16(int64_t n, const void* w, const uint8_t* acts, size_t stride, float* out, int64_t os) {
  const auto* x = static_cast<const block_q5_0x16*>(w);
  const int64_t nb = n / qk5_0;
  __m256 acc[2][NT];
  const act_q8_0_rows<NT> y(acts, stride, nb);
  for (int t = 0; t < NT; ++t) acc[0][t] = acc[1][t] = _mm256_setzero_ps();
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t b = 0; b < nb; ++b) {
    const block_q5_0x16& g = x[b];
    prefetch_ahead<sizeof(block_q5_0x16)>(&g);
    for (int h = 0; h < 2; ++h) {
      const __m256i qh = load(g.qh[8 * h]);
      __m256i lo[4], hi[4];
      unpack_q5_0x16_word<0>(g, h, qh, lo, hi);
      unpack_q5_0x16_word<1>(g, h, qh, lo, hi);
      unpack_q5_0x16_word<2>(g, h, qh, lo, hi);
      unpack_q5_0x16_word<3>(g, h, qh, lo, hi);
      const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g.d + 8 * h)));
      for (int t = 0; t < NT; ++t) {
        const int8_t* yb = y.q[t] + b * qk5_0;
        __m256i sumi = _mm256_set1_epi32(-16 * y.sum[t][b]);
        for (int k = 0; k < 4; ++k) {
          int32_t a0, a1;
          std::memcpy(&a0, yb + 4 * k, 4);
          std::memcpy(&a1, yb + 16 + 4 * k, 4);
          const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(lo[k], _mm256_set1_epi32(a0)),
                                             _mm256_maddubs_epi16(hi[k], _mm256_set1_epi32(a1)));
          sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p, ones));
        }
        acc[h][t] = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(y.d[t][b])), _mm256_cvtepi32_ps(sumi), acc[h][t]);
      }
    }
  }
  for (int t = 0; t < NT; ++t) {
    _mm256_storeu_ps(out + t * os, acc[0][t]);
    _mm256_storeu_ps(out + t * os + 8, acc[1][t]);
  }
}

// Q4_K, sixteen rows interleaved (repack_q4_k.h), as two halves of eight
// rows: lane r of a register is row 8h + r, every activation word is
// broadcast to all eight. maddubs' int16 pairs of one sub-block add up in
// int16 (32 products, at most 32 * 15 * 128 in magnitude) and one madd
// against the scale in both words of the lane makes the lane's int32 sum.
// Against one token the mins at a block's front are summed first and the
// next activation block is asked for ahead, as in the AVX-512 kernel (run at
// this level on a Zen 4 core, 8960x1536 GEMV on one thread went from
// 17.4-19.1 to 21.6-23.5 GB/s, 1536x8960 from 16.0-16.6 to 19.0-19.7).
template <int NT>
void dot_q4_kx16(int64_t n, const void* w, const uint8_t* acts, size_t stride, float* out, int64_t os) {
  const auto* x = static_cast<const block_q4_kx16*>(w);
  const int64_t nb = n / qk_k;
  const block_q8_k* y[NT];
  __m256 acc[2][NT];
  for (int t = 0; t < NT; ++t) {
    y[t] = reinterpret_cast<const block_q8_k*>(acts + t * stride);
    acc[0][t] = acc[1][t] = _mm256_setzero_ps();
  }
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  for (int64_t b = 0; b < nb; ++b) {
    const block_q4_kx16& g = x[b];
    if (NT == 1 && b + 1 < nb) simd::prefetch_lines<sizeof(block_q8_k)>(&y[0][b + 1]);
    for (int h = 0; h < 2; ++h) {
      const int r0 = 8 * h;
      __m256i sumi[NT], summ[NT];
      for (int t = 0; t < NT; ++t) sumi[t] = summ[t] = _mm256_setzero_si256();
      const auto mins = [&] {
        for (int p = 0; p < 4; ++p) {
          const __m256i mp = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g.m[p][r0])));
          for (int t = 0; t < NT; ++t)
            summ[t] = _mm256_add_epi32(summ[t], _mm256_madd_epi16(mp, _mm256_set1_epi32(q8_k_sum_pair(y[t][b].bsums, p))));
        }
      };
      if constexpr (NT == 1) mins();
      for (int j = 0; j < 8; ++j) {
        __m256i s16[NT];
        for (int t = 0; t < NT; ++t) s16[t] = _mm256_setzero_si256();
        for (int s = 0; s < 4; ++s) {
          if (h == 0) prefetch_ahead<64>(g.qs[j][s]);
          const __m256i z = load(g.qs[j][s][r0]);
          const __m256i ql = _mm256_and_si256(z, m4), qh = _mm256_and_si256(_mm256_srli_epi16(z, 4), m4);
          for (int t = 0; t < NT; ++t) {
            const int8_t* yq = y[t][b].qs + 32 * j + 4 * s;
            int32_t a0, a1;
            std::memcpy(&a0, yq, 4);
            std::memcpy(&a1, yq + 16, 4);
            s16[t] = _mm256_add_epi16(s16[t], _mm256_add_epi16(_mm256_maddubs_epi16(ql, _mm256_set1_epi32(a0)),
                                                                _mm256_maddubs_epi16(qh, _mm256_set1_epi32(a1))));
          }
        }
        const __m128i sc8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(g.sc[j] + r0));
        const __m256i sc = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(sc8, sc8));  // lane r: sc, sc
        for (int t = 0; t < NT; ++t) sumi[t] = _mm256_add_epi32(sumi[t], _mm256_madd_epi16(s16[t], sc));
      }
      if constexpr (NT > 1) mins();
      const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g.d + r0)));
      const __m256 dmin = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g.dmin + r0)));
      for (int t = 0; t < NT; ++t) {
        const __m256 yd = _mm256_set1_ps(y[t][b].d);
        acc[h][t] = _mm256_fmadd_ps(_mm256_mul_ps(d, yd), _mm256_cvtepi32_ps(sumi[t]), acc[h][t]);
        acc[h][t] = _mm256_fnmadd_ps(_mm256_mul_ps(dmin, yd), _mm256_cvtepi32_ps(summ[t]), acc[h][t]);
      }
    }
  }
  for (int t = 0; t < NT; ++t) {
    _mm256_storeu_ps(out + t * os, acc[0][t]);
    _mm256_storeu_ps(out + t * os + 8, acc[1][t]);
  }
}

// Q6_K, sixteen rows interleaved (repack_q6_k.h), as two halves of eight
// rows: lane r of a register is row 8h + r. The stored values are the
// unsigned 0..63, so maddubs takes them as they are; two words' int16 pairs
// add up in int16 (8 products, at most 8 * 63 * 128 / 2 per word) before a
// madd against the sub-block's scale in both words of the lane. The -32
// offset comes back as 32 times the scale-weighted 16-value activation sums.
// Bits 2s..2s+1 of a high-bits byte go to bits 4..5 of the value.
inline __m256i q6_high_bits(__m256i v, int s) {
  switch (s) {
    case 0: v = _mm256_slli_epi16(v, 4); break;
    case 1: v = _mm256_slli_epi16(v, 2); break;
    case 3: v = _mm256_srli_epi16(v, 2); break;
    default: break;
  }
  return _mm256_and_si256(v, _mm256_set1_epi8(0x30));
}

template <int NT>
void dot_q6_kx16(int64_t n, const void* w, const uint8_t* acts, size_t stride, float* out, int64_t os) {
  const auto* x = static_cast<const block_q6_kx16*>(w);
  const int64_t nb = n / qk_k;
  const block_q8_k* y[NT];
  __m256 acc[2][NT];
  for (int t = 0; t < NT; ++t) {
    y[t] = reinterpret_cast<const block_q8_k*>(acts + t * stride);
    acc[0][t] = acc[1][t] = _mm256_setzero_ps();
  }
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  // Within each 32-bit lane of (scale 2j, scale 2j+1) as int16: the first
  // word twice, the second twice.
  const __m256i dup_lo = _mm256_setr_epi8(0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13, 0, 1, 0, 1, 4, 5, 4, 5, 8, 9,
                                          8, 9, 12, 13, 12, 13);
  const __m256i dup_hi = _mm256_add_epi8(dup_lo, _mm256_set1_epi8(2));
  for (int64_t b = 0; b < nb; ++b) {
    const block_q6_kx16& g = x[b];
    for (int h = 0; h < 2; ++h) {
      const int r0 = 8 * h;
      __m256i sumi[NT], bias[NT];
      for (int t = 0; t < NT; ++t) sumi[t] = bias[t] = _mm256_setzero_si256();
      for (int j = 0; j < 8; ++j) {
        if (h == 0) prefetch_ahead<128>(g.q[j].qh);
        const __m256i hl = load(g.q[j].qh[0][r0]), hh = load(g.q[j].qh[1][r0]);
        const __m256i sp = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g.sc[j][r0])));
        const __m256i slo = _mm256_shuffle_epi8(sp, dup_lo), shi = _mm256_shuffle_epi8(sp, dup_hi);
        for (int s = 0; s < 4; s += 2) {
          __m256i ql[2], qh[2];
          for (int u = 0; u < 2; ++u) {
            if (h == 0) prefetch_ahead<64>(g.q[j].ql[s + u]);
            const __m256i z = load(g.q[j].ql[s + u][r0]);
            ql[u] = _mm256_or_si256(_mm256_and_si256(z, m4), q6_high_bits(hl, s + u));
            qh[u] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(z, 4), m4), q6_high_bits(hh, s + u));
          }
          for (int t = 0; t < NT; ++t) {
            const int8_t* yq = y[t][b].qs + 32 * j + 4 * s;
            int32_t a[4];
            std::memcpy(&a[0], yq, 4);
            std::memcpy(&a[1], yq + 4, 4);
            std::memcpy(&a[2], yq + 16, 4);
            std::memcpy(&a[3], yq + 20, 4);
            const __m256i ulo = _mm256_add_epi16(_mm256_maddubs_epi16(ql[0], _mm256_set1_epi32(a[0])),
                                                 _mm256_maddubs_epi16(ql[1], _mm256_set1_epi32(a[1])));
            const __m256i uhi = _mm256_add_epi16(_mm256_maddubs_epi16(qh[0], _mm256_set1_epi32(a[2])),
                                                 _mm256_maddubs_epi16(qh[1], _mm256_set1_epi32(a[3])));
            sumi[t] = _mm256_add_epi32(sumi[t], _mm256_add_epi32(_mm256_madd_epi16(ulo, slo), _mm256_madd_epi16(uhi, shi)));
          }
        }
        for (int t = 0; t < NT; ++t) {
          int32_t pair;  // the 16-value sums of sub-blocks 2j, 2j+1 as two int16
          std::memcpy(&pair, y[t][b].bsums + 2 * j, 4);
          bias[t] = _mm256_add_epi32(bias[t], _mm256_madd_epi16(sp, _mm256_set1_epi32(pair)));
        }
      }
      const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g.d + r0)));
      for (int t = 0; t < NT; ++t) {
        const __m256i s = _mm256_sub_epi32(sumi[t], _mm256_slli_epi32(bias[t], 5));
        acc[h][t] = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(y[t][b].d)), _mm256_cvtepi32_ps(s), acc[h][t]);
      }
    }
  }
  for (int t = 0; t < NT; ++t) {
    _mm256_storeu_ps(out + t * os, acc[0][t]);
    _mm256_storeu_ps(out + t * os + 8, acc[1][t]);
  }
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

void fill_avx2_kernels(kernel_table& t) {
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
  fill_avx2_float_kernels(t);
  fill_avx2_act_quant(t);
}

}  // namespace qf::infer::cpu::detail
