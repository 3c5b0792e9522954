#!/usr/bin/env python3
"""Collect a small, permissively licensed code corpus from files already on a Debian machine.

Design: every source is a (root, file patterns, licence, byte cap) entry; npm packages are
checked one by one through the `license` field of their package.json and only MIT/BSD/ISC/
Apache/0BSD/BlueOak/Unlicense/CC0 are kept. Files are normalised (\r\n -> \n, trailing
whitespace stripped), filtered (not UTF-8, minified, generated, too short/long), and
de-duplicated on a hash of their whitespace-collapsed text. Whole files are held out for
evaluation, chosen by a hash of the text (stable across runs). Output under --out:
  train.jsonl / eval.jsonl   one {"src", "path", "lang", "text"} object per file
  tok_corpus.txt             a sample of training text for the tokenizer
  manifest.json              sources, licences, file and byte counts
The data itself is never committed; the manifest is summarised in models/README.md.
"""
import argparse
import fnmatch
import hashlib
import json
import os
import random
import re
import sys

PERMISSIVE = ("MIT", "ISC", "BSD", "APACHE", "0BSD", "BLUEOAK", "UNLICENSE", "CC0", "PYTHON", "ZLIB", "BSL")

# name, root, include globs, exclude substrings, licence, language, byte cap
SOURCES = [
    ("cpython-stdlib", "/usr/lib/python3.11", ["*.py"], ["/site-packages/", "/dist-packages/", "/lib2to3/tests/data/"],
     "PSF-2.0", "python", 11_500_000),
    ("numpy", "/usr/lib/python3/dist-packages/numpy", ["*.py"], [], "BSD-3-Clause", "python", 2_000_000),
    ("click", "/usr/lib/python3/dist-packages/click", ["*.py"], [], "BSD-3-Clause", "python", 400_000),
    ("attrs", "/usr/lib/python3/dist-packages/attr", ["*.py"], [], "MIT", "python", 300_000),
    ("pygments", "/usr/lib/python3/dist-packages/pygments", ["*.py"], ["/lexers/_"], "BSD-2-Clause", "python", 1_200_000),
    ("dateutil", "/usr/lib/python3/dist-packages/dateutil", ["*.py"], ["/zoneinfo/"], "Apache-2.0 OR BSD-3-Clause", "python", 300_000),
    ("idna", "/usr/lib/python3/dist-packages/idna", ["*.py"], ["idnadata", "uts46data"], "BSD-3-Clause", "python", 100_000),
    ("pyyaml", "/usr/lib/python3/dist-packages/yaml", ["*.py"], [], "MIT", "python", 300_000),
    ("fmt", "/usr/include/fmt", ["*.h"], [], "MIT", "cpp", 600_000),
    ("spdlog", "/usr/include/spdlog", ["*.h"], ["/fmt/bundled/"], "MIT", "cpp", 600_000),
    ("googletest", "/usr/include/gtest", ["*.h"], [], "BSD-3-Clause", "cpp", 600_000),
    ("googlemock", "/usr/include/gmock", ["*.h"], [], "BSD-3-Clause", "cpp", 600_000),
    ("google-benchmark", "/usr/include/benchmark", ["*.h"], [], "Apache-2.0", "cpp", 200_000),
    ("catch2", "/usr/include/catch2", ["*.hpp", "*.h"], [], "BSL-1.0", "cpp", 700_000),
    ("pybind11", "/usr/include/pybind11", ["*.h"], [], "BSD-3-Clause", "cpp", 800_000),
    ("tree-sitter", "/usr/include/tree_sitter", ["*.h"], [], "MIT", "c", 100_000),
    ("libuv", "/usr/include/node/uv", ["*.h"], [], "MIT", "c", 200_000),
    ("libuv-main", "/usr/include/node", ["uv.h"], ["/uv/", "/openssl/", "/cppgc/", "/libplatform/"], "MIT", "c", 100_000),
    ("v8", "/usr/include/node", ["v8*.h"], [], "BSD-3-Clause", "cpp", 900_000),
    ("node-api", "/usr/include/node", ["node*.h", "js_native_api*.h"], ["/uv/", "/openssl/"], "MIT", "c", 300_000),
    ("c10", "/usr/include/c10", ["*.h"], [], "BSD-3-Clause", "cpp", 1_500_000),
    ("llvm", "/usr/include/llvm-14/llvm", ["*.h"], [], "Apache-2.0 WITH LLVM-exception", "cpp", 3_000_000),
    ("boost", "/usr/include/boost", ["*.hpp"], ["/preprocessed/", "/typeof/", "/mpl/aux_/", "/preprocessor/"],
     "BSL-1.0", "cpp", 3_500_000),
    ("cpython-headers", "/usr/include/python3.11", ["*.h"], [], "PSF-2.0", "c", 800_000),
    ("sqlite", "/usr/include", ["sqlite3.h", "sqlite3ext.h"], [], "public domain", "c", 700_000),
    ("zlib", "/usr/include", ["zlib.h", "zconf.h"], [], "Zlib", "c", 200_000),
    ("expat", "/usr/include", ["expat.h", "expat_external.h"], [], "MIT", "c", 100_000),
    ("corepack", "/usr/lib/node_modules/corepack", ["*.js", "*.mjs", "*.cjs", "*.ts"], [], "MIT", "javascript", 600_000),
    ("jquery", "/usr/share/javascript/jquery", ["jquery.js"], [], "MIT", "javascript", 400_000),
    ("underscore", "/usr/share/javascript/underscore", ["underscore.js"], [], "MIT", "javascript", 200_000),
    ("sphinxdoc", "/usr/share/javascript/sphinxdoc", ["*.js"], [".min."], "BSD-2-Clause", "javascript", 200_000),
]
NPM_ROOT = "/usr/lib/node_modules/npm"
NPM_CAP = 8_000_000
SINGLE_DIR_SOURCES = {"sqlite", "zlib", "expat", "libuv-main"}   # only the named files directly in root


