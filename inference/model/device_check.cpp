// The device self-check (see the header): one prompt through both backends.
#include "inference/model/device_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <new>
#include <span>
#include <vector>

#include "inference/backend/backend.h"
#include "inference/model/context.h"
#include "inference/model/model.h"
#include "inference/tokenizer/tokenizer.h"

namespace qf::infer {
namespace {

// Code, as the model will see it: identifiers, indentation, operators.
constexpr const char* k_prompt =
    "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n    if n < 2:\n        return n\n";
constexpr size_t k_max_prompt = 24;

double nmse(std::span<const float> got, std::span<const float> want) {
  if (got.size() != want.size()) return INFINITY;
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double d = double(got[i]) - want[i];
    num += d * d;
    den += double(want[i]) * want[i];
  }
  if (!std::isfinite(num)) return INFINITY;
  return den > 0 ? num / den : num;
}

int32_t argmax(std::span<const float> l) {
  int32_t best = 0;
  for (int32_t j = 1; j < static_cast<int32_t>(l.size()); ++j)
    if (l[size_t(j)] > l[size_t(best)]) best = j;
  return best;
}

std::vector<int32_t> check_prompt(const model& m) {
  std::vector<int32_t> t = m.vocab().encode(k_prompt, m.vocab().add_bos_default());
  if (t.size() > k_max_prompt) t.resize(k_max_prompt);
  // A vocabulary that cannot spell code (a test model): ids spread over it.
  for (size_t i = t.size(); i < 8; ++i) t.push_back(static_cast<int32_t>((i * 37 + 11) % m.hp().n_vocab));
  return t;
}

}  // namespace

device_check_report check_against_cpu(const model& device_model, const std::string& path,
                                      const device_check_options& opts) {
  device_check_report r;
  const char* phase = "while loading the CPU reference";
  try {
    r.device = device_model.be().describe();
    model_options cpu;
    cpu.device = "cpu";
    cpu.n_threads = opts.n_threads;
    std::unique_ptr<model> ref = model::load(path, cpu);
    const std::vector<int32_t> prompt = check_prompt(device_model);
    context_options co;
    co.n_ctx = static_cast<int64_t>(prompt.size()) + opts.decode_steps + 8;
    context want(*ref, co);
    phase = "while preparing the device context";
    context got(device_model, co);

    auto compare = [&](std::span<const float> g, std::span<const float> w, const std::string& where) {
      const double e = nmse(g, w);
      ++r.positions;
      if (!(e <= r.worst_nmse)) {  // also takes NaN
        r.worst_nmse = std::isnan(e) ? INFINITY : e;
        r.worst_at = where;
      }
    };
    phase = "in the prefill";
    want.eval(prompt, logits_mode::all);
    got.eval(prompt, logits_mode::all);
    for (int64_t i = 0; i < static_cast<int64_t>(prompt.size()); ++i)
      compare(got.logits(i), want.logits(i), "prefill position " + std::to_string(i));
    phase = "while decoding";
    int32_t tok = argmax(want.logits(static_cast<int64_t>(prompt.size()) - 1));
    for (int s = 0; s < opts.decode_steps; ++s) {
      const int32_t one[1] = {tok};
      want.eval(one, logits_mode::last);
      got.eval(one, logits_mode::last);
      compare(got.logits(0), want.logits(0), "decode step " + std::to_string(s));
      tok = argmax(want.logits(0));
    }
    r.passed = r.worst_nmse <= opts.max_nmse;
    if (!r.passed) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "its logits differ from the CPU's: normalized squared error %.3g at %s (%s %.0e)",
                    r.worst_nmse, r.worst_at.c_str(), "the check accepts up to", opts.max_nmse);
      r.failure = buf;
    }
  } catch (const std::bad_alloc&) {
    r.failure = std::string("out of memory ") + phase;
  } catch (const std::exception& e) {
    r.failure = std::string("error ") + phase + ": " + e.what();
  }
  return r;
}

}  // namespace qf::infer
