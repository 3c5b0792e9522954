// Reference forward pass (see reference.h). Everything is recomputed from
// scratch per call with plain loops; clarity over speed.
#include "tests/inference/model/reference.h"

#include <algorithm>
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

vec layernorm(const vec& x, const std::vector<float>& w, const std::vector<float>& b, double eps) {
  double mean = 0, var = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(x.size());
  for (double v : x) var += (v - mean) * (v - mean);
  var /= static_cast<double>(x.size());
  vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = (x[i] - mean) / std::sqrt(var + eps) * w[i] + (b.empty() ? 0.0 : b[i]);
  return y;
}

double gelu(double x) {
  const double pi = 3.14159265358979323846;
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (x + 0.044715 * x * x * x)));
}

vec rmsnorm(const vec& x, const std::vector<float>& w, double eps) {
  double ss = 0;
  for (double v : x) ss += v * v;
  const double s = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + eps);
  vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * s * w[i];
  return y;
}

// Rotates each head of x at position pos. llama: pairs (2i, 2i+1); neox: (i, i + hd/2).
// YaRN (c.yarn): pair i's angle blends the interpolated (pos / factor) and
// the original angle by a ramp over the pairs between the correction dims,
// and the rotated values are scaled by attn_factor * (1 + 0.1 ln factor).
void rope(vec& x, int64_t n_heads, int64_t hd, int64_t pos, const synth_config& c, bool neox,
          const std::vector<float>& factors) {
  const double base = c.rope_base, pi = 3.14159265358979323846;
  double low = 0, high = 0, mscale = 1;
  if (c.yarn) {
    auto dim = [&](double turns) { return hd * std::log(c.yarn_orig_ctx / (turns * 2 * pi)) / (2 * std::log(base)); };
    low = std::max(0.0, std::floor(dim(c.yarn_beta_fast)));
    high = std::min(static_cast<double>(hd - 1), std::ceil(dim(c.yarn_beta_slow)));
    mscale = (c.yarn_attn_factor > 0 ? c.yarn_attn_factor : 1.0) * (1.0 + 0.1 * std::log(c.yarn_factor));
  }
  for (int64_t h = 0; h < n_heads; ++h) {
    double* v = x.data() + h * hd;
    for (int64_t i = 0; i < hd / 2; ++i) {
      double theta = static_cast<double>(pos) * std::pow(base, -2.0 * i / static_cast<double>(hd));
      if (!factors.empty()) theta /= factors[i];
      if (c.yarn) {
        const double ramp = 1.0 - std::clamp((i - low) / std::max(0.001, high - low), 0.0, 1.0);
        theta = theta / c.yarn_factor * (1 - ramp) + theta * ramp;
      }
      const double cs = std::cos(theta) * mscale, sn = std::sin(theta) * mscale;
      const int64_t a = neox ? i : 2 * i, b = neox ? i + hd / 2 : 2 * i + 1;
      const double va = v[a], vb = v[b];
      v[a] = va * cs - vb * sn;
      v[b] = va * sn + vb * cs;
    }
  }
}

void add_to(vec& x, const std::vector<float>& b) {
  for (size_t i = 0; i < b.size(); ++i) x[i] += b[i];
}

// Per-head RMSNorm: each head's hd values normed with the same weights.
void head_norm(vec& x, int64_t n_heads, int64_t hd, const std::vector<float>& w, double eps) {
  for (int64_t h = 0; h < n_heads; ++h) {
    vec head(x.begin() + h * hd, x.begin() + (h + 1) * hd);
    head = rmsnorm(head, w, eps);
    std::copy(head.begin(), head.end(), x.begin() + h * hd);
  }
}
}  // namespace

