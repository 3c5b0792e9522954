#!/usr/bin/env python3
"""Train the SentencePiece BPE tokenizer for the tiny code model.

Design: BPE with byte fallback, identity normalisation (the engine does no Unicode
normalisation), no dummy prefix and no whitespace folding, so that sentencepiece and a
llama.cpp-style SPM tokenizer (score-ordered bigram merges, ' ' -> U+2581, unknown bytes ->
<0xXX>) produce the same ids. Digits are split. Newlines never occur inside sentencepiece's
line-based training text, so '\n' is always the byte token <0x0A>.
Fixed ids: 0 <unk>, 1 <s>, 2 </s> (end of text / end of middle), then the FIM control tokens.
"""
import argparse
import os

import sentencepiece as spm

FIM_TOKENS = ["<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<fim_pad>", "<file_sep>", "<repo_name>"]


def main():
    ap = argparse.ArgumentParser()
    work = os.path.join(os.path.dirname(__file__), "work")
    ap.add_argument("--input", default=os.path.join(work, "tok_corpus.txt"))
    ap.add_argument("--prefix", default=os.path.join(work, "tok"))
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    spm.SentencePieceTrainer.train(
        input=args.input, model_prefix=args.prefix, model_type="bpe", vocab_size=args.vocab,
        character_coverage=0.9995, byte_fallback=True, split_digits=True,
        remove_extra_whitespaces=False, allow_whitespace_only_pieces=True, add_dummy_prefix=False,
        normalization_rule_name="identity", split_by_whitespace=True, max_sentence_length=4096,
        input_sentence_size=1_500_000, shuffle_input_sentence=True, num_threads=args.threads,
        unk_id=0, bos_id=1, eos_id=2, pad_id=-1, control_symbols=FIM_TOKENS, train_extremely_large_corpus=False,
        max_sentencepiece_length=16)
    sp = spm.SentencePieceProcessor(model_file=args.prefix + ".model")
    for s in ["def foo(self, x):\n    return x + 1\n", "#include <vector>\n  int main() { return 0; }"]:
        print(repr(s), sp.encode(s, out_type=str))


if __name__ == "__main__":
    main()
