#!/usr/bin/env python3
"""Evaluate a GGUF (or checkpoint) of the tiny code model on held-out files.

Design: three measurements on files the model never saw (eval.jsonl, whole files held out):
  * single-line infill: a non-blank line is chosen per file position (fixed seed); the cursor
    sits after the line's indentation; the model sees prefix (up to 320 tokens) and suffix
    (up to 128 tokens) in the PSM layout and greedily writes the middle until a newline or
    </s>. Exact match (after stripping trailing whitespace) and edit similarity
    (1 - Levenshtein / max length) against the true rest of the line.
  * the same prompts in the split-prefix layout (the indentation after <fim_middle>).
  * perplexity of plain left-to-right text (BOS + chunks of the context length), also as
    bits per byte, which does not depend on the tokenizer.
Baselines: an empty completion, and repeating the previous non-blank line's text.
Prints a JSON summary (and writes it with --json).
"""
import argparse
import json
import math
import os
import random
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_gguf import load_checkpoint, load_model  # noqa: E402
from fim_data import Tok, load_files  # noqa: E402
from model import greedy  # noqa: E402


def levenshtein(a, b):
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def edit_sim(a, b):
    if not a and not b:
        return 1.0
    return 1.0 - levenshtein(a, b) / max(len(a), len(b))


def infill_cases(files, n, seed):
    rng = random.Random(seed)
    cases = []
    per_file = max(1, n // max(1, len(files)) + 1)
    for f in files:
        text = f["text"]
        lines = text.split("\n")
        cand = [i for i, l in enumerate(lines) if len(l.strip()) >= 4 and i > 0]
        for i in rng.sample(cand, min(per_file, len(cand))):
            line = lines[i]
            indent = len(line) - len(line.lstrip())
            start = sum(len(l) + 1 for l in lines[:i]) + indent
            prev = next((l.strip() for l in reversed(lines[:i]) if l.strip()), "")
            cases.append({"lang": f["lang"], "prefix": text[:start], "middle": line[indent:],
                          "suffix": text[start + len(line) - indent:], "prev": prev})
    rng.shuffle(cases)
    return cases[:n]


def fim_prompt(tok, prefix, suffix, layout, n_pre=320, n_suf=128):
    if layout == "split":
        cut = prefix.rfind("\n") + 1
        p1, p2 = prefix[:cut], prefix[cut:]
    else:
        p1, p2 = prefix, ""
    a, b, s = tok.enc(p1)[-n_pre:], tok.enc(p2), tok.enc(suffix)[:n_suf]
    return [tok.bos, tok.pre] + a + [tok.suf] + s + [tok.mid] + b


def run_infill(model, tok, cases, layout, max_new=40):
    nl = "\n"
    em = es = 0.0
    by_lang = {}
    for c in cases:
        ids = fim_prompt(tok, c["prefix"], c["suffix"], layout)
        out = greedy(model, ids, max_new, stop_ids=(tok.eos,), stop_fn=lambda o: nl in tok.dec(o))
        if out and out[-1] == tok.eos:
            out = out[:-1]
        pred = tok.dec(out).split(nl)[0].rstrip()
        e, s = float(pred == c["middle"].rstrip()), edit_sim(pred, c["middle"].rstrip())
        em += e
        es += s
        d = by_lang.setdefault(c["lang"], [0, 0.0, 0.0])
        d[0] += 1
        d[1] += e
        d[2] += s
    n = max(1, len(cases))
    return {"exact_match": em / n, "edit_similarity": es / n,
            "by_lang": {k: {"n": v[0], "exact_match": v[1] / v[0], "edit_similarity": v[2] / v[0]} for k, v in by_lang.items()}}


def baselines(cases):
    out = {}
    for name, fn in (("empty", lambda c: ""), ("previous_line", lambda c: c["prev"])):
        em = sum(float(fn(c) == c["middle"].rstrip()) for c in cases) / max(1, len(cases))
        es = sum(edit_sim(fn(c), c["middle"].rstrip()) for c in cases) / max(1, len(cases))
        out[name] = {"exact_match": em, "edit_similarity": es}
    return out


@torch.no_grad()
def perplexity(model, tok, files, max_tokens):
    ctx = model.cfg.ctx
    nll, n_tok, n_bytes = 0.0, 0, 0
    for f in files:
        ids = tok.enc(f["text"])
        for i in range(0, len(ids), ctx - 1):
            chunk = [tok.bos] + ids[i:i + ctx - 1]
            x = torch.tensor([chunk])
            logits = model(x)[0, :-1]
            l = torch.nn.functional.cross_entropy(logits, x[0, 1:], reduction="sum").item()
            nll += l
            n_tok += len(chunk) - 1
            n_bytes += len(tok.dec(chunk[1:]).encode())
            if n_tok >= max_tokens:
                break
        if n_tok >= max_tokens:
            break
    return {"tokens": n_tok, "bytes": n_bytes, "perplexity": math.exp(nll / n_tok),
            "bits_per_byte": nll / math.log(2) / n_bytes, "bytes_per_token": n_bytes / n_tok}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    work = os.path.join(here, "work")
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, help="a .gguf, or a training checkpoint .pt")
    ap.add_argument("--tokenizer", default=os.path.join(work, "tok.model"))
    ap.add_argument("--eval", default=os.path.join(work, "eval.jsonl"))
    ap.add_argument("--n-infill", type=int, default=200)
    ap.add_argument("--ppl-tokens", type=int, default=40000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model = (load_model(args.model) if args.model.endswith(".gguf") else load_checkpoint(args.model))[0]
    tok = Tok(args.tokenizer)
    files = load_files(args.eval)
    cases = infill_cases(files, args.n_infill, args.seed)
    t0 = time.time()
    res = {"model": os.path.basename(args.model), "eval_files": len(files), "infill_cases": len(cases),
           "baselines": baselines(cases)}
    res["infill_psm"] = run_infill(model, tok, cases, "psm")
    res["infill_split"] = run_infill(model, tok, cases, "split")
    res["left_to_right"] = perplexity(model, tok, files, args.ppl_tokens)
    res["seconds"] = time.time() - t0
    print(json.dumps(res, indent=1))
    if args.json:
        json.dump(res, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
