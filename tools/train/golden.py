#!/usr/bin/env python3
"""Write the golden file that tests/models compares the engine against.

Design: the reference is the PyTorch model holding exactly the weights of the shipped GGUF
(Q8_0 matrices de-quantised to float32, computed in float32). For a few FIM prompts in
Python, C++ and JavaScript it records the SentencePiece token ids of each prompt part (so
the engine's tokenizer is checked too), the full prompt, the greedy continuation (argmax,
lowest id on ties, stopping after </s>) and the ten largest logits at the last prompt
position. The engine run on an F32 copy of the shipped weights must reproduce the tokens
exactly; on the Q8_0 file itself (whose matmuls also quantise activations) the test checks
a documented looser bound. The SHA-256 of the GGUF ties the golden file to it.
"""
import argparse
import hashlib
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_gguf import load_model  # noqa: E402
from fim_data import Tok  # noqa: E402
from model import greedy  # noqa: E402

CASES = [
    ("python_def", "psm", "import os\n\n\ndef read_lines(path):\n    with open(path) as f:\n        return ",
     "\n\n\ndef main():\n    for line in read_lines(os.sys.argv[1]):\n        print(line)\n"),
    ("python_loop", "split", "def total(items):\n    result = 0\n    for item in items:\n        ",
     "\n    return result\n"),
    ("cpp_loop", "psm", "#include <vector>\n\nint sum(const std::vector<int>& v) {\n  int s = 0;\n  for (",
     "\n  return s;\n}\n"),
    ("js_function", "spm", "function add(a, b) {\n  return ", ";\n}\n\nmodule.exports = { add };\n"),
    ("python_class", "psm", "class Point:\n    def __init__(self, x, y):\n        self.x = x\n        ",
     "\n\n    def norm(self):\n        return (self.x ** 2 + self.y ** 2) ** 0.5\n"),
]


def build_prompt(tok, layout, prefix, suffix):
    if layout == "split":
        cut = prefix.rfind("\n") + 1
        p1, p2 = prefix[:cut], prefix[cut:]
    else:
        p1, p2 = prefix, ""
    a, b, s = tok.enc(p1), tok.enc(p2), tok.enc(suffix)
    if layout == "spm":
        prompt = [tok.bos, tok.suf] + s + [tok.pre] + a + [tok.mid]
    else:
        prompt = [tok.bos, tok.pre] + a + [tok.suf] + s + [tok.mid] + b
    return prompt, {"prefix_ids": a, "prefix_line_ids": b, "suffix_ids": s,
                    "prefix_text": p1, "prefix_line_text": p2, "suffix_text": suffix}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.abspath(os.path.join(here, "..", ".."))
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(root, "models", "quickfill-tiny-code.gguf"))
    ap.add_argument("--tokenizer", default=os.path.join(here, "work", "tok.model"))
    ap.add_argument("--out", default=os.path.join(root, "models", "quickfill-tiny-code.golden.json"))
    ap.add_argument("--n-predict", type=int, default=24)
    args = ap.parse_args()
    torch.set_num_threads(1)
    model, cfg, reader = load_model(args.model)
    tok = Tok(args.tokenizer)
    assert reader.meta["tokenizer.ggml.tokens"] == [tok.sp.id_to_piece(i) for i in range(tok.n_vocab)], \
        "tokenizer does not match the GGUF vocabulary"
    cases = []
    for name, layout, prefix, suffix in CASES:
        prompt, parts = build_prompt(tok, layout, prefix, suffix)
        with torch.no_grad():
            last = model(torch.tensor([prompt]))[0, -1]
        top = torch.topk(last, 10)
        out = greedy(model, prompt, args.n_predict, stop_ids=(tok.eos,))
        ref = greedy(model, prompt, args.n_predict, stop_ids=(tok.eos,), cached=False)
        assert out == ref, "cached and uncached greedy disagree"
        # margin between best and second-best logit at each generated step: small margins are
        # where a float32 engine could legitimately differ; the test reports them
        margins = []
        ids = list(prompt)
        with torch.no_grad():
            for t in out:
                lg = model(torch.tensor([ids]))[0, -1]
                v = torch.topk(lg, 2).values
                margins.append(round(float(v[0] - v[1]), 5))
                ids.append(t)
        cases.append({"name": name, "layout": layout, **parts, "prompt": prompt, "expected": out,
                      "expected_text": tok.dec([t for t in out if t != tok.eos]),
                      "top_margins": margins,
                      "last_logits_top": [[int(i), float(v)] for v, i in zip(top.values, top.indices)]})
        print(name, layout, repr(tok.dec(out)), "min margin", min(margins) if margins else None)
    sha = hashlib.sha256(open(args.model, "rb").read()).hexdigest()
    doc = {"model": os.path.basename(args.model), "sha256": sha,
           "reference": "PyTorch float32 forward on the GGUF's weights (Q8_0 de-quantised), greedy argmax",
           "n_predict": args.n_predict, "bos": tok.bos, "eos": tok.eos, "cases": cases}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
