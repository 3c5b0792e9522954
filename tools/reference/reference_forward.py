#!/usr/bin/python3
"""Independent NumPy forward pass of the llama, qwen2, qwen3, starcoder2,
gemma and granite architectures.

Written from the architecture definitions, not from the C++ engine: token
embedding (gemma: times sqrt(n_embd); granite: times embedding_scale); per
block a norm (RMSNorm; starcoder2: LayerNorm with bias) -> Q/K/V projections
(+ biases for qwen2 and starcoder2; qwen3: per-head RMSNorm of q and k) ->
rotary embedding (llama, granite: adjacent pairs (2i, 2i+1); the others: NEOX
halves (i, i + n_rot/2); theta_i = base^(-2i/n_rot), position scaled by the
linear rope scale, or YaRN's ramp and magnitude) -> causal softmax attention
with 1/sqrt(head_dim) scaling (granite: attention.scale) and grouped KV heads
(query head h reads KV head h // (n_head / n_head_kv)) -> output projection
(+ bias for starcoder2) -> residual (granite: times residual_scale); norm ->
feed-forward: SwiGLU down(silu(gate(x)) * up(x)), gemma's GeGLU with GELU's
tanh approximation, or starcoder2's down(gelu(up(x) + b) ) + b -> residual;
final norm; classifier (output.weight, or the token embedding when tied;
granite: divided by logit_scale). Everything in float64.

With --q8-act the input of every product with a Q8_0 matrix is first
quantized as the Q8_0 dot product defines it (llama.cpp's vec_dot_type of
Q8_0 is Q8_0): blocks of 32 values, scale d = max|x| / 127 (float32, stored
as F16), quants round(x / d). That rounding is part of what a Q8_0 matmul
computes, in the engine as in llama.cpp, and it dominates the difference
from the exact product (about 1e-2 of the logits); with it modelled, what
remains is the engine's own float rounding.

Usage:
  reference_forward.py MODEL.gguf --compare DUMP [--rtol R] [--q8-act]
      DUMP is written by `quickfill run --dump-logits`: it holds the token ids
      and the engine's logits for every position (prefill rows, then decode
      rows). Recomputes them both as one prefill and token by token with a KV
      cache, prints per-row errors, exits 1 if any row is out of tolerance.
  reference_forward.py MODEL.gguf --perplexity TOKENS --ctx C
      TOKENS is written by `quickfill perplexity --dump-tokens`; prints the
      perplexity computed the way llama.cpp does (windows of C tokens, first
      replaced by BOS when the vocabulary adds BOS, second half scored).
  reference_forward.py MODEL.gguf --greedy N
      Generates N tokens greedily from BOS and prints the text (SentencePiece
      vocabularies), like llama2.c's run.c with temperature 0.
"""
import argparse
import struct
import sys

import numpy as np

from gguf_read import GGML_Q8_0, GGUFFile


def q8_0_round_trip(x):
    """x as a Q8_0 activation row holds it: per block of 32 values, quants
    round(x / d) (ties to even; a tie is measure-zero for float inputs) times
    d = max|x| / 127 rounded to F16; the quotient and 1/d in float32."""
    b = x.reshape(-1, 32).astype(np.float32)
    d = np.abs(b).max(axis=1, keepdims=True) / np.float32(127)
    inv = np.divide(np.float32(1), d, out=np.zeros_like(d), where=d != 0)
    return (np.rint(b * inv).astype(np.float64) * d.astype(np.float16).astype(np.float64)).reshape(x.shape)


