#!/usr/bin/env python3
"""Export a training checkpoint to a GGUF `llama` model (F32, or Q8_0 as a fallback to the
engine's own quantizer), and load a GGUF back into the PyTorch model.

Design: metadata follows llama.cpp's conventions (llama.* hyper-parameters, a SentencePiece
vocabulary as tokenizer.ggml.model = "llama" with tokens / scores / token types, special and
FIM token ids). Tensors keep the torch [out, in] layout, which GGUF lists as ne = (in, out).
Q8_0 applies to 2-D weight matrices only; norms stay F32. The training RoPE is already the
adjacent-pair ("norm") form, so q/k need no permutation. `load_model` turns a GGUF back into
a `model.Llama` with exactly the (de-quantised) weights the file holds: the reference the
golden test and the evaluation use.
"""
import argparse
import os
import sys

import numpy as np
import sentencepiece as spm
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_io as G  # noqa: E402
from fim_data import FIM_NAMES  # noqa: E402
from model import Config, Llama  # noqa: E402

FILE_TYPE = {"f32": 0, "q8_0": 7}   # llama_ftype: ALL_F32, MOSTLY_Q8_0


def tensor_map(model):
    """(gguf name, tensor) in file order."""
    out = [("token_embd.weight", model.tok.weight)]
    for i, b in enumerate(model.blocks):
        p = f"blk.{i}."
        out += [(p + "attn_norm.weight", b.attn_norm.weight), (p + "attn_q.weight", b.wq.weight),
                (p + "attn_k.weight", b.wk.weight), (p + "attn_v.weight", b.wv.weight),
                (p + "attn_output.weight", b.wo.weight), (p + "ffn_norm.weight", b.ffn_norm.weight),
                (p + "ffn_gate.weight", b.w_gate.weight), (p + "ffn_up.weight", b.w_up.weight),
                (p + "ffn_down.weight", b.w_down.weight)]
    out.append(("output_norm.weight", model.norm.weight))
    if model.out is not None:
        out.append(("output.weight", model.out.weight))
    return out


def add_tokenizer(w, sp_path):
    sp = spm.SentencePieceProcessor(model_file=sp_path)
    n = sp.get_piece_size()
    tokens, scores, types = [], [], []
    for i in range(n):
        tokens.append(sp.id_to_piece(i))
        scores.append(float(sp.get_score(i)))
        if sp.is_unknown(i):
            types.append(2)
        elif sp.is_control(i):
            types.append(3)
        elif sp.is_byte(i):
            types.append(6)
        else:
            types.append(1)
    ids = {name: sp.piece_to_id(name) for name in FIM_NAMES}
    w.add("tokenizer.ggml.model", G.STRING, "llama")
    w.add("tokenizer.ggml.tokens", G.ARRAY, tokens, G.STRING)
    w.add("tokenizer.ggml.scores", G.ARRAY, scores, G.F32)
    w.add("tokenizer.ggml.token_type", G.ARRAY, types, G.I32)
    w.add("tokenizer.ggml.bos_token_id", G.U32, sp.bos_id())
    w.add("tokenizer.ggml.eos_token_id", G.U32, sp.eos_id())
    w.add("tokenizer.ggml.eot_token_id", G.U32, sp.eos_id())
    w.add("tokenizer.ggml.unknown_token_id", G.U32, sp.unk_id())
    w.add("tokenizer.ggml.fim_pre_token_id", G.U32, ids["<fim_prefix>"])
    w.add("tokenizer.ggml.fim_suf_token_id", G.U32, ids["<fim_suffix>"])
    w.add("tokenizer.ggml.fim_mid_token_id", G.U32, ids["<fim_middle>"])
    w.add("tokenizer.ggml.fim_pad_token_id", G.U32, ids["<fim_pad>"])
    w.add("tokenizer.ggml.fim_rep_token_id", G.U32, ids["<repo_name>"])
    w.add("tokenizer.ggml.fim_sep_token_id", G.U32, ids["<file_sep>"])
    w.add("tokenizer.ggml.add_bos_token", G.BOOL, True)
    w.add("tokenizer.ggml.add_eos_token", G.BOOL, False)
    w.add("tokenizer.ggml.add_space_prefix", G.BOOL, False)


def export(model, cfg, sp_path, path, ftype="f32", name="quickfill-tiny-code", inputs=()):
    w = G.Writer()
    w.add("general.architecture", G.STRING, "llama")
    w.add("general.name", G.STRING, name)
    w.add("general.file_type", G.U32, FILE_TYPE[ftype])
    w.add("general.description", G.STRING,
          "Tiny fill-in-the-middle code model (Python, C/C++, JavaScript) trained by tools/train")
    w.add("llama.vocab_size", G.U32, cfg.vocab)
    w.add("llama.context_length", G.U32, cfg.ctx)
    w.add("llama.embedding_length", G.U32, cfg.dim)
    w.add("llama.block_count", G.U32, cfg.n_layer)
    w.add("llama.feed_forward_length", G.U32, cfg.ffn)
    w.add("llama.attention.head_count", G.U32, cfg.n_head)
    w.add("llama.attention.head_count_kv", G.U32, cfg.n_head_kv)
    w.add("llama.attention.layer_norm_rms_epsilon", G.F32, cfg.rms_eps)
    w.add("llama.rope.freq_base", G.F32, cfg.rope_base)
    w.add("llama.rope.dimension_count", G.U32, cfg.head_dim)
    add_tokenizer(w, sp_path)
    if ftype != "f32":
        w.add("general.quantization_version", G.U32, 2)
    for tname, t in tensor_map(model):
        a = t.detach().cpu().float().numpy()
        tt = G.T_Q8_0 if (ftype == "q8_0" and a.ndim == 2) else G.T_F32
        w.add_tensor(tname, a, tt)
    w.write(path, inputs=[sp_path, *inputs])


def load_checkpoint(path):
    ck = torch.load(path, map_location="cpu")
    cfg = Config(**ck["cfg"])
    model = Llama(cfg)
    model.load_state_dict(ck["model"])
    model.eval()
    return model, cfg, ck


def load_model(path):
    """A PyTorch model holding exactly the GGUF's weights (Q8_0 de-quantised)."""
    r = G.Reader(path)
    m = r.meta
    cfg = Config(vocab=len(m["tokenizer.ggml.tokens"]), dim=m["llama.embedding_length"],
                 n_layer=m["llama.block_count"], n_head=m["llama.attention.head_count"],
                 n_head_kv=m["llama.attention.head_count_kv"], ffn=m["llama.feed_forward_length"],
                 ctx=m["llama.context_length"], rms_eps=m["llama.attention.layer_norm_rms_epsilon"],
                 rope_base=m["llama.rope.freq_base"], tied=not any(n == "output.weight" for n, *_ in r.infos))
    model = Llama(cfg)
    with torch.no_grad():
        for tname, t in tensor_map(model):
            t.copy_(torch.from_numpy(r.tensor(tname)))
    model.eval()
    return model, cfg, r


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default=os.path.join(here, "work", "ckpt.pt"))
    ap.add_argument("--tokenizer", default=None, help="default: the checkpoint's")
    ap.add_argument("--out", required=True)
    ap.add_argument("--type", default="f32", choices=list(FILE_TYPE))
    args = ap.parse_args()
    model, cfg, ck = load_checkpoint(args.ckpt)
    export(model, cfg, args.tokenizer or ck["tokenizer"], args.out, args.type, inputs=[args.ckpt])
    print(f"wrote {args.out} ({os.path.getsize(args.out)/1e6:.2f} MB, {args.type}, step {ck['step']})")


if __name__ == "__main__":
    main()
