// Causal attention over the KV cache (F16 or F32), flash-decoding style.
//
// Pass 1: grid (head, token, split); each block scores one split of at most
// k_split keys against one query, softmaxes locally and accumulates V, then
// writes its partial (acc[head_dim], max, sum) to scratch. Pass 2 merges the
// splits of each (head, token) with the usual log-sum-exp rescaling. Long
// contexts thus spread over many blocks even for a single decoded token.
// GQA: query head h reads KV head h / (n_head / n_head_kv). A paged cache is
// read through the sequence's block table (kv_cell).
//
// The first query's position is read on the device (pos[0]) when given, so a
// recorded step graph attends over the current context: the grid is then
// sized for n_kv_max keys and the splits past the context exit at once.
#include <math_constants.h>

#include <stdexcept>

#include "inference/backend/cuda/common.cuh"

namespace qf::infer::cuda {
namespace {

constexpr int k_split = 256;   // keys per split
constexpr int k_threads = 128; // 4 warps
constexpr int k_max_head_dim = 256;

__device__ __forceinline__ float kv_load(const uint16_t* p) { return h2f(*p); }
__device__ __forceinline__ float kv_load(const float* p) { return *p; }

__device__ __forceinline__ int64_t first_pos(const int32_t* pos, int64_t n_past) { return pos ? pos[0] : n_past; }
__host__ __device__ __forceinline__ int64_t splits_for(int64_t n_kv) { return (n_kv + k_split - 1) / k_split; }

template <typename KV>
__global__ void attn_partial_kernel(const float* __restrict__ q, const KV* __restrict__ k,
                                    const KV* __restrict__ v, float* __restrict__ scratch,
                                    int64_t n_past_host, const int32_t* __restrict__ pos, int64_t n_kv_max,
                                    int64_t n_head, int64_t n_head_kv, int64_t head_dim, float scale,
                                    int64_t n_splits, const int32_t* __restrict__ blocks, int shift) {
  const int64_t h = blockIdx.x, t = blockIdx.y, s = blockIdx.z;
  const int64_t g = h / (n_head / n_head_kv);
  const int64_t n_keys = min(first_pos(pos, n_past_host) + t + 1, n_kv_max);  // causal, never past the bound
  const int64_t begin = s * k_split;
  const int64_t end = min(begin + k_split, n_keys);
  if (begin >= end) return;  // past this query's keys: the combine pass does not read it
  float* part = scratch + ((t * n_head + h) * n_splits + s) * (head_dim + 2);

  __shared__ float qs[k_max_head_dim];
  __shared__ float sc[k_split];
  __shared__ float red[k_threads / 32];
  const float* qrow = q + (t * n_head + h) * head_dim;
  for (int64_t d = threadIdx.x; d < head_dim; d += k_threads) qs[d] = qrow[d];
  __syncthreads();

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t row_stride = n_head_kv * head_dim;
  for (int64_t j = begin + warp; j < end; j += k_threads / 32) {
    const KV* krow = k + kv_cell(blocks, shift, j) * row_stride + g * head_dim;
    float dot = 0.f;
    for (int64_t d = lane; d < head_dim; d += 32) dot += qs[d] * kv_load(krow + d);
    dot = warp_sum(dot);
    if (lane == 0) sc[j - begin] = dot * scale;
  }
  __syncthreads();

  const int n = int(end - begin);
  float m = -CUDART_INF_F;
  for (int i = threadIdx.x; i < n; i += k_threads) m = fmaxf(m, sc[i]);
  m = warp_max(m);
  if (lane == 0) red[warp] = m;
  __syncthreads();
  m = red[0];
  for (int w = 1; w < k_threads / 32; ++w) m = fmaxf(m, red[w]);
  __syncthreads();
  float l = 0.f;
  for (int i = threadIdx.x; i < n; i += k_threads) {
    const float p = __expf(sc[i] - m);
    sc[i] = p;
    l += p;
  }
  l = warp_sum(l);
  if (lane == 0) red[warp] = l;
  __syncthreads();
  l = 0.f;
  for (int w = 0; w < k_threads / 32; ++w) l += red[w];

  for (int64_t d = threadIdx.x; d < head_dim; d += k_threads) {
    float acc = 0.f;
    const KV* vcol = v + g * head_dim + d;
    for (int i = 0; i < n; ++i) acc += sc[i] * kv_load(vcol + kv_cell(blocks, shift, begin + i) * row_stride);
    part[d] = acc;
  }
  if (threadIdx.x == 0) { part[head_dim] = m; part[head_dim + 1] = l; }
}

// grid (head, token); n_splits is the scratch stride, the splits this query
// used are those covering its keys [0, pos0 + t].
__global__ void attn_combine_kernel(const float* __restrict__ scratch, float* __restrict__ out,
                                    int64_t n_past_host, const int32_t* __restrict__ pos, int64_t n_kv_max,
                                    int64_t n_head, int64_t head_dim, int64_t n_splits) {
  const int64_t h = blockIdx.x, t = blockIdx.y;
  const int64_t n_keys = min(first_pos(pos, n_past_host) + t + 1, n_kv_max);
  const int64_t used = min(splits_for(n_keys), n_splits);
  const float* parts = scratch + (t * n_head + h) * n_splits * (head_dim + 2);
  float m = -CUDART_INF_F;
  for (int64_t s = 0; s < used; ++s) m = fmaxf(m, parts[s * (head_dim + 2) + head_dim]);
  float l = 0.f;
  for (int64_t s = 0; s < used; ++s) l += parts[s * (head_dim + 2) + head_dim + 1] * __expf(parts[s * (head_dim + 2) + head_dim] - m);
  float* o = out + (t * n_head + h) * head_dim;
  for (int64_t d = threadIdx.x; d < head_dim; d += blockDim.x) {
    float acc = 0.f;
    for (int64_t s = 0; s < used; ++s) acc += parts[s * (head_dim + 2) + d] * __expf(parts[s * (head_dim + 2) + head_dim] - m);
    o[d] = acc / l;
  }
}

template <typename KV>
void launch(const float* q, const void* k, const void* v, float* out, int64_t n_tokens, int64_t n_past,
            const int32_t* pos, int64_t n_kv_max, int64_t n_splits, int64_t n_head, int64_t n_head_kv,
            int64_t head_dim, float scale, float* scratch, const int32_t* blocks, int shift, stream_t stream) {
  dim3 grid1{unsigned(n_head), unsigned(n_tokens), unsigned(n_splits)};
  attn_partial_kernel<KV><<<grid1, k_threads, 0, stream>>>(q, static_cast<const KV*>(k), static_cast<const KV*>(v),
                                                           scratch, n_past, pos, n_kv_max, n_head, n_head_kv,
                                                           head_dim, scale, n_splits, blocks, shift);
  dim3 grid2{unsigned(n_head), unsigned(n_tokens)};
  attn_combine_kernel<<<grid2, 128, 0, stream>>>(scratch, out, n_past, pos, n_kv_max, n_head, head_dim, n_splits);
}

}  // namespace

int64_t attention_scratch_floats(int64_t n_tokens, int64_t n_head, int64_t head_dim, int64_t n_kv) {
  return n_tokens * n_head * splits_for(n_kv) * (head_dim + 2);
}

void attention(const float* q, const void* k, const void* v, ggml_type kv_type, float* out, int64_t n_tokens,
               int64_t n_past, const int32_t* pos, int64_t n_kv_max, int64_t n_head, int64_t n_head_kv,
               int64_t head_dim, float scale, float* scratch, const int32_t* blocks, int block_shift,
               stream_t stream) {
  if (head_dim > k_max_head_dim || n_head % n_head_kv != 0)
    throw std::invalid_argument("cuda attention: unsupported head layout");
  if (kv_type != ggml_type::f16 && kv_type != ggml_type::f32)
    throw std::invalid_argument("cuda attention: the KV cache must be F16 or F32");
  if (n_tokens == 0) return;
  if (!pos) n_kv_max = n_past + n_tokens;
  const int64_t n_splits = splits_for(n_kv_max);
  if (kv_type == ggml_type::f16)
    launch<uint16_t>(q, k, v, out, n_tokens, n_past, pos, n_kv_max, n_splits, n_head, n_head_kv, head_dim, scale,
                     scratch, blocks, block_shift, stream);
  else
    launch<float>(q, k, v, out, n_tokens, n_past, pos, n_kv_max, n_splits, n_head, n_head_kv, head_dim, scale,
                  scratch, blocks, block_shift, stream);
  QF_CUDA_CHECK(cudaGetLastError());
}

}  // namespace qf::infer::cuda
