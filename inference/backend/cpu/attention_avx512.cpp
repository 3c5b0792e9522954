// AVX-512 attention for a group of query heads sharing one KV head (see
// attention.h), for head_dim 32, 64, 96 or 128.
//
// Scores: four cells at a time, each F16 key row converted to f32 once into
// a row buffer on the stack and dotted with every head of the group in
// 16-lane blocks; the four sums of a head are reduced together.
// Output: the heads' output rows stay in registers while the value rows
// stream past: per cell, each 16-value block of the row is converted once
// and multiplied into every head's accumulator with that head's weight
// broadcast from memory: one load-and-convert per head's FMA, and no load
// or store of the outputs in the loop (the AVX2 kernel loads and stores
// them every four cells). Up to 28 accumulator registers: the heads of a
// larger group take several passes over the rows.
// Compiled with AVX-512 flags (file suffix); called only after CPU detection.
#include "inference/backend/cpu/attention.h"
#include "inference/backend/cpu/ops.h"

#if defined(__AVX512F__)
// The first include of <immintrin.h> (the header says why).
#include "inference/backend/cpu/immintrin_avx512.h"

#include <algorithm>
#include <utility>

namespace qf::infer {

namespace {

constexpr int k_acc_registers = 28;  // of 32: the rest hold a row block and spare

inline __m512 load_f16x16(const fp16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

inline void prefetch_row(const fp16_t* row, int64_t head_dim) {
  const char* c = reinterpret_cast<const char*>(row);
  for (int64_t o = 0; o < 2 * head_dim; o += 64) _mm_prefetch(c + o, _MM_HINT_T0);
}

// The four horizontal sums of a0..a3 as one vector [sum a0, sum a1, sum a2, sum a3].
inline __m128 hsum4(__m512 a0, __m512 a1, __m512 a2, __m512 a3) {
  // pairs within 128-bit lanes: [a0 a1 a0 a1] partials, then [a0 a1 a2 a3] partials per lane
  const __m512 s01 = _mm512_add_ps(_mm512_unpacklo_ps(a0, a1), _mm512_unpackhi_ps(a0, a1));
  const __m512 s23 = _mm512_add_ps(_mm512_unpacklo_ps(a2, a3), _mm512_unpackhi_ps(a2, a3));
  const __m512 s = _mm512_add_ps(_mm512_shuffle_ps(s01, s23, _MM_SHUFFLE(1, 0, 1, 0)),
                                 _mm512_shuffle_ps(s01, s23, _MM_SHUFFLE(3, 2, 3, 2)));
  const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(s),
                                 _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1)));
  return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

// scores[h][j] = scale * q_h . K_j for every cell j < n_kv.
template <int NB>
void scores_pass(const float* q, int64_t n_q, const fp16_t* k, const kv_cells& cells, int64_t n_kv, float scale,
                 float* scores) {
  constexpr int64_t hd = 16 * NB;
  alignas(64) float row[4][hd];
  const __m128 vscale = _mm_set1_ps(scale);
  int64_t j = 0;
  for (; j + 4 <= n_kv; j += 4) {
    for (int r = 0; r < 4; ++r) {
      if (j + k_attention_prefetch_rows + r < n_kv) prefetch_row(k + cells.offset(j + k_attention_prefetch_rows + r), hd);
      const fp16_t* kr = k + cells.offset(j + r);
      for (int b = 0; b < NB; ++b) _mm512_store_ps(row[r] + 16 * b, load_f16x16(kr + 16 * b));
    }
    for (int64_t h = 0; h < n_q; ++h) {
      const float* qh = q + h * hd;
      __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
      for (int b = 0; b < NB; ++b) {
        const __m512 qv = _mm512_loadu_ps(qh + 16 * b);
        a0 = _mm512_fmadd_ps(qv, _mm512_load_ps(row[0] + 16 * b), a0);
        a1 = _mm512_fmadd_ps(qv, _mm512_load_ps(row[1] + 16 * b), a1);
        a2 = _mm512_fmadd_ps(qv, _mm512_load_ps(row[2] + 16 * b), a2);
        a3 = _mm512_fmadd_ps(qv, _mm512_load_ps(row[3] + 16 * b), a3);
      }
      _mm_storeu_ps(scores + h * n_kv + j, _mm_mul_ps(hsum4(a0, a1, a2, a3), vscale));
    }
  }
  for (; j < n_kv; ++j) {
    const fp16_t* kr = k + cells.offset(j);
    for (int b = 0; b < NB; ++b) _mm512_store_ps(row[0] + 16 * b, load_f16x16(kr + 16 * b));
    for (int64_t h = 0; h < n_q; ++h) {
      __m512 a = _mm512_setzero_ps();
      for (int b = 0; b < NB; ++b) a = _mm512_fmadd_ps(_mm512_loadu_ps(q + h * hd + 16 * b), _mm512_load_ps(row[0] + 16 * b), a);
      scores[h * n_kv + j] = scale * _mm512_reduce_add_ps(a);
    }
  }
}

// out_h = sum_j p[h][j] * V_j for NH heads (p = scores after the softmax),
// the NH x NB output blocks held in registers across all cells.
template <int NB, int NH>
void values_pass(const float* p, int64_t n_kv, const fp16_t* v, const kv_cells& cells, float* out) {
  constexpr int64_t hd = 16 * NB;
  __m512 acc[NH][NB];
  for (int h = 0; h < NH; ++h)
    for (int b = 0; b < NB; ++b) acc[h][b] = _mm512_setzero_ps();
  for (int64_t j = 0; j < n_kv; ++j) {
    const fp16_t* vr = v + cells.offset(j);
    if (j + k_attention_prefetch_rows < n_kv) prefetch_row(v + cells.offset(j + k_attention_prefetch_rows), hd);
    for (int b = 0; b < NB; ++b) {
      const __m512 x = load_f16x16(vr + 16 * b);
      for (int h = 0; h < NH; ++h) acc[h][b] = _mm512_fmadd_ps(_mm512_set1_ps(p[h * n_kv + j]), x, acc[h][b]);
    }
  }
  for (int h = 0; h < NH; ++h)
    for (int b = 0; b < NB; ++b) _mm512_storeu_ps(out + h * hd + 16 * b, acc[h][b]);
}

template <int NB, int... NH>
void values_for(int nh, const float* p, int64_t n_kv, const fp16_t* v, const kv_cells& cells, float* out,
                std::integer_sequence<int, NH...>) {
  // nh in [1, sizeof...(NH)]: the instance for exactly nh heads
  ((nh == NH + 1 ? values_pass<NB, NH + 1>(p, n_kv, v, cells, out) : void()), ...);
}

template <int NB>
void attend(const float* q, int64_t n_q, const fp16_t* k, const fp16_t* v, const kv_cells& cells, int64_t n_kv,
            float scale, float* scores, float* out) {
  scores_pass<NB>(q, n_q, k, cells, n_kv, scale, scores);
  for (int64_t h = 0; h < n_q; ++h) cpu::softmax(scores + h * n_kv, n_kv);
  constexpr int max_heads = std::min(8, k_acc_registers / NB);
  for (int64_t h0 = 0; h0 < n_q; h0 += max_heads) {
    const int nh = static_cast<int>(std::min<int64_t>(max_heads, n_q - h0));
    values_for<NB>(nh, scores + h0 * n_kv, n_kv, v, cells, out + h0 * 16 * NB,
                   std::make_integer_sequence<int, max_heads>{});
  }
}

}  // namespace

