// Budgeted generation on the scripted model (fake_lm.h), for the generator
// and speculation tests: a harness that runs generate() on a fresh sequence,
// and a code prompt that repeats itself (so prompt lookup and copy models
// have something to draft from).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "server/completion/decode/generator.h"
#include "tests/server/completion/fake_lm.h"

namespace qf::test {

struct generator_harness {
  fake_backend be;
  fim_format fmt;
  cursor_context cx;
  trigger_decision dec;
  generator_harness() : fmt(detect_fim_format(be.vocab())) {
    cx = make_cursor_context("", 0, 0);
    dec.multi_line = true;
  }
  gen_outcome run(std::span<const int32_t> prompt, gen_params p, bool rules = false, const qf::cancel_token& c = {}) {
    auto seq = be.new_sequence(4096);
    stop_checker sc(cx, dec, rules);
    p.stop_rules = rules;
    return generate(*seq, be.vocab(), fmt, prompt, sc, p, c);
  }
};

inline std::vector<int32_t> code_prompt(const lm_vocab& v) {
  std::string src;
  for (int i = 0; i < 6; ++i) src += "for i in range(n):\n    total += values[i] * weight\n";
  src += "for i in range(n):\n    total";
  std::vector<int32_t> t{fake_vocab::k_bos};
  auto e = v.encode(src);
  t.insert(t.end(), e.begin(), e.end());
  return t;
}

}  // namespace qf::test
