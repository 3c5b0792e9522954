"""A small llama-architecture decoder in PyTorch, written to match the GGUF `llama` graph.

Design: exactly the computation llama.cpp's LLM_ARCH_LLAMA performs, so that the exported
weights need no permutation: RMSNorm (x * rsqrt(mean(x^2) + eps) * w), rotary embedding in
the "norm" convention (rotated pairs are adjacent elements (2i, 2i+1) of each head, angle
pos * base^(-2i/head_dim)), grouped-query attention where query head h reads KV head
h // (n_head / n_head_kv), SwiGLU FFN down(silu(gate(x)) * up(x)), tied or untied output.
Linear weights are [out, in] (torch); the GGUF writer lists their dims as (in, out).
"""
import math
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    vocab: int = 4096
    dim: int = 256
    n_layer: int = 6
    n_head: int = 8
    n_head_kv: int = 4
    ffn: int = 704
    ctx: int = 512
    rms_eps: float = 1e-5
    rope_base: float = 10000.0
    tied: bool = True

    @property
    def head_dim(self):
        return self.dim // self.n_head

    def to_dict(self):
        return asdict(self)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(cfg, n, device):
    hd = cfg.head_dim
    inv = cfg.rope_base ** (-torch.arange(0, hd, 2, dtype=torch.float64, device=device) / hd)
    ang = torch.arange(n, dtype=torch.float64, device=device)[:, None] * inv[None, :]   # [n, hd/2]
    return torch.polar(torch.ones_like(ang), ang).to(torch.complex64)


def apply_rope(x, rot):
    # x: [B, H, T, hd]; pairs (2i, 2i+1) as complex numbers, multiplied by rot[t, i] = e^(i*angle)
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2).contiguous())
    return torch.view_as_real(xc * rot).flatten(-2)


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        hd = cfg.head_dim
        self.attn_norm = RMSNorm(cfg.dim, cfg.rms_eps)
        self.wq = nn.Linear(cfg.dim, cfg.n_head * hd, bias=False)
        self.wk = nn.Linear(cfg.dim, cfg.n_head_kv * hd, bias=False)
        self.wv = nn.Linear(cfg.dim, cfg.n_head_kv * hd, bias=False)
        self.wo = nn.Linear(cfg.n_head * hd, cfg.dim, bias=False)
        self.ffn_norm = RMSNorm(cfg.dim, cfg.rms_eps)
        self.w_gate = nn.Linear(cfg.dim, cfg.ffn, bias=False)
        self.w_up = nn.Linear(cfg.dim, cfg.ffn, bias=False)
        self.w_down = nn.Linear(cfg.ffn, cfg.dim, bias=False)

    def forward(self, x, rot, mask, cache=None):
        cfg = self.cfg
        B, T, _ = x.shape
        hd = cfg.head_dim
        h = self.attn_norm(x)
        q = self.wq(h).view(B, T, cfg.n_head, hd).transpose(1, 2)
        k = self.wk(h).view(B, T, cfg.n_head_kv, hd).transpose(1, 2)
        v = self.wv(h).view(B, T, cfg.n_head_kv, hd).transpose(1, 2)
        q, k = apply_rope(q, rot), apply_rope(k, rot)
        if cache is not None:             # cache: dict holding this layer's roped K and V so far
            if "k" in cache:
                k = torch.cat((cache["k"], k), dim=2)
                v = torch.cat((cache["v"], v), dim=2)
            cache["k"], cache["v"] = k, v
        rep = cfg.n_head // cfg.n_head_kv
        if rep > 1:
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        att = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(hd)) + mask
        att = torch.softmax(att, dim=-1)
        o = (att @ v).transpose(1, 2).reshape(B, T, cfg.n_head * hd)
        x = x + self.wo(o)
        h = self.ffn_norm(x)
        return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h))


class Llama(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab, cfg.dim)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.norm = RMSNorm(cfg.dim, cfg.rms_eps)
        self.out = None if cfg.tied else nn.Linear(cfg.dim, cfg.vocab, bias=False)
        self.apply(self._init)
        for b in self.blocks:   # scaled init of residual projections (GPT-2 style)
            nn.init.normal_(b.wo.weight, std=0.02 / math.sqrt(2 * cfg.n_layer))
            nn.init.normal_(b.w_down.weight, std=0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, idx, caches=None):
        """Logits for every position. With `caches` (one dict per layer, initially empty)
        the tokens are appended after those already cached (incremental decoding)."""
        B, T = idx.shape
        past = caches[0]["k"].shape[2] if caches and "k" in caches[0] else 0
        rot = rope_tables(self.cfg, past + T, idx.device)[past:]
        mask = torch.full((T, past + T), float("-inf"), device=idx.device).triu(past + 1)
        x = self.tok(idx)
        for i, b in enumerate(self.blocks):
            x = b(x, rot, mask, None if caches is None else caches[i])
        x = self.norm(x)
        w = self.tok.weight if self.out is None else self.out.weight
        return x @ w.t()

    def n_params(self):
        return sum(p.numel() for p in self.parameters())


@torch.no_grad()
def greedy(model, prompt, n_new, stop_ids=(), stop_fn=None, cached=True):
    """Greedy continuation (argmax, lowest id on ties) of `prompt`, at most n_new tokens and
    never past the training context. Stops after a token in stop_ids or when stop_fn(out)
    is true. cached=False recomputes the whole sequence each step (the simplest reference)."""
    ids = list(prompt)
    out = []
    caches = [dict() for _ in model.blocks] if cached else None
    step_in = ids
    for _ in range(n_new):
        if len(ids) >= model.cfg.ctx:
            break
        logits = model(torch.tensor([step_in if cached else ids]), caches)[0, -1]
        nxt = int(torch.argmax(logits).item())   # torch.argmax returns the first maximum
        out.append(nxt)
        ids.append(nxt)
        step_in = [nxt]
        if nxt in stop_ids or (stop_fn and stop_fn(out)):
            break
    return out