void attend_group_f16_avx512(const float* q, int64_t n_q, const fp16_t* k, const fp16_t* v, const kv_cells& cells,
                             int64_t n_kv, int64_t head_dim, float scale, float* scores, float* out) {
  switch (head_dim) {
    case 32: attend<2>(q, n_q, k, v, cells, n_kv, scale, scores, out); return;
    case 64: attend<4>(q, n_q, k, v, cells, n_kv, scale, scores, out); return;
    case 96: attend<6>(q, n_q, k, v, cells, n_kv, scale, scores, out); return;
    case 128: attend<8>(q, n_q, k, v, cells, n_kv, scale, scores, out); return;
    default: attend_group_f16_generic(q, n_q, k, v, cells, n_kv, head_dim, scale, scores, out);
  }
}

}  // namespace qf::infer
#else  // not an x86 build with AVX-512 flags: never selected (attention_avx512_usable is false)
namespace qf::infer {
void attend_group_f16_avx512(const float* q, int64_t n_q, const fp16_t* k, const fp16_t* v, const kv_cells& cells,
                             int64_t n_kv, int64_t head_dim, float scale, float* scores, float* out) {
  attend_group_f16_generic(q, n_q, k, v, cells, n_kv, head_dim, scale, scores, out);
}
}  // namespace qf::infer
#endif
