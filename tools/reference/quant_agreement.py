#!/usr/bin/python3
"""How far a quantized file's output moves from its F32 original, in
quickfill and in llama.cpp, on the same two files.

Two measures:
  teacher-forced  the prompt file's tokens (as quickfill tokenizes them) are
                  evaluated by each engine with each file (quickfill: `run
                  --dump-logits`; llama.cpp: llama_logits, see
                  llama_logits.cpp); per engine, the share of positions whose
                  top token is the same with both files and the mean
                  KL(F32 || quantized) of the next-token distributions. The
                  same tokens for every run: no chaos, a few hundred
                  positions measure it.
  greedy          --prompts N: N two-line prompts drawn (seeded) from the
                  repository's inference/ sources; per engine, the sum over
                  prompts of the common prefix (bytes) of the greedy text
                  from each file (quickfill run / llama-completion, temp 0,
                  one thread). Once one token differs the texts part, so
                  this is chaotic: five prompts can differ by 2x either way.

Usage:
  quant_agreement.py F32.gguf QUANT.gguf --prompt-file FILE [--prompts N] [--tokens T]
      [--quickfill PATH] [--device cpu|cuda] [--llama-logits PATH] [--llama-completion PATH]
"""
import argparse
import glob
import os
import random
import struct
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read_logits(path):
    with open(path, "rb") as f:
        data = f.read()
    n_rows, n_vocab, _ = struct.unpack("<iii", data[8:20])
    return np.frombuffer(data, dtype="<f4", count=n_rows * n_vocab, offset=20 + 4 * n_rows).reshape(
        n_rows, n_vocab).astype(np.float64)


def log_softmax(x):
    x = x - x.max(axis=1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=1, keepdims=True))


def teacher_forced(args, tmp):
    rows = {}
    for tag, model in (("f32", args.f32), ("quant", args.quant)):
        qf = os.path.join(tmp, f"qf_{tag}.dump")
        subprocess.run([args.quickfill, "run", "-m", os.path.abspath(model), "-f", args.prompt_file, "-n", "1",
                        "--temp", "0", "--ignore-eos", "-t", "1", "--device", args.device, "--dump-logits", qf],
                       check=True, capture_output=True)
        rows[("quickfill", tag)] = read_logits(qf)
        if args.llama_logits:
            src = os.path.join(tmp, "qf_f32.dump")  # the same token ids for both files
            ll = os.path.join(tmp, f"ll_{tag}.dump")
            subprocess.run([args.llama_logits, model, src, ll], check=True, capture_output=True)
            rows[("llama.cpp", tag)] = read_logits(ll)
    for engine in ("quickfill", "llama.cpp"):
        if (engine, "f32") not in rows:
            continue
        a, b = rows[(engine, "f32")], rows[(engine, "quant")]
        n = min(len(a), len(b))
        a, b = a[:n], b[:n]
        top = np.mean(np.argmax(a, axis=1) == np.argmax(b, axis=1))
        la, lb = log_softmax(a), log_softmax(b)
        kl = np.mean((np.exp(la) * (la - lb)).sum(axis=1))
        print(f"teacher-forced {engine:9s}: {n} positions, same top token {top:.3f}, "
              f"mean KL(F32 || quantized) {kl:.3e}")


def common_prefix(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def greedy(args):
    rng = random.Random(5)
    files = sorted(glob.glob(os.path.join(ROOT, "inference", "**", "*.cpp"), recursive=True))
    prompts = []
    for path in rng.sample(files, min(args.prompts, len(files))):
        lines = open(path, encoding="utf-8").read().splitlines()
        i = rng.randrange(0, max(1, len(lines) - 3))
        prompts.append("\n".join(lines[i:i + 2])[:80] or "x")
    n = str(args.tokens)
    engines = {"quickfill": lambda m, p: [args.quickfill, "run", "-m", os.path.abspath(m), "-p", p, "-n", n,
                                          "--temp", "0", "-t", "1", "--ignore-eos", "--device", args.device]}
    if args.llama_completion:
        engines["llama.cpp"] = lambda m, p: [args.llama_completion, "-m", m, "-p", p, "-n", n, "--temp", "0",
                                             "--no-display-prompt", "-no-cnv", "--ignore-eos", "-t", "1"]
    for engine, cmd in engines.items():
        total = kept = 0
        for p in prompts:
            a = subprocess.run(cmd(args.f32, p), capture_output=True, check=True).stdout
            b = subprocess.run(cmd(args.quant, p), capture_output=True, check=True).stdout
            total += len(a)
            kept += common_prefix(a, b)
        print(f"greedy {engine:9s}: {len(prompts)} prompts x {n} tokens, common prefix {kept} of {total} bytes")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("f32")
    ap.add_argument("quant")
    ap.add_argument("--prompt-file", required=True, help="text evaluated teacher-forced (must fit the context)")
    ap.add_argument("--prompts", type=int, default=0, help="greedy prompts (0: no greedy measure)")
    ap.add_argument("--tokens", type=int, default=128, help="greedy tokens per prompt")
    ap.add_argument("--quickfill", default=os.path.join(ROOT, "build", "server", "quickfill"))
    ap.add_argument("--device", default="cpu", help="quickfill's device: cpu (default), cuda or auto")
    ap.add_argument("--llama-logits", help="llama_logits built from llama_logits.cpp (omit: quickfill only)")
    ap.add_argument("--llama-completion", help="llama.cpp's llama-completion, for the greedy measure")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        teacher_forced(args, tmp)
    if args.prompts > 0:
        greedy(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
