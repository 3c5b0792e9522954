#!/usr/bin/env python3
"""llama_vim_trace: per-request latency of a keystroke trace sent the way
llama.vim sends it (autoload/llama.vim, llama#fim: the request its code
builds, field for field), against llama.cpp's llama-server and against
`quickfill serve --http`, on the same GGUF and the same threads.

Each client types FILE from byte --from, one character per keystroke, for
--chars keystrokes. Per keystroke it POSTs /infill on a new connection (as
llama.vim's curl does) with input_prefix = the n_prefix (256) lines before the
cursor's line, prompt = that line up to the cursor, input_suffix = the rest of
it and the n_suffix (64) lines after, input_extra = two ring chunks of the
file, id_slot 0, n_predict 128, n_indent, top_k 40, top_p 0.90, samplers,
cache_prompt, t_max_prompt_ms 500, t_max_predict_ms 250 (a keystroke's first
request) and response_fields, and waits for the answer before the next
keystroke (llama.vim holds the next request while one runs). The cursor's
line holds only what was typed of it (llama.vim asks for no completion with
more than 8 characters after the cursor). Before its keystrokes each client
sends one uncounted warm-up request without time limits (n_predict 1), so
that both servers start from a filled cache; quickfill serve runs with
--deadline-ms 600000 for it. With --clients N, N clients type N different
places of the file at once.

Prints, per server: p50/p90 of the request latency (from sending to the whole
answer), and the medians of prompt tokens evaluated, tokens cached and tokens
predicted that the answers report.

usage: llama_vim_trace.py --quickfill BIN --llama-server BIN --model M.gguf
         [--file F] [--from N] [--chars N] [--clients N] [--threads N]
         [--only quickfill|llama-server]
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

N_PREFIX, N_SUFFIX = 256, 64


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_healthy(url, proc, seconds=300):
    end = time.time() + seconds
    while time.time() < end:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited while starting (code {proc.returncode})")
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as r:
                if r.status == 200:
                    return
        except Exception:
            pass
        time.sleep(0.2)
    raise SystemExit("the server did not become healthy")


def request_at(text, pos, chunks):
    """The body llama#fim builds with the cursor at byte `pos` of `text`."""
    lines = text[:pos].split("\n")
    y = len(lines) - 1                      # the cursor's line, 0-based
    all_lines = text.split("\n")
    line_cur = all_lines[y]
    x = len(lines[-1])
    prefix_lines = all_lines[max(0, y - N_PREFIX):y]
    suffix_lines = all_lines[y + 1:y + 1 + N_SUFFIX]
    line_prefix = line_cur[:x]
    indent = len(line_cur) - len(line_cur.lstrip(" \t"))
    return {
        "id_slot": 0,
        "input_prefix": "".join(l + "\n" for l in prefix_lines),
        "input_suffix": line_cur[x:] + "\n" + "".join(l + "\n" for l in suffix_lines),
        "input_extra": chunks,
        "prompt": line_prefix,
        "n_predict": 128,
        "stop": [],
        "n_indent": indent,
        "top_k": 40,
        "top_p": 0.90,
        "samplers": ["top_k", "top_p", "infill"],
        "stream": False,
        "cache_prompt": True,
        "t_max_prompt_ms": 500,
        "t_max_predict_ms": 250,
        "response_fields": ["content", "timings/prompt_n", "timings/prompt_ms", "timings/prompt_per_token_ms",
                            "timings/prompt_per_second", "timings/predicted_n", "timings/predicted_ms",
                            "timings/predicted_per_token_ms", "timings/predicted_per_second", "truncated",
                            "tokens_cached"],
    }


def typed_at(text, pos):
    """The file while its line at `pos` is being typed: what was typed before
    the cursor, the rest of that line not yet there, the lines after it."""
    eol = text.find("\n", pos)
    return text[:pos] + (text[eol:] if eol >= 0 else "")


