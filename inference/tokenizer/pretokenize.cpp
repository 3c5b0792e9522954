// Hand-written pre-tokenizer passes (see pretokenize.h). Text is decoded once into code
// points with their category flags; passes work on code point index ranges and record
// piece ends; words are finally cut out of the original bytes.
#include "inference/tokenizer/pretokenize.h"

#include <cstdint>

#include "inference/tokenizer/unicode.h"
#include "text/utf8.h"

namespace qf::infer {

namespace {

using unicode::cpt_flags;

struct decoded {
  std::vector<uint32_t> cp;
  std::vector<cpt_flags> fl;
  std::vector<uint32_t> off;  // byte offset of each code point, plus the end

  void load(std::string_view text) {
    cp.clear();
    fl.clear();
    off.clear();
    size_t pos = 0;
    while (pos < text.size()) {
      off.push_back(static_cast<uint32_t>(pos));
      uint32_t c = text::decode_utf8(text, pos);
      cp.push_back(c);
      fl.push_back(unicode::flags(c));
    }
    off.push_back(static_cast<uint32_t>(text.size()));
  }
};

// One pass: splits [b, e) and appends piece ends to `ends`.
class pass_ctx {
 public:
  pass_ctx(const decoded& d, std::vector<uint32_t>& ends) : d_(d), ends_(ends) {}

  bool ws(size_t i) const { return d_.fl[i].is_whitespace(); }
  bool letter(size_t i) const { return d_.fl[i].is_letter(); }
  bool number(size_t i) const { return d_.fl[i].is_number(); }
  bool mark(size_t i) const { return d_.fl[i].is_mark(); }
  bool punct(size_t i) const { return d_.fl[i].is_punct(); }
  uint32_t cp(size_t i) const { return d_.cp[i]; }
  void cut(size_t end) { ends_.push_back(static_cast<uint32_t>(end)); }

