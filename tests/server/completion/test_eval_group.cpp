// Decoders on their own threads whose evals meet in one batch (eval_group.h),
// on the scripted model: each pass holds one eval of every member still in
// the group, members that finish leave without holding the others, an engine
// error reaches every member of its pass, and n candidates decoded together
// (with forks of the prompt) give what they give one after the other.
#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>

#include "server/completion/decode/candidates.h"
#include "server/completion/decode/eval_group.h"
#include "tests/server/completion/fake_lm.h"

using namespace qf::server::completion;
using qf::test::fake_backend;

namespace {

// Records the size of every batch it is asked to run.
class counting_backend final : public lm_backend {
 public:
  const lm_vocab& vocab() const override { return inner.vocab(); }
  std::unique_ptr<lm_sequence> new_sequence(int64_t n_ctx) override { return inner.new_sequence(n_ctx); }
  size_t kv_bytes_per_token() const override { return inner.kv_bytes_per_token(); }
  int64_t n_ctx_train() const override { return 0; }
  std::string describe() const override { return "counting"; }
  void eval_batch(std::span<lm_batch_entry> entries, lm_output out) override {
    sizes.push_back(entries.size());
    lm_backend::eval_batch(entries, out);
  }
  fake_backend inner;
  std::vector<size_t> sizes;
};

}  // namespace

TEST(eval_group, every_pass_holds_one_eval_of_each_member_still_decoding) {
  counting_backend be;
  const std::vector<int> steps = {2, 5, 3};
  std::vector<std::unique_ptr<lm_sequence>> seqs;
  for (size_t i = 0; i < steps.size(); ++i) seqs.push_back(be.new_sequence(64));
  eval_group g(be, static_cast<int>(steps.size()));
  std::vector<std::unique_ptr<lm_sequence>> members;
  for (auto& s : seqs) members.push_back(g.join(*s));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < steps.size(); ++i)
    threads.emplace_back([&, i] {
      for (int k = 0; k < steps[i]; ++k) {
        const int32_t t[1] = {static_cast<int32_t>('a' + k)};
        const lm_eval_result r = members[i]->eval(t, lm_logits::last, {}, lm_output::best);
        EXPECT_EQ(r.n_evaluated, 1);
        EXPECT_GE(members[i]->best_token(0), 0);
      }
      members[i].reset();  // done: leaves the group
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(g.batches(), 5);
  EXPECT_EQ(be.sizes, (std::vector<size_t>{3, 3, 2, 1, 1}));
  for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(seqs[i]->tokens().size(), static_cast<size_t>(steps[i]));
}

TEST(eval_group, an_engine_error_reaches_every_member_of_its_pass) {
  counting_backend be;
  auto small = be.new_sequence(2), big = be.new_sequence(64);
  eval_group g(be, 2);
  auto a = g.join(*small), b = g.join(*big);
  int errors = 0;
  std::thread other([&] {
    const int32_t t[3] = {1, 2, 3};  // does not fit in 2: the fake engine throws
    try {
      b->eval(t, lm_logits::last, {}, lm_output::best);
    } catch (const std::runtime_error&) {
      ++errors;
    }
    b.reset();
  });
  const int32_t t[3] = {1, 2, 3};
  try {
    a->eval(t, lm_logits::last, {}, lm_output::best);
  } catch (const std::runtime_error&) {
    ++errors;
  }
  a.reset();
  other.join();
  EXPECT_EQ(errors, 2);
}

TEST(eval_group, a_member_that_leaves_first_does_not_hold_the_others) {
  counting_backend be;
  auto s0 = be.new_sequence(64), s1 = be.new_sequence(64);
  eval_group g(be, 2);
  auto m0 = g.join(*s0), m1 = g.join(*s1);
  std::thread t([&] {
    const int32_t one[1] = {5};
    m1->eval(one, lm_logits::last, {}, lm_output::best);  // waits for m0 to eval or leave
    m1.reset();
  });
  m0.reset();  // leaves without evaluating: m1's eval runs alone
  t.join();
  EXPECT_EQ(be.sizes, (std::vector<size_t>{1}));
  EXPECT_EQ(s1->tokens().size(), 1u);
  EXPECT_THROW(g.join(*s0)->move_range(0, 0, 0), std::logic_error);
}

TEST(eval_group, candidates_decoded_together_equal_one_after_the_other) {
  // Letters chosen by the sampler, then EOS after three of them.
  const qf::test::logits_rule rule = [](std::span<const int32_t> h) {
    std::vector<float> l(qf::test::fake_vocab::k_n_vocab, -30.0f);
    int letters = 0;
    for (size_t i = h.size(); i > 0 && h[i - 1] >= 'a' && h[i - 1] <= 'z'; --i) ++letters;
    if (letters >= 3) l[qf::test::fake_vocab::k_eos] = 0.0f;
    else
      for (int i = 0; i < 4; ++i) l['w' + i] = 0.1f * static_cast<float>(i);
    return l;
  };
  auto run = [&](bool together) {
    counting_backend be;
    be.inner.distribution = rule;
    auto seq = be.new_sequence(256);
    candidate_forks forks(be, 256);
    const std::vector<int32_t> prompt = {qf::test::fake_vocab::k_pre, 'x', '=', qf::test::fake_vocab::k_mid};
    fim_format fmt;
    fmt.stop_ids = {qf::test::fake_vocab::k_eos};
    const cursor_context cx = make_cursor_context("x = \n", 0, 4);
    const trigger_decision d;
    stop_checker stops(cx, d, false);
    gen_params p;
    p.max_tokens = 8;  // EOS ends a candidate first (a stop token ends decoding when p.stop_rules)
    qf::infer::sampler_params sp;
    sp.temperature = 1.0f;
    sp.seed = 11;
    auto outs = generate_candidates(*seq, be.vocab(), fmt, prompt, stops, p, sp, 4, {}, together ? &forks : nullptr);
    std::vector<std::vector<int32_t>> gen;
    for (const auto& o : outs) gen.push_back(o.generated);
    if (together) {
      EXPECT_EQ(be.inner.stats->copies, 3);  // three forks of the prompt, none evaluated again
      EXPECT_EQ(be.sizes.size(), 3u);        // three letter steps, each one pass for all four
      for (size_t n : be.sizes) EXPECT_EQ(n, 4u);
    }
    EXPECT_EQ(be.inner.stats->evaluated, 4 + 4 * 3);  // the prompt once, then each candidate's letters
    return gen;
  };
  const auto apart = run(false), together = run(true);
  ASSERT_EQ(apart.size(), 4u);
  EXPECT_EQ(together, apart);
}
