// Reference forward pass (see reference.h). Everything is recomputed from
// scratch per call with plain loops; clarity over speed.
#include "tests/inference/model/reference.h"

#include <cmath>

namespace qf::test {

namespace {
using vec = std::vector<double>;

// y[r] = sum_c W[r][c] x[c]
vec matvec(const std::vector<float>& w, const vec& x, int64_t rows, int64_t cols) {
  vec y(rows, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) y[r] += static_cast<double>(w[r * cols + c]) * x[c];
  return y;
}

vec rmsnorm(const vec& x, const std::vector<float>& w, double eps) {
  double ss = 0;
  for (double v : x) ss += v * v;
  const double s = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + eps);
  vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * s * w[i];
  return y;
}

// Rotates each head of x at position pos. llama: pairs (2i, 2i+1); qwen2: (i, i + hd/2).
void rope(vec& x, int64_t n_heads, int64_t hd, int64_t pos, double base, bool neox, const std::vector<float>& factors) {
  for (int64_t h = 0; h < n_heads; ++h) {
    double* v = x.data() + h * hd;
    for (int64_t i = 0; i < hd / 2; ++i) {
      double theta = static_cast<double>(pos) * std::pow(base, -2.0 * i / static_cast<double>(hd));
      if (!factors.empty()) theta /= factors[i];
      const double c = std::cos(theta), s = std::sin(theta);
      const int64_t a = neox ? i : 2 * i, b = neox ? i + hd / 2 : 2 * i + 1;
      const double va = v[a], vb = v[b];
      v[a] = va * c - vb * s;
      v[b] = va * s + vb * c;
    }
  }
}
}  // namespace

std::vector<std::vector<double>> reference_logits(const synth_model& m, const std::vector<int32_t>& tokens) {
  const synth_config& c = m.cfg;
  const int64_t E = c.n_embd, H = c.n_head, HKV = c.n_head_kv, hd = E / H, F = c.n_ff, V = m.n_vocab;
  const bool neox = c.arch == "qwen2";
  const int64_t n = static_cast<int64_t>(tokens.size());

  std::vector<vec> x(n);
  for (int64_t t = 0; t < n; ++t) {
    x[t].resize(E);
    for (int64_t i = 0; i < E; ++i) x[t][i] = m.tok_embd[tokens[t] * E + i];
  }
  for (const synth_layer& L : m.layers) {
    std::vector<vec> q(n), k(n), v(n);
    for (int64_t t = 0; t < n; ++t) {
      vec h = rmsnorm(x[t], L.attn_norm, c.rms_eps);
      q[t] = matvec(L.wq, h, H * hd, E);
      k[t] = matvec(L.wk, h, HKV * hd, E);
      v[t] = matvec(L.wv, h, HKV * hd, E);
      if (!L.bq.empty()) {
        for (int64_t i = 0; i < H * hd; ++i) q[t][i] += L.bq[i];
        for (int64_t i = 0; i < HKV * hd; ++i) k[t][i] += L.bk[i], v[t][i] += L.bv[i];
      }
      rope(q[t], H, hd, t, c.rope_base, neox, m.rope_freqs);
      rope(k[t], HKV, hd, t, c.rope_base, neox, m.rope_freqs);
    }
    for (int64_t t = 0; t < n; ++t) {
      vec att(H * hd, 0.0);
      for (int64_t h = 0; h < H; ++h) {
        const int64_t kh = h / (H / HKV);
        vec s(t + 1);
        double mx = -1e300;
        for (int64_t j = 0; j <= t; ++j) {
          double d = 0;
          for (int64_t i = 0; i < hd; ++i) d += q[t][h * hd + i] * k[j][kh * hd + i];
          s[j] = d / std::sqrt(static_cast<double>(hd));
          mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (double& e : s) sum += (e = std::exp(e - mx));
        for (int64_t j = 0; j <= t; ++j)
          for (int64_t i = 0; i < hd; ++i) att[h * hd + i] += s[j] / sum * v[j][kh * hd + i];
      }
      vec o = matvec(L.wo, att, E, H * hd);
      for (int64_t i = 0; i < E; ++i) x[t][i] += o[i];
    }
    for (int64_t t = 0; t < n; ++t) {
      vec h = rmsnorm(x[t], L.ffn_norm, c.rms_eps);
      vec g = matvec(L.gate, h, F, E), u = matvec(L.up, h, F, E);
      for (int64_t i = 0; i < F; ++i) g[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
      vec d = matvec(L.down, g, E, F);
      for (int64_t i = 0; i < E; ++i) x[t][i] += d[i];
    }
  }
  std::vector<vec> logits(n);
  const std::vector<float>& out = c.tied ? m.tok_embd : m.output;
  for (int64_t t = 0; t < n; ++t) logits[t] = matvec(out, rmsnorm(x[t], m.output_norm, c.rms_eps), V, E);
  return logits;
}

}  // namespace qf::test