 private:
  const decoded& d_;
  std::vector<uint32_t>& ends_;
};

inline uint32_t ascii_lower(uint32_t c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

// Length of a contraction ('s 't 're 've 'm 'll 'd) at p, or 0.
size_t contraction(const pass_ctx& x, size_t p, size_t e, bool any_case) {
  if (x.cp(p) != '\'' || p + 1 >= e) return 0;
  auto norm = [&](uint32_t c) { return any_case ? ascii_lower(c) : c; };
  uint32_t c1 = norm(x.cp(p + 1));
  if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') return 2;
  if (p + 2 < e) {
    uint32_t c2 = norm(x.cp(p + 2));
    if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) return 3;
  }
  return 0;
}

// \s+(?!\S)|\s+ at p (p is whitespace): the run, minus its last character when a
// non-space follows inside the piece and the run is longer than one.
size_t space_run(const pass_ctx& x, size_t p, size_t e) {
  size_t r = p;
  while (r < e && x.ws(r)) ++r;
  if (r - p > 1 && r < e) --r;
  return r - p;
}

void pass_gpt2(pass_ctx& x, size_t b, size_t e) {
  size_t p = b;
  while (p < e) {
    if (size_t n = contraction(x, p, e, false)) {
      x.cut(p += n);
      continue;
    }
    size_t q = p + (x.cp(p) == ' ' ? 1 : 0);
    if (q < e) {
      if (x.letter(q)) {
        while (q < e && x.letter(q)) ++q;
        x.cut(p = q);
        continue;
      }
      if (x.number(q)) {
        while (q < e && x.number(q)) ++q;
        x.cut(p = q);
        continue;
      }
      if (!x.ws(q)) {  // neither letter, number nor space
        while (q < e && !x.ws(q) && !x.letter(q) && !x.number(q)) ++q;
        x.cut(p = q);
        continue;
      }
    }
    if (x.ws(p)) {
      x.cut(p += space_run(x, p, e));
      continue;
    }
    x.cut(++p);
  }
}

// Llama 3 / Qwen2 / Qwen3.5 pattern: max_digits per number word, marks joined to letters.
void pass_llama3(pass_ctx& x, size_t b, size_t e, size_t max_digits, bool marks) {
  auto wordch = [&](size_t i) { return x.letter(i) || (marks && x.mark(i)); };
  auto other = [&](size_t i) { return !x.ws(i) && !x.letter(i) && !x.number(i) && !(marks && x.mark(i)); };
  auto is_nl = [&](size_t i) { return x.cp(i) == '\r' || x.cp(i) == '\n'; };
  size_t p = b;
  while (p < e) {
    if (size_t n = contraction(x, p, e, true)) {
      x.cut(p += n);
      continue;
    }
    // [^\r\n\p{L}\p{N}]?\p{L}+
    {
      size_t q = p;
      bool prefix_ok = !is_nl(p) && !x.letter(p) && !x.number(p);
      if (wordch(p)) {
        q = p;
      } else if (prefix_ok && p + 1 < e && wordch(p + 1)) {
        q = p + 1;
      } else {
        q = e + 1;  // no match
      }
      if (q <= e) {
        while (q < e && wordch(q)) ++q;
        x.cut(p = q);
        continue;
      }
    }
    // \p{N}{1,max}
    if (x.number(p)) {
      size_t q = p;
      while (q < e && x.number(q) && q - p < max_digits) ++q;
      x.cut(p = q);
      continue;
    }
    //  ?[^\s\p{L}\p{N}]+[\r\n]*
    {
      size_t q = p + (x.cp(p) == ' ' ? 1 : 0);
      if (q < e && other(q)) {
        while (q < e && other(q)) ++q;
        while (q < e && is_nl(q)) ++q;
        x.cut(p = q);
        continue;
      }
    }
    // \s*[\r\n]+ | \s+(?!\S) | \s+
    if (x.ws(p)) {
      size_t r = p, last_nl = 0;
      while (r < e && x.ws(r)) {
        if (is_nl(r)) last_nl = r + 1;
        ++r;
      }
      if (last_nl != 0) {
        x.cut(p = last_nl);
        continue;
      }
      x.cut(p += space_run(x, p, e));
      continue;
    }
    x.cut(++p);
  }
}

// Search pass: `match(p, e)` gives the match length at p (0 = none); the stretches
// between matches become pieces too.
template <class Match>
void pass_search(pass_ctx& x, size_t b, size_t e, Match match) {
  size_t p = b, gap = b;
  while (p < e) {
    size_t n = match(p, e);
    if (n == 0) {
      ++p;
      continue;
    }
    if (p > gap) x.cut(p);
    p += n;
    x.cut(p);
    gap = p;
  }
  if (gap < e) x.cut(e);
}

template <class Pred>
auto single(Pred pred) {
  return [pred](size_t p, size_t) -> size_t { return pred(p) ? 1 : 0; };
}

template <class Pred>
auto run(Pred pred) {
  return [pred](size_t p, size_t e) -> size_t {
    size_t q = p;
    while (q < e && pred(q)) ++q;
    return q - p;
  };
}

// \s?X+
template <class Pred>
auto opt_space_run(const pass_ctx& x, Pred pred) {
  return [&x, pred](size_t p, size_t e) -> size_t {
    size_t q = p;
    if (x.ws(p) && p + 1 < e && pred(p + 1)) q = p + 1;
    else if (!pred(p)) return 0;
    while (q < e && pred(q)) ++q;
    return q - p;
  };
}

bool deepseek_cjk(uint32_t c) {
  return (c >= 0x0800 && c <= 0x9FA5) || (c >= 0xAC00 && c <= 0xD7FF);
}

template <class F>
void run_pass(const decoded& d, std::vector<uint32_t>& ends, std::vector<uint32_t>& scratch, F f) {
  scratch.clear();
  pass_ctx x(d, scratch);
  size_t b = 0;
  for (uint32_t e : ends) {
    if (e > b) f(x, b, e);
    b = e;
  }
  ends.swap(scratch);
}

}  // namespace

pre_type pre_type_from_name(std::string_view n, bool* known) {
  if (known) *known = true;
  if (n == "gpt-2" || n == "gpt2" || n == "mpt" || n == "olmo" || n == "phi-2" || n == "jais") return pre_type::gpt2;
  if (n == "llama-bpe" || n == "llama3" || n == "llama-v3" || n == "dbrx" || n == "smaug-bpe") return pre_type::llama3;
  if (n == "qwen2" || n == "deepseek-r1-qwen" || n == "stablelm2" || n == "hunyuan") return pre_type::qwen2;
  if (n == "qwen35") return pre_type::qwen35;
  if (n == "deepseek-coder") return pre_type::deepseek_coder;
  if (n == "starcoder" || n == "refact" || n == "command-r" || n == "smollm" || n == "codeshell" || n == "exaone" ||
      n == "minerva-7b")
    return pre_type::starcoder;
  if (n == "default" || n.empty()) return pre_type::fallback;
  if (known) *known = false;
  return pre_type::fallback;
}

std::string_view pre_type_name(pre_type t) {
  switch (t) {
    case pre_type::gpt2: return "gpt-2";
    case pre_type::llama3: return "llama-bpe";
    case pre_type::qwen2: return "qwen2";
    case pre_type::qwen35: return "qwen35";
    case pre_type::deepseek_coder: return "deepseek-coder";
    case pre_type::starcoder: return "starcoder";
    case pre_type::fallback: return "default";
  }
  return "default";
}

void pretokenize(pre_type t, std::string_view text, std::vector<std::string_view>& words) {
  if (text.empty()) return;
  thread_local decoded d;
  thread_local std::vector<uint32_t> ends, scratch;
  d.load(text);
  ends.assign(1, static_cast<uint32_t>(d.cp.size()));

  switch (t) {
    case pre_type::gpt2:
      run_pass(d, ends, scratch, [](pass_ctx& x, size_t b, size_t e) { pass_gpt2(x, b, e); });
      break;
    case pre_type::llama3:
      run_pass(d, ends, scratch, [](pass_ctx& x, size_t b, size_t e) { pass_llama3(x, b, e, 3, false); });
      break;
    case pre_type::qwen2:
      run_pass(d, ends, scratch, [](pass_ctx& x, size_t b, size_t e) { pass_llama3(x, b, e, 1, false); });
      break;
    case pre_type::qwen35:
      run_pass(d, ends, scratch, [](pass_ctx& x, size_t b, size_t e) { pass_llama3(x, b, e, 1, true); });
      break;
    case pre_type::deepseek_coder:
      run_pass(d, ends, scratch, [](pass_ctx& x, size_t b, size_t e) {
        pass_search(x, b, e, single([&x](size_t i) { return x.cp(i) == '\r' || x.cp(i) == '\n'; }));
      });
      run_pass(d, ends, scratch, [](pass_ctx& x, size_t b, size_t e) {
        pass_search(x, b, e, opt_space_run(x, [&x](size_t i) { return x.letter(i); }));
      });
      run_pass(d, ends, scratch, [](pass_ctx& x, size_t b, size_t e) {
        pass_search(x, b, e, opt_space_run(x, [&x](size_t i) { return x.punct(i); }));
      });
      run_pass(d, ends, scratch, [](pass_ctx& x, size_t b, size_t e) {
        pass_search(x, b, e, run([&x](size_t i) { return deepseek_cjk(x.cp(i)); }));
      });
      run_pass(d, ends, scratch, [](pass_ctx& x, size_t b, size_t e) {
        pass_search(x, b, e, single([&x](size_t i) { return x.number(i); }));
      });
      break;
    case pre_type::starcoder:
      run_pass(d, ends, scratch, [](pass_ctx& x, size_t b, size_t e) {
        pass_search(x, b, e, single([&x](size_t i) { return x.number(i); }));
      });
      run_pass(d, ends, scratch, [](pass_ctx& x, size_t b, size_t e) { pass_gpt2(x, b, e); });
      break;
    case pre_type::fallback:
      run_pass(d, ends, scratch, [](pass_ctx& x, size_t b, size_t e) {
        pass_search(x, b, e, run([&x](size_t i) {
          uint32_t c = x.cp(i);
          return x.punct(i) || c == '$' || c == '+' || c == '<' || c == '=' || c == '>' || c == '^' || c == '~' ||
                 c == '|';
        }));
      });
      run_pass(d, ends, scratch, [](pass_ctx& x, size_t b, size_t e) { pass_gpt2(x, b, e); });
      run_pass(d, ends, scratch, [](pass_ctx& x, size_t b, size_t e) {
        pass_search(x, b, e, run([&x](size_t i) { return x.number(i); }));
      });
      run_pass(d, ends, scratch, [](pass_ctx& x, size_t b, size_t e) {
        pass_search(x, b, e, [&x](size_t p, size_t e2) -> size_t {
          auto dig = [&](size_t i) { return i < e2 && x.cp(i) >= '0' && x.cp(i) <= '9'; };
          return dig(p) && dig(p + 1) && dig(p + 2) ? 3 : 0;
        });
      });
      break;
  }

  size_t b = 0;
  for (uint32_t e : ends) {
    words.emplace_back(text.substr(d.off[b], d.off[e] - d.off[b]));
    b = e;
  }
}

}  // namespace qf::infer