def post(url, body, timeout=600):
    req = urllib.request.Request(url + "/infill", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def client(url, text, start, chars, chunks, out):
    # Warm-up, not counted: the file as it was when typing starts, without
    # time limits, so that both servers start from a filled cache (an editor
    # has had the file open a while).
    warm = request_at(typed_at(text, start), start, chunks)
    for k in ("t_max_prompt_ms", "t_max_predict_ms"):
        warm.pop(k)
    warm["n_predict"] = 1
    try:
        post(url, warm)
    except Exception as e:
        print(f"warm-up failed: {e}", file=sys.stderr)
    for i in range(chars):
        pos = start + i + 1
        body = json.dumps(request_at(typed_at(text, pos), pos, chunks)).encode()
        req = urllib.request.Request(url + "/infill", data=body, headers={"Content-Type": "application/json"})
        t0 = time.perf_counter()
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                answer = json.loads(r.read())
            ok = True
        except urllib.error.HTTPError as e:  # a failed request counts, with its time
            answer, ok = {"error": f"{e.code} {e.read().decode(errors='replace')[:200]}"}, False
        except Exception as e:
            answer, ok = {"error": str(e)}, False
        ms = (time.perf_counter() - t0) * 1000
        out.append((ms, ok, answer))


def run(kind, args, text):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(os.path.join(args.work, f"{kind}.log"), "w")
    if kind == "llama-server":
        cmd = [args.llama_server, "-m", args.model, "--host", "127.0.0.1", "--port", str(port),
               "-t", str(args.threads), "-c", str(args.ctx * args.clients), "-np", str(args.clients),
               "--cache-reuse", "256"]
    else:
        cmd = [args.quickfill, "serve", "--http", f"127.0.0.1:{port}", "--config", "none", "--model", args.model,
               "--threads", str(args.threads), "--deadline-ms", "600000"]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_healthy(url, proc)
        # Two ring chunks of the file, as llama.vim gathers them.
        lines = text.split("\n")
        chunks = [{"text": "\n".join(lines[0:32]) + "\n", "time": 0, "filename": "sample.py"},
                  {"text": "\n".join(lines[-32:]) + "\n", "time": 0, "filename": "sample.py"}]
        span = max(1, (len(text) - args.start - args.chars) // max(1, args.clients))
        results, threads = [], []
        for c in range(args.clients):
            out = []
            results.append(out)
            t = threading.Thread(target=client, args=(url, text, args.start + c * span, args.chars, chunks, out))
            threads.append(t)
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
    flat = [r for out in results for r in out]
    ms = sorted(r[0] for r in flat)
    ok = sum(1 for r in flat if r[1])

    def med(key):
        v = [r[2].get(key) for r in flat if r[1] and isinstance(r[2].get(key), (int, float))]
        return statistics.median(v) if v else float("nan")

    def pct(p):
        return ms[min(len(ms) - 1, int(round(p * (len(ms) - 1))))]
    nonempty = sum(1 for r in flat if r[1] and r[2].get("content"))
    for err in sorted({r[2]["error"] for r in flat if not r[1]})[:3]:
        print(f"  failed: {err}")
    print(f"{kind:13s} clients {args.clients}: {len(ms)} requests ({ok} answered, {nonempty} with text) in "
          f"{wall:.1f} s: p50 {pct(0.5):.1f} ms, p90 {pct(0.9):.1f} ms; median prompt_n "
          f"{med('timings/prompt_n')}, tokens_cached {med('tokens_cached')}, predicted_n "
          f"{med('timings/predicted_n')}", flush=True)
    return pct(0.5), pct(0.9)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quickfill", default=os.path.join(root, "build/server/quickfill"))
    ap.add_argument("--llama-server", default=os.path.join(root, "build/llama-server/bin/llama-server"))
    ap.add_argument("--model", required=True)
    ap.add_argument("--file", default=os.path.join(root, "examples/sample.py"))
    ap.add_argument("--from", dest="start", type=int, default=200)
    ap.add_argument("--chars", type=int, default=30)
    ap.add_argument("--clients", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ctx", type=int, default=4096, help="llama-server's context per slot (-np is --clients)")
    ap.add_argument("--only", choices=["quickfill", "llama-server"])
    ap.add_argument("--work", default="/tmp/qf-http-bench")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    text = open(args.file, encoding="utf-8").read()
    print(f"trace: {args.file} from byte {args.start}, {args.chars} keystrokes per client, {args.clients} "
          f"client(s); model {args.model}; {args.threads} threads", flush=True)
    got = {}
    for kind in ["llama-server", "quickfill"]:
        if args.only and kind != args.only:
            continue
        got[kind] = run(kind, args, text)
    if len(got) == 2:
        print(f"p50 llama-server / quickfill: {got['llama-server'][0] / got['quickfill'][0]:.1f}x; "
              f"p90: {got['llama-server'][1] / got['quickfill'][1]:.1f}x")


if __name__ == "__main__":
    sys.exit(main())