class Model:
    def __init__(self, path, q8_act=False):
        f = GGUFFile(path)
        self.f = f
        self.q8_act = q8_act
        self.q8_mats = set()  # id() of the matrices stored as Q8_0
        a = f.arch()
        if a not in ("llama", "qwen2", "qwen3", "starcoder2", "gemma", "granite"):
            raise SystemExit(f"reference: unsupported architecture {a}")
        self.arch = a
        g = lambda k, d=None: f.get(f"{a}.{k}", d)
        self.n_embd = int(g("embedding_length"))
        self.n_layer = int(g("block_count"))
        self.n_head = int(g("attention.head_count"))
        self.n_head_kv = int(g("attention.head_count_kv", self.n_head))
        self.head_dim = int(g("attention.key_length", self.n_embd // self.n_head))
        self.n_rot = int(g("rope.dimension_count", self.head_dim))
        self.layer_norm = a == "starcoder2"
        self.eps = float(g("attention.layer_norm_epsilon" if self.layer_norm else "attention.layer_norm_rms_epsilon",
                           1e-5))
        self.base = float(g("rope.freq_base", 1e6 if a in ("qwen2", "qwen3") else 10000.0))
        scale = 1.0
        if g("rope.scaling.type") in ("linear", "yarn") and g("rope.scaling.factor"):
            scale = 1.0 / float(g("rope.scaling.factor"))
        self.pos_scale = scale
        self.yarn = g("rope.scaling.type") == "yarn"
        if self.yarn:  # ggml's YaRN: a ramp between the correction dims, cos/sin times mscale
            orig = float(g("rope.scaling.original_context_length", g("context_length", 2048)))
            fast, slow = float(g("rope.scaling.yarn_beta_fast", 32.0)), float(g("rope.scaling.yarn_beta_slow", 1.0))
            dim = lambda turns: self.n_rot * np.log(orig / (turns * 2 * np.pi)) / (2 * np.log(self.base))
            self.corr = (max(0.0, np.floor(dim(fast))), min(self.n_rot - 1.0, np.ceil(dim(slow))))
            self.ext = float(g("rope.scaling.yarn_ext_factor", 1.0))
        self.mscale = float(g("rope.scaling.attn_factor", g("rope.scaling.yarn_attn_factor", 1.0)))
        if self.yarn and self.ext != 0:
            self.mscale *= 1.0 + 0.1 * np.log(1.0 / scale)
        self.neox = a not in ("llama", "granite")
        granite = a == "granite"
        self.embd_scale = float(g("embedding_scale")) if granite else np.sqrt(self.n_embd) if a == "gemma" else 1.0
        self.res_scale = float(g("residual_scale")) if granite else 1.0
        self.kq_scale = float(g("attention.scale")) if granite else 1.0 / np.sqrt(self.head_dim)
        self.logit_scale = float(g("logit_scale")) if granite else 1.0
        self.gelu_act = a in ("starcoder2", "gemma")
        self.emb = self.matrix("token_embd.weight")  # (n_vocab, n_embd)
        self.out = self.matrix("output.weight") if f.has("output.weight") else self.emb
        self.out_norm = f.tensor("output_norm.weight")
        self.out_norm_b = f.tensor("output_norm.bias") if f.has("output_norm.bias") else None
        self.layers = []
        for l in range(self.n_layer):
            t = lambda n: self.matrix(f"blk.{l}.{n}")
            opt = lambda n: self.matrix(f"blk.{l}.{n}") if f.has(f"blk.{l}.{n}") else None
            self.layers.append(dict(
                attn_norm=t("attn_norm.weight"), attn_norm_b=opt("attn_norm.bias"), wq=t("attn_q.weight"),
                wk=t("attn_k.weight"), wv=t("attn_v.weight"), wo=t("attn_output.weight"), bo=opt("attn_output.bias"),
                bq=opt("attn_q.bias"), bk=opt("attn_k.bias"), bv=opt("attn_v.bias"),
                q_norm=opt("attn_q_norm.weight"), k_norm=opt("attn_k_norm.weight"),
                ffn_norm=t("ffn_norm.weight"), ffn_norm_b=opt("ffn_norm.bias"), gate=opt("ffn_gate.weight"),
                up=t("ffn_up.weight"), up_b=opt("ffn_up.bias"), down=t("ffn_down.weight"),
                down_b=opt("ffn_down.bias")))
        self.n_vocab = self.emb.shape[0]

    def matrix(self, name):
        m = self.f.tensor(name)
        if self.f.tensors[name][0] == GGML_Q8_0:
            self.q8_mats.add(id(m))
        return m

    def mm(self, x, w):
        """x @ w.T; with --q8-act, x rounded as a Q8_0 activation first when w is Q8_0."""
        if self.q8_act and id(w) in self.q8_mats:
            x = q8_0_round_trip(x)
        return x @ w.T

    def rms_norm(self, x, w):
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.eps) * w

    def norm(self, x, w, b):
        if not self.layer_norm:
            return self.rms_norm(x, w)
        c = x - x.mean(axis=-1, keepdims=True)
        y = c / np.sqrt(np.mean(c * c, axis=-1, keepdims=True) + self.eps) * w
        return y if b is None else y + b

    @staticmethod
    def gelu(x):
        return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))

    def rope(self, x, positions):
        """x: (T, heads, head_dim); rotates the first n_rot dims of each head."""
        half = self.n_rot // 2
        inv = self.base ** (-2.0 * np.arange(half) / self.n_rot)
        if self.yarn:
            extrap = positions[:, None] * inv[None, :]
            ramp = 1.0 - np.clip((np.arange(half) - self.corr[0]) / max(0.001, self.corr[1] - self.corr[0]), 0, 1)
            mix = ramp * self.ext
            ang = extrap * self.pos_scale * (1 - mix) + extrap * mix
        else:
            ang = (positions[:, None] * self.pos_scale) * inv[None, :]  # (T, half)
        cos, sin = np.cos(ang)[:, None, :] * self.mscale, np.sin(ang)[:, None, :] * self.mscale
        y = x.copy()
        if self.neox:
            a, b = x[..., :half], x[..., half:2 * half]
            y[..., :half] = a * cos - b * sin
            y[..., half:2 * half] = a * sin + b * cos
        else:
            a, b = x[..., 0:2 * half:2], x[..., 1:2 * half:2]
            y[..., 0:2 * half:2] = a * cos - b * sin
            y[..., 1:2 * half:2] = a * sin + b * cos
        return y

    def new_cache(self):
        return [dict(k=np.zeros((0, self.n_head_kv, self.head_dim)),
                     v=np.zeros((0, self.n_head_kv, self.head_dim))) for _ in range(self.n_layer)]

    def forward(self, tokens, cache):
        """Evaluates `tokens` after what `cache` holds; returns logits (T, n_vocab)."""
        T = len(tokens)
        p0 = cache[0]["k"].shape[0]
        pos = np.arange(p0, p0 + T, dtype=np.float64)
        x = self.emb[np.asarray(tokens)] * self.embd_scale
        group = self.n_head // self.n_head_kv
        for L, c in zip(self.layers, cache):
            h = self.norm(x, L["attn_norm"], L["attn_norm_b"])
            q, k, v = self.mm(h, L["wq"]), self.mm(h, L["wk"]), self.mm(h, L["wv"])
            if L["bq"] is not None:
                q, k, v = q + L["bq"], k + L["bk"], v + L["bv"]
            q = q.reshape(T, self.n_head, self.head_dim)
            k = k.reshape(T, self.n_head_kv, self.head_dim)
            if L["q_norm"] is not None:  # per-head RMSNorm
                q, k = self.rms_norm(q, L["q_norm"]), self.rms_norm(k, L["k_norm"])
            q = self.rope(q, pos)
            k = self.rope(k, pos)
            v = v.reshape(T, self.n_head_kv, self.head_dim)
            c["k"] = np.concatenate([c["k"], k])
            c["v"] = np.concatenate([c["v"], v])
            S = c["k"].shape[0]
            att_out = np.zeros((T, self.n_head, self.head_dim))
            mask = np.arange(S)[None, :] > (p0 + np.arange(T))[:, None]  # (T, S) future keys
            for hh in range(self.n_head):
                kv = hh // group
                s = q[:, hh, :] @ c["k"][:, kv, :].T * self.kq_scale
                s = np.where(mask, -np.inf, s)
                s = np.exp(s - s.max(axis=1, keepdims=True))
                s /= s.sum(axis=1, keepdims=True)
                att_out[:, hh, :] = s @ c["v"][:, kv, :]
            o = self.mm(att_out.reshape(T, -1), L["wo"])
            if L["bo"] is not None:
                o = o + L["bo"]
            x = x + o * self.res_scale
            h = self.norm(x, L["ffn_norm"], L["ffn_norm_b"])
            u = self.mm(h, L["up"])
            if L["up_b"] is not None:
                u = u + L["up_b"]
            if L["gate"] is None:
                a = self.gelu(u)
            else:
                g = self.mm(h, L["gate"])
                a = (self.gelu(g) if self.gelu_act else g / (1.0 + np.exp(-g))) * u
            d = self.mm(a, L["down"])
            if L["down_b"] is not None:
                d = d + L["down_b"]
            x = x + d * self.res_scale
        return self.mm(self.norm(x, self.out_norm, self.out_norm_b), self.out) / self.logit_scale