def normalise(text):
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")
    return text + "\n"


def looks_generated(text):
    lines = text.split("\n")
    if not lines:
        return True
    longest = max(len(l) for l in lines)
    mean = len(text) / max(1, len(lines))
    if longest > 1000 or mean > 120:
        return True   # minified or data tables
    head = text[:600].lower()
    return "automatically generated" in head or "do not edit" in head or "generated by" in head


def text_key(text):
    return hashlib.sha1(re.sub(r"\s+", " ", text).strip().encode()).hexdigest()


def walk(root, globs, excludes, single_dir):
    if not os.path.isdir(root):
        return
    if single_dir:
        for name in sorted(os.listdir(root)):
            p = os.path.join(root, name)
            if os.path.isfile(p) and any(fnmatch.fnmatch(name, g) for g in globs):
                yield p
        return
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            p = os.path.join(d, name)
            if any(e and e in p for e in excludes):
                continue
            if any(fnmatch.fnmatch(name, g) for g in globs):
                yield p


def npm_packages(root):
    """(package dir, name, licence) for every package.json under root's node_modules tree."""
    out = []
    for d, dirs, files in os.walk(root):
        dirs.sort()
        if "package.json" in files:
            try:
                meta = json.load(open(os.path.join(d, "package.json"), encoding="utf-8"))
            except Exception:
                continue
            lic = meta.get("license") or meta.get("licenses") or ""
            if isinstance(lic, list):
                lic = " OR ".join(x.get("type", "") if isinstance(x, dict) else str(x) for x in lic)
            if isinstance(lic, dict):
                lic = lic.get("type", "")
            if "name" in meta:
                out.append((d, meta["name"], str(lic)))
    return out


