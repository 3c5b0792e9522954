#!/usr/bin/env python3
"""Train the tiny llama FIM code model (CPU by default, `--device cuda` for a larger run).

Design: the learning-rate schedule (linear warm-up, cosine decay to 10 %) runs on
progress = max(step / max_steps, elapsed / time_budget), so a run on a contended machine
still anneals and stops on time. Checkpoints (model + optimiser + config + tokenizer path)
are written every few minutes and at the end; `--resume` continues one. Held-out loss is
measured on fixed sequences built from eval.jsonl with a fixed seed.
"""
import argparse
import json
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fim_data import SampleMaker, Tok, load_files  # noqa: E402
from model import Config, Llama  # noqa: E402

PRESETS = {
    # ~1.3 M parameters (0.5 M of them the tied embedding): 500-700 tokens/s on 2 shared cores
    "cpu": dict(dim=128, n_layer=4, n_head=4, n_head_kv=2, ffn=384, ctx=512),
    # ~30 M parameters: minutes on one datacenter GPU
    "cuda": dict(dim=512, n_layer=8, n_head=8, n_head_kv=4, ffn=1408, ctx=1024),
}


def batch(maker, files, weights, bsz, length):
    xs, ms = [], []
    for _ in range(bsz):
        ids, mask = maker.sequence(files, weights, length + 1)
        xs.append(ids)
        ms.append(mask)
    x = torch.tensor(xs)
    m = torch.tensor(ms, dtype=torch.float32)
    return x[:, :-1], x[:, 1:], m[:, 1:]


def loss_fn(model, x, y, m):
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16, enabled=x.device.type == "cuda"):
        logits = model(x)
    logits = logits.float()
    l = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="none")
    return (l * m.reshape(-1)).sum() / m.sum().clamp(min=1)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    work = os.path.join(here, "work")
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--preset", default=None, help="cpu | cuda (default: the device's)")
    ap.add_argument("--tokenizer", default=os.path.join(work, "tok.model"))
    ap.add_argument("--data", default=work)
    ap.add_argument("--out", default=os.path.join(work, "ckpt.pt"))
    ap.add_argument("--batch", type=int, default=None, help="sequences per step (default: 4 cpu, 64 cuda)")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--max-steps", type=int, default=100000)
    ap.add_argument("--time-budget-min", type=float, default=80)
    ap.add_argument("--fim-rate", type=float, default=0.9)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ckpt-every-min", type=float, default=5)
    ap.add_argument("--eval-every", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--measure", type=int, default=0, help="only time this many steps and exit")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    if args.batch is None:
        args.batch = 64 if args.device == "cuda" else 4
    torch.manual_seed(args.seed)
    tok = Tok(args.tokenizer)
    cfg = Config(vocab=tok.n_vocab, **PRESETS[args.preset or args.device])
    dev = torch.device(args.device)
    model = Llama(cfg).to(dev)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), eps=1e-8)
    step, elapsed_before = 0, 0.0
    if args.resume and os.path.exists(args.out):
        ck = torch.load(args.out, map_location=dev)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        step, elapsed_before = ck["step"], ck["elapsed"]
    print(f"params {model.n_params()/1e6:.2f}M cfg {cfg.to_dict()} args {vars(args)}", flush=True)

    train_files = load_files(os.path.join(args.data, "train.jsonl"))
    eval_files = load_files(os.path.join(args.data, "eval.jsonl"))
    weights = [len(f["text"]) for f in train_files]
    maker = SampleMaker(tok, fim_rate=args.fim_rate, seed=args.seed * 1000 + step)
    emaker = SampleMaker(tok, fim_rate=args.fim_rate, seed=99)
    eval_batches = [batch(emaker, eval_files, [len(f["text"]) for f in eval_files], args.batch, cfg.ctx)
                    for _ in range(4)]

    def evaluate():
        model.eval()
        with torch.no_grad():
            ls = [loss_fn(model, x.to(dev), y.to(dev), m.to(dev)).item() for x, y, m in eval_batches]
        model.train()
        return sum(ls) / len(ls)

    def save(final=False):
        ck = {"model": model.state_dict(), "opt": opt.state_dict(), "step": step,
              "elapsed": elapsed_before + time.time() - t0, "cfg": cfg.to_dict(),
              "tokenizer": os.path.abspath(args.tokenizer), "args": vars(args), "final": final}
        tmp = args.out + ".tmp"
        torch.save(ck, tmp)
        os.replace(tmp, args.out)

    budget = args.time_budget_min * 60
    t0 = time.time()
    last_ckpt = t0
    tokens = 0
    ema = None
    while True:
        elapsed = elapsed_before + time.time() - t0
        progress = max(step / args.max_steps, elapsed / budget)
        if progress >= 1 or (args.measure and step >= args.measure):
            break
        lr = args.lr * min(1.0, (step + 1) / args.warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))
        for g in opt.param_groups:
            g["lr"] = lr
        x, y, m = batch(maker, train_files, weights, args.batch, cfg.ctx)
        loss = loss_fn(model, x.to(dev), y.to(dev), m.to(dev))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        tokens += int(m.sum().item())
        ema = loss.item() if ema is None else 0.95 * ema + 0.05 * loss.item()
        if step % 10 == 0:
            dt = time.time() - t0
            print(f"step {step} loss {loss.item():.3f} ema {ema:.3f} lr {lr:.2e} tok/s {tokens/dt:.0f} "
                  f"elapsed {elapsed/60:.1f}m progress {progress:.3f}", flush=True)
        if step % args.eval_every == 0:
            print(f"eval step {step} loss {evaluate():.4f}", flush=True)
        if time.time() - last_ckpt > args.ckpt_every_min * 60:
            save()
            last_ckpt = time.time()
    if args.measure:
        dt = time.time() - t0
        print(f"measure: {step} steps in {dt:.1f}s, {tokens/dt:.0f} tok/s, {dt/step:.2f} s/step", flush=True)
        return
    print(f"final eval step {step} loss {evaluate():.4f} elapsed {(elapsed_before + time.time() - t0)/60:.1f}m", flush=True)
    save(final=True)
    json.dump({"step": step, "elapsed_s": elapsed_before + time.time() - t0, "cfg": cfg.to_dict(), "args": vars(args)},
              open(args.out + ".json", "w"), indent=1)


if __name__ == "__main__":
    main()
