"""Fill-in-the-middle training sequences built on the fly from whole source files.

Design: a sequence of ctx+1 tokens is packed with one or more samples, each starting with
<s>; the tail that no sample fits in is <fim_pad> and carries no loss. A sample takes a
random window of a file (starting at a line start) sized to the space left, then with
probability `fim_rate` cuts it into prefix P / middle M / suffix S at character positions
and emits one of three layouts (all end the middle with </s>):
  PSM           <s> <fim_prefix> P <fim_suffix> S <fim_middle> M </s>
  split prefix  <s> <fim_prefix> P1 <fim_suffix> S <fim_middle> P2 M </s>
                (P2 = the current line's text before the cursor, or all of P: the SPM
                 variant of the FIM paper; this is the layout that lets an editor append
                 keystrokes after <fim_middle> without re-evaluating the suffix)
  SPM           <s> <fim_suffix> S <fim_prefix> P <fim_middle> M </s>
and otherwise plain left-to-right text (<s> text, </s> when the window reaches the end of
the file). The middle is either a uniformly random span (two uniform cut points) or the rest
of a line plus 0-3 further lines from a random cursor, the editor's case. P, S and M are
tokenised separately, as an inference prompt is. Over-long samples lose prefix text from the
left and suffix text from the right.
"""
import json
import random

import sentencepiece as spm

FIM_NAMES = ("<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<fim_pad>", "<file_sep>", "<repo_name>")


class Tok:
    def __init__(self, path):
        self.sp = spm.SentencePieceProcessor(model_file=path)
        self.bos, self.eos, self.unk = self.sp.bos_id(), self.sp.eos_id(), self.sp.unk_id()
        ids = {n: self.sp.piece_to_id(n) for n in FIM_NAMES}
        self.pre, self.suf, self.mid = ids["<fim_prefix>"], ids["<fim_suffix>"], ids["<fim_middle>"]
        self.pad, self.file_sep, self.repo = ids["<fim_pad>"], ids["<file_sep>"], ids["<repo_name>"]
        self.n_vocab = self.sp.get_piece_size()

    def enc(self, text):
        return self.sp.encode(text) if text else []

    def dec(self, ids):
        return self.sp.decode(ids)


def load_files(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def pick_middle(text, rng, line_mode):
    n = len(text)
    if not line_mode:
        i, j = sorted((rng.randint(0, n), rng.randint(0, n)))
        return i, j
    i = rng.randint(0, max(0, n - 1))
    extra = rng.choices((0, 1, 2, 3), weights=(0.6, 0.2, 0.1, 0.1))[0]
    j = i
    for _ in range(extra + 1):
        k = text.find("\n", j)
        if k < 0:
            return i, n
        j = k + 1
    j -= 1                        # end before the newline ...
    if rng.random() < 0.3:
        j += 1                    # ... or including it
    return i, j


class SampleMaker:
    def __init__(self, tok, fim_rate=0.9, bytes_per_token=3.0, seed=0):
        self.tok, self.fim_rate, self.bpt = tok, fim_rate, bytes_per_token
        self.rng = random.Random(seed)

    def window(self, text, budget):
        chars = int(budget * self.bpt)
        if len(text) <= chars:
            return text, True
        start = self.rng.randint(0, len(text) - chars)
        start = text.rfind("\n", 0, start) + 1
        return text[start:start + chars], start + chars >= len(text)

    def fim_parts(self, text):
        """(layout, P, M, S) for one FIM sample of `text`."""
        r = self.rng
        i, j = pick_middle(text, r, line_mode=r.random() < 0.5)
        P, M, S = text[:i], text[i:j], text[j:]
        u = r.random()
        layout = "psm" if u < 0.5 else ("split" if u < 0.8 else "spm")
        return layout, P, M, S

    def encode_fim(self, layout, P, M, S, budget, split_all=None):
        t = self.tok
        if layout == "split":
            if split_all is None:
                split_all = self.rng.random() < 1 / 3
            cut = 0 if split_all else P.rfind("\n") + 1
            P1, P2 = P[:cut], P[cut:]
        else:
            P1, P2 = P, ""
        p1, p2, m, s = t.enc(P1), t.enc(P2), t.enc(M), t.enc(S)
        fixed = 5 + len(p2) + len(m)
        room = budget - fixed
        if room < 0:                       # middle alone too long: keep its start, no </s>
            m = (p2 + m)[:max(0, budget - 4)]
            p2, p1, s = [], [], []
            return self.layout_ids(layout, p1, p2, m, s, end=False)
        if len(p1) + len(s) > room:        # keep text nearest the cursor
            keep_p = min(len(p1), max(room // 2, room - len(s)))
            keep_s = min(len(s), room - keep_p)
            p1 = p1[len(p1) - keep_p:] if keep_p else []
            s = s[:keep_s]
        return self.layout_ids(layout, p1, p2, m, s, end=True)

    def layout_ids(self, layout, p1, p2, m, s, end):
        t = self.tok
        if layout == "spm":
            ids = [t.bos, t.suf] + s + [t.pre] + p1 + [t.mid] + p2 + m
        else:
            ids = [t.bos, t.pre] + p1 + [t.suf] + s + [t.mid] + p2 + m
        return ids + ([t.eos] if end else [])

    def sample(self, text, budget):
        win, at_end = self.window(text, budget)
        if self.rng.random() < self.fim_rate:
            return self.encode_fim(*self.fim_parts(win), budget)
        ids = [self.tok.bos] + self.tok.enc(win)
        if at_end:
            ids.append(self.tok.eos)
        return ids[:budget]

    def sequence(self, files, weights, length):
        """`length` ids and a loss mask (0 on padding)."""
        ids = []
        while length - len(ids) >= 48:
            f = self.rng.choices(files, weights=weights)[0]
            ids += self.sample(f["text"], length - len(ids))
        mask = [1] * len(ids) + [0] * (length - len(ids))
        ids += [self.tok.pad] * (length - len(ids))
        return ids, mask