def read_dump(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"QFLOGIT1":
        raise SystemExit(f"{path}: not a logits dump")
    n_rows, n_vocab, n_prompt = struct.unpack("<iii", data[8:20])
    off = 20
    tokens = np.frombuffer(data, dtype="<i4", count=n_rows, offset=off)
    off += 4 * n_rows
    logits = np.frombuffer(data, dtype="<f4", count=n_rows * n_vocab, offset=off).reshape(n_rows, n_vocab)
    return tokens.tolist(), logits.astype(np.float64), n_prompt


def compare(model, dump, rtol):
    tokens, got, n_prompt = read_dump(dump)
    if got.shape[1] != model.n_vocab:
        raise SystemExit(f"dump has {got.shape[1]} logits per row, model vocabulary is {model.n_vocab}")
    if n_prompt < 2 or len(tokens) - n_prompt < 1:
        print(f"FAIL: the dump needs >= 2 prefill rows and >= 1 decode row (has {n_prompt}, {len(tokens) - n_prompt})")
        return 1
    ref_prefill = model.forward(tokens, model.new_cache())
    cache = model.new_cache()
    ref_decode = np.concatenate([model.forward([t], cache) for t in tokens])
    self_err = np.abs(ref_prefill - ref_decode).max()
    print(f"reference prefill vs token-by-token: max |diff| {self_err:.3e}")
    worst, bad = 0.0, 0
    for i, (g, r) in enumerate(zip(got, ref_prefill)):
        scale = np.abs(r).max()
        err = np.abs(g - r).max() / scale
        worst = max(worst, err)
        argmax_ok = int(np.argmax(g)) == int(np.argmax(r))
        kind = "prefill" if i < n_prompt else "decode"
        ok = err <= rtol
        bad += 0 if ok else 1
        print(f"pos {i:3d} {kind:7s} token {tokens[i]:6d} max|ref| {scale:8.4f} "
              f"max rel err {err:.3e} argmax {'same' if argmax_ok else 'DIFFERENT'}{'' if ok else '  FAIL'}")
    print(f"rows {len(tokens)} (prefill {n_prompt}, decode {len(tokens) - n_prompt}), "
          f"worst relative error {worst:.3e}, tolerance {rtol:g}")
    if self_err > 1e-9 * max(1.0, np.abs(ref_prefill).max()):
        print("FAIL: the reference's own prefill and decode disagree")
        return 1
    return 0 if bad == 0 else 1


def spm_piece(tokens, types, tid, prev):
    t = tokens[tid]
    if types[tid] == 6 and len(t) == 6 and t.startswith("<0x"):
        return bytes([int(t[3:5], 16)])
    if types[tid] in (2, 3):
        return b""
    s = t.replace("\u2581", " ")
    if prev == 1 and s.startswith(" "):
        s = s[1:]
    return s.encode("utf-8", errors="surrogateescape")


def greedy(model, n):
    f = model.f
    tokens, types = f.get("tokenizer.ggml.tokens"), f.get("tokenizer.ggml.token_type")
    bos = int(f.get("tokenizer.ggml.bos_token_id", 1))
    cache = model.new_cache()
    tok, out = bos, b""
    for _ in range(n):
        nxt = int(np.argmax(model.forward([tok], cache)[0]))
        if nxt == bos:
            break
        out += spm_piece(tokens, types, nxt, tok)
        tok = nxt
    sys.stdout.buffer.write(out)
    sys.stdout.buffer.flush()
    return 0


def perplexity(model, tokens_path, n_ctx):
    tokens = np.fromfile(tokens_path, dtype="<i4").tolist()
    f = model.f
    add_bos = bool(f.get("tokenizer.ggml.add_bos_token", False)) and "tokenizer.ggml.bos_token_id" in f.meta
    bos = int(f.get("tokenizer.ggml.bos_token_id", -1))
    n_chunks, first = len(tokens) // n_ctx, n_ctx // 2
    if n_chunks < 1:
        raise SystemExit("fewer tokens than one window")
    nll, count = 0.0, 0
    for c in range(n_chunks):
        w = tokens[c * n_ctx:(c + 1) * n_ctx]
        if add_bos:
            w[0] = bos
        logits = model.forward(w, model.new_cache())
        for j in range(first, n_ctx - 1):
            row = logits[j]
            mx = row.max()
            nll += mx + np.log(np.exp(row - mx).sum()) - row[w[j + 1]]
            count += 1
    print(f"{np.exp(nll / count):.6f}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--compare", metavar="DUMP")
    ap.add_argument("--rtol", type=float, default=1e-2,
                    help="max |engine - reference| per row, relative to the row's max |reference|")
    ap.add_argument("--q8-act", action="store_true",
                    help="quantize the input of each product with a Q8_0 matrix as the Q8_0 dot product does")
    ap.add_argument("--greedy", type=int, metavar="N")
    ap.add_argument("--perplexity", metavar="TOKENS")
    ap.add_argument("--ctx", type=int, default=512)
    args = ap.parse_args()
    model = Model(args.model, q8_act=args.q8_act)
    if args.compare:
        return compare(model, args.compare, args.rtol)
    if args.perplexity:
        return perplexity(model, args.perplexity, args.ctx)
    if args.greedy:
        return greedy(model, args.greedy)
    ap.error("nothing to do: give --compare DUMP, --perplexity TOKENS or --greedy N")


if __name__ == "__main__":
    sys.exit(main())