std::vector<std::vector<double>> reference_logits(const synth_model& m, const std::vector<int32_t>& tokens) {
  const synth_config& c = m.cfg;
  const int64_t E = c.n_embd, H = c.n_head, HKV = c.n_head_kv, hd = head_dim_of(c), F = c.n_ff, V = m.n_vocab;
  const bool neox = c.arch == "qwen2" || c.arch == "qwen3" || c.arch == "starcoder2" || c.arch == "gemma";
  const bool layer_norm = c.arch == "starcoder2", granite = c.arch == "granite";
  const double embd_scale = c.arch == "gemma" ? std::sqrt(static_cast<double>(E)) : granite ? c.embd_scale : 1.0;
  const double res_scale = granite ? c.residual_scale : 1.0;
  const double kq_scale = granite ? c.attn_scale : 1.0 / std::sqrt(static_cast<double>(hd));
  const int64_t n = static_cast<int64_t>(tokens.size());
  auto norm = [&](const vec& x, const std::vector<float>& w, const std::vector<float>& b) {
    return layer_norm ? layernorm(x, w, b, c.rms_eps) : rmsnorm(x, w, c.rms_eps);
  };

  std::vector<vec> x(n);
  for (int64_t t = 0; t < n; ++t) {
    x[t].resize(E);
    for (int64_t i = 0; i < E; ++i) x[t][i] = m.tok_embd[tokens[t] * E + i] * embd_scale;
  }
  for (const synth_layer& L : m.layers) {
    std::vector<vec> q(n), k(n), v(n);
    for (int64_t t = 0; t < n; ++t) {
      vec h = norm(x[t], L.attn_norm, L.attn_norm_b);
      q[t] = matvec(L.wq, h, H * hd, E);
      k[t] = matvec(L.wk, h, HKV * hd, E);
      v[t] = matvec(L.wv, h, HKV * hd, E);
      add_to(q[t], L.bq);
      add_to(k[t], L.bk);
      add_to(v[t], L.bv);
      if (!L.q_norm.empty()) {
        head_norm(q[t], H, hd, L.q_norm, c.rms_eps);
        head_norm(k[t], HKV, hd, L.k_norm, c.rms_eps);
      }
      rope(q[t], H, hd, t, c, neox, m.rope_freqs);
      rope(k[t], HKV, hd, t, c, neox, m.rope_freqs);
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
          s[j] = d * kq_scale;
          mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (double& e : s) sum += (e = std::exp(e - mx));
        for (int64_t j = 0; j <= t; ++j)
          for (int64_t i = 0; i < hd; ++i) att[h * hd + i] += s[j] / sum * v[j][kh * hd + i];
      }
      vec o = matvec(L.wo, att, E, H * hd);
      add_to(o, L.bo);
      for (int64_t i = 0; i < E; ++i) x[t][i] += o[i] * res_scale;
    }
    for (int64_t t = 0; t < n; ++t) {
      vec h = norm(x[t], L.ffn_norm, L.ffn_norm_b);
      vec u = matvec(L.up, h, F, E);
      add_to(u, L.up_b);
      if (L.gate.empty()) {  // starcoder2: gelu(up)
        for (int64_t i = 0; i < F; ++i) u[i] = gelu(u[i]);
      } else {
        const vec g = matvec(L.gate, h, F, E);
        for (int64_t i = 0; i < F; ++i)
          u[i] *= c.arch == "gemma" ? gelu(g[i]) : g[i] / (1.0 + std::exp(-g[i]));
      }
      vec d = matvec(L.down, u, E, F);
      add_to(d, L.down_b);
      for (int64_t i = 0; i < E; ++i) x[t][i] += d[i] * res_scale;
    }
  }
  std::vector<vec> logits(n);
  const std::vector<float>& out = c.tied ? m.tok_embd : m.output;
  for (int64_t t = 0; t < n; ++t) {
    logits[t] = matvec(out, norm(x[t], m.output_norm, m.output_norm_b), V, E);
    if (granite)
      for (double& l : logits[t]) l /= c.logit_scale;
  }
  return logits;
}

}  // namespace qf::test