def permissive(lic):
    u = lic.upper()
    return bool(u) and any(p in u for p in PERMISSIVE) and "GPL" not in u.replace("LGPL", "GPL")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "work"))
    ap.add_argument("--eval-frac", type=float, default=0.03)
    ap.add_argument("--max-file-bytes", type=int, default=120_000)
    ap.add_argument("--tok-sample-bytes", type=int, default=12_000_000)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    seen = set()
    records = []
    manifest = {"sources": [], "filters": {
        "max_file_bytes": args.max_file_bytes, "min_file_bytes": 200,
        "dedup": "sha1 of whitespace-collapsed text", "eval_frac": args.eval_frac}}

    def add_files(name, lic, lang, paths, cap, root):
        stats = {"name": name, "root": root, "licence": lic, "lang": lang, "files": 0, "bytes": 0,
                 "skipped_dup": 0, "skipped_filter": 0}
        for p in paths:
            if stats["bytes"] >= cap:
                break
            try:
                raw = open(p, "rb").read()
                text = raw.decode("utf-8")
            except Exception:
                stats["skipped_filter"] += 1
                continue
            text = normalise(text)
            if len(text) < 200 or len(text) > args.max_file_bytes or "\x00" in text or looks_generated(text):
                stats["skipped_filter"] += 1
                continue
            k = text_key(text)
            if k in seen:
                stats["skipped_dup"] += 1
                continue
            seen.add(k)
            records.append({"src": name, "path": p, "lang": lang, "text": text, "key": k})
            stats["files"] += 1
            stats["bytes"] += len(text.encode())
        manifest["sources"].append(stats)
        print(f"{name:18s} {lic:32s} {stats['files']:5d} files {stats['bytes']/1e6:6.2f} MB", file=sys.stderr)

    for name, root, globs, excl, lic, lang, cap in SOURCES:
        single = name in SINGLE_DIR_SOURCES
        add_files(name, lic, lang, walk(root, globs, excl if not single else [], single), cap, root)

    # npm: per-package licence check; nested packages are walked separately (excluded from parents)
    pkgs = npm_packages(NPM_ROOT)
    pkg_dirs = {d for d, _, _ in pkgs}
    npm_stats = {"name": "npm-bundled-packages", "root": NPM_ROOT, "licence": "per package (see packages)",
                 "lang": "javascript", "files": 0, "bytes": 0, "packages": [], "rejected_packages": []}
    npm_bytes = 0
    for d, pname, lic in pkgs:
        if not permissive(lic):
            npm_stats["rejected_packages"].append({"name": pname, "licence": lic})
            continue
        paths = []
        for sub, dirs, files in os.walk(d):
            dirs[:] = sorted(x for x in dirs if os.path.join(sub, x) not in pkg_dirs and x not in ("node_modules", "test", "tests", "dist-min"))
            for f in sorted(files):
                if (f.endswith((".js", ".mjs", ".cjs", ".ts")) and ".min." not in f):
                    paths.append(os.path.join(sub, f))
        before = len(records)
        add_files("npm:" + pname, lic, "javascript", paths, max(0, NPM_CAP - npm_bytes), d)
        st = manifest["sources"].pop()
        npm_bytes += st["bytes"]
        npm_stats["files"] += st["files"]
        npm_stats["bytes"] += st["bytes"]
        if st["files"]:
            npm_stats["packages"].append({"name": pname, "licence": lic, "files": st["files"], "bytes": st["bytes"]})
        for r in records[before:]:
            r["lang"] = "typescript" if r["path"].endswith(".ts") else "javascript"
    manifest["sources"].append(npm_stats)
    print(f"npm: {len(npm_stats['packages'])} packages kept, {len(npm_stats['rejected_packages'])} rejected, "
          f"{npm_stats['files']} files {npm_stats['bytes']/1e6:.2f} MB", file=sys.stderr)

    # split by a hash of the text: whole files held out
    train, evals = [], []
    for r in records:
        h = int(r["key"][:8], 16) / 0xFFFFFFFF
        (evals if h < args.eval_frac else train).append(r)
    rng = random.Random(1234)
    rng.shuffle(train)
    for fname, rows in (("train.jsonl", train), ("eval.jsonl", evals)):
        with open(os.path.join(args.out, fname), "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps({k: r[k] for k in ("src", "path", "lang", "text")}) + "\n")
    # tokenizer sample: lines of training files, language-balanced by taking files in shuffled order
    n = 0
    with open(os.path.join(args.out, "tok_corpus.txt"), "w", encoding="utf-8") as f:
        for r in train:
            if n >= args.tok_sample_bytes:
                break
            for line in r["text"].split("\n"):
                if line.strip() and len(line) < 2000:
                    f.write(line + "\n")
                    n += len(line) + 1
    by_lang = {}
    for split, rows in (("train", train), ("eval", evals)):
        for r in rows:
            e = by_lang.setdefault(r["lang"], {"train_files": 0, "train_bytes": 0, "eval_files": 0, "eval_bytes": 0})
            e[split + "_files"] += 1
            e[split + "_bytes"] += len(r["text"].encode())
    manifest["by_language"] = by_lang
    manifest["totals"] = {"train_files": len(train), "eval_files": len(evals),
                          "train_bytes": sum(len(r["text"].encode()) for r in train),
                          "eval_bytes": sum(len(r["text"].encode()) for r in evals)}
    json.dump(manifest, open(os.path.join(args.out, "manifest.json"), "w"), indent=1)
    print(json.dumps(manifest["totals"]), json.dumps(by_lang), file=sys.stderr)


if __name__ == "__main__":
    main()
