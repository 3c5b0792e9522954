// Continuous batching (step_loop.h): sequences decoded on their own threads
// through views of one loop give what each gives alone on the real engine
// (the tiny trained Llama of the shared test data), while their evals share
// steps; a long prompt is cut into chunks beside the others' decode tokens;
// steps take entries by priority, then the owner served least recently; a
// cancelled entry leaves without disturbing the others and can resume; the
// other engine calls of a view run between steps; an engine error reaches
// the callers of its step and the loop goes on. Orders are read from the
// observer's trace; a step is held open by an observer that waits, so what
// arrives meanwhile is known to be queued (no timing is asserted).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "server/completion/decode/candidates.h"
#include "server/completion/decode/engine_backend.h"
#include "server/completion/decode/step_loop.h"
#include "tests/server/completion/fake_lm.h"
#include "tests/server/completion/stories_engine.h"

using namespace qf::server::completion;
using qf::cancel_reason;
using qf::cancel_source;
using qf::cancel_token;
using qf::test::fake_backend;

namespace {

// ---- helpers ----------------------------------------------------------------

// Waits (up to 20 s) for `pred`; false when it never held.
template <class P>
bool eventually(P pred) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// The observer: records every step, and holds the steps named by hold_step
// open (the leader waits in it, so no other step starts) until released.
class step_recorder {
 public:
  void attach(step_loop& loop) {
    loop.set_observer([this](const std::vector<step_trace_entry>& s) { seen(s); });
  }
  // Step n (1: the first) will wait in the observer until released.
  void hold_step(size_t n) {
    std::lock_guard<std::mutex> l(m_);
    holds_.insert(n);
  }
  bool holding() {
    std::lock_guard<std::mutex> l(m_);
    return held_ != 0;
  }
  // Lets the step held now go on.
  void release() {
    {
      std::lock_guard<std::mutex> l(m_);
      holds_.erase(held_);
      held_ = 0;
    }
    cv_.notify_all();
  }
  std::vector<std::vector<step_trace_entry>> steps() {
    std::lock_guard<std::mutex> l(m_);
    return steps_;
  }

 private:
  void seen(const std::vector<step_trace_entry>& s) {
    {
      std::unique_lock<std::mutex> l(m_);
      steps_.push_back(s);
      const size_t n = steps_.size();
      if (holds_.count(n)) {
        held_ = n;
        cv_.wait(l, [&] { return !holds_.count(n); });
      }
    }
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::set<size_t> holds_;
  size_t held_ = 0;
  std::vector<std::vector<step_trace_entry>> steps_;
};

std::vector<int32_t> letters(const std::string& s) { return std::vector<int32_t>(s.begin(), s.end()); }

// Greedy decoding of `n` tokens after `prompt`, with each step's logits row.
struct decoded {
  std::vector<int32_t> tokens;
  std::vector<std::vector<float>> logits;
};
decoded greedy(lm_sequence* seq, const std::vector<int32_t>& prompt, int n) {
  decoded d;
  lm_eval_result r = seq->eval(prompt, lm_logits::last, {}, lm_output::full);
  EXPECT_EQ(r.n_evaluated, static_cast<int64_t>(prompt.size()));
  for (int k = 0; k < n; ++k) {
    const int32_t t = seq->best_token(0);
    const std::span<const float> l = seq->logits(0);
    d.tokens.push_back(t);
    d.logits.emplace_back(l.begin(), l.end());
    if (k + 1 == n) break;
    const int32_t one[1] = {t};
    r = seq->eval(one, lm_logits::last, {}, lm_output::full);
    EXPECT_EQ(r.n_evaluated, 1);
  }
  return d;
}

// A fake engine whose sequences report any edit made while a step runs, and
// whose eval_batch can be told to fail or to run a hook first.
class checked_backend final : public lm_backend {
 public:
  class sequence final : public lm_sequence {
   public:
    sequence(checked_backend& be, std::unique_ptr<lm_sequence> inner) : be_(be), inner_(std::move(inner)) {}
    ~sequence() override { be_.check("destroy"); }
    int64_t n_ctx() const override { return inner_->n_ctx(); }
    const std::vector<int32_t>& tokens() const override { return inner_->tokens(); }
    void keep_first(int64_t n) override {
      be_.check("keep_first");
      inner_->keep_first(n);
    }
    void move_range(int64_t b, int64_t e, int64_t d) override {
      be_.check("move_range");
      inner_->move_range(b, e, d);
    }
    lm_eval_result eval(std::span<const int32_t> toks, lm_logits mode, const cancel_token& cancel,
                        lm_output out) override {
      if (!be_.in_step_) be_.violations_.fetch_add(1);  // every eval goes through a step
      return inner_->eval(toks, mode, cancel, out);
    }
    int32_t best_token(int64_t i) const override { return inner_->best_token(i); }
    float best_logprob(int64_t i) const override { return inner_->best_logprob(i); }
    std::span<const float> logits(int64_t i) const override { return inner_->logits(i); }
    size_t kv_bytes() const override { return inner_->kv_bytes(); }
    void copy_prefix(const lm_sequence& src, int64_t n) override {
      be_.check("copy_prefix");
      // As the real engine: the source must be this engine's own sequence.
      const auto* s = dynamic_cast<const sequence*>(&src);
      if (!s) throw std::logic_error("copy_prefix from a sequence of another engine");
      inner_->copy_prefix(*s->inner_, n);
    }

   private:
    checked_backend& be_;
    std::unique_ptr<lm_sequence> inner_;
  };

  const lm_vocab& vocab() const override { return inner.vocab(); }
  std::unique_ptr<lm_sequence> new_sequence(int64_t n_ctx) override {
    check("new_sequence");
    return std::make_unique<sequence>(*this, inner.new_sequence(n_ctx));
  }
  size_t kv_bytes_per_token() const override { return inner.kv_bytes_per_token(); }
  int64_t n_ctx_train() const override { return 0; }
  std::string describe() const override { return "checked"; }
  std::vector<std::unique_ptr<lm_sequence>> fork(lm_sequence& parent, int64_t n, int count, int64_t) override {
    check("fork");
    auto* p = dynamic_cast<sequence*>(&parent);
    if (!p) throw std::logic_error("fork of a sequence of another engine");
    std::vector<std::unique_ptr<lm_sequence>> out;
    for (int i = 0; i < count; ++i) {
      auto s = std::make_unique<sequence>(*this, inner.new_sequence(parent.n_ctx()));
      s->copy_prefix(*p, n);
      out.push_back(std::move(s));
    }
    return out;
  }
  void eval_batch(std::span<lm_batch_entry> entries, lm_output out) override {
    for (const lm_batch_entry& e : entries)
      if (!dynamic_cast<sequence*>(e.seq)) throw std::logic_error("eval_batch of a sequence of another engine");
    in_step_ = true;
    struct done {
      std::atomic<bool>& f;
      ~done() { f = false; }
    } d{in_step_};
    batches_.fetch_add(1);
    if (hook) hook(entries);
    for (const lm_batch_entry& e : entries)
      for (int32_t t : e.toks)
        if (t == k_poison) throw std::runtime_error("engine failure");
    lm_backend::eval_batch(entries, out);
  }

  static constexpr int32_t k_poison = 299;  // a token this engine fails on
  fake_backend inner;
  std::function<void(std::span<lm_batch_entry>)> hook;  // runs in each batch, on the leading thread
  int violations() const { return violations_.load(); }
  int64_t batches() const { return batches_.load(); }

 private:
  void check(const char*) {
    if (in_step_) violations_.fetch_add(1);
  }
  std::atomic<bool> in_step_{false};
  std::atomic<int> violations_{0};
  std::atomic<int64_t> batches_{0};
};

// Runs fn on a thread (joined by the caller).
std::thread on_thread(std::function<void()> fn) { return std::thread(std::move(fn)); }

// ---- the real engine ------------------------------------------------------------

const char* const k_texts[] = {
    "Once upon a time",
    "The little dog ran to the park and saw a big red ball. He wanted to play with it",
    "Lily and her mom went to the store",
    ("One day, a boy named Tim found a shiny rock in the garden. He picked it up and showed it to his friend Sue. "
     "They looked at the rock and"),
    "The sun was",
    "There was a cat who liked to sleep in the sun every day, and one morning",
    "Ben had a toy car. He liked to",
    "A bird sat on a tree and sang a happy song to the children who played below, until the rain came and",
};

TEST(step_loop, sequences_on_their_own_threads_decode_as_alone_on_the_real_engine) {
  if (qf::test::stories_model().empty()) GTEST_SKIP() << "stories260K not found (set QUICKFILL_TEST_DATA to the shared data)";
  std::shared_ptr<lm_backend> be = qf::test::load_stories_engine();
  ASSERT_TRUE(be);
  constexpr int k_new = 16;
  std::vector<std::vector<int32_t>> prompts;
  std::vector<decoded> alone;
  for (const char* t : k_texts) {
    std::vector<int32_t> p = {be->vocab().specials().bos};
    for (int32_t id : be->vocab().encode(t)) p.push_back(id);
    prompts.push_back(p);
    alone.push_back(greedy(be->new_sequence(256).get(), p, k_new));
  }
  ASSERT_GT(prompts[3].size(), 16u);  // some prompts are cut into chunks (prefill_rows below)
  for (int B = 1; B <= 8; ++B) {
    // The first step is held until every thread's first eval is queued, and steps wait for
    // every owner whose eval they finished to queue its next one (until it is forgotten): the
    // threads' decoding shares steps however the threads are scheduled.
    step_loop loop(be, step_loop_options{2, 16, 60'000.0});
    step_recorder rec;
    rec.attach(loop);
    rec.hold_step(1);
    std::vector<std::unique_ptr<lm_backend>> views;
    std::vector<std::unique_ptr<lm_sequence>> seqs;
    for (int i = 0; i < B; ++i) {
      views.push_back(loop.view(static_cast<std::uint64_t>(i + 1)));
      seqs.push_back(views.back()->new_sequence(256));
    }
    std::vector<decoded> got(B);
    std::vector<std::thread> threads;
    for (int i = 0; i < B; ++i)
      threads.push_back(on_thread([&, i] {
        got[i] = greedy(seqs[i].get(), prompts[i], k_new);
        loop.forget(static_cast<std::uint64_t>(i + 1));
      }));
    ASSERT_TRUE(eventually([&] { return rec.holding(); }));
    int finished = 0;  // in the first step
    const auto first = rec.steps();
    for (const step_trace_entry& e : first.at(0)) finished += e.finished ? 1 : 0;
    ASSERT_TRUE(eventually([&] { return loop.load(0).sequences == B - finished; }));
    rec.release();
    for (auto& t : threads) t.join();
    seqs.clear();
    for (int i = 0; i < B; ++i) {
      EXPECT_EQ(got[i].tokens, alone[i].tokens) << "B=" << B << " sequence " << i;
      ASSERT_EQ(got[i].logits.size(), alone[i].logits.size());
      for (size_t k = 0; k < got[i].logits.size(); ++k) {
        ASSERT_EQ(got[i].logits[k].size(), alone[i].logits[k].size());
        float worst = 0;
        for (size_t v = 0; v < got[i].logits[k].size(); ++v)
          worst = std::max(worst, std::abs(got[i].logits[k][v] - alone[i].logits[k][v]));
        EXPECT_LE(worst, 1e-4f) << "B=" << B << " sequence " << i << " token " << k;
      }
    }
    // Rows of one step, per step: no prefill beyond 16 rows besides the decode entries.
    int64_t runs = 0;  // evals and prompt chunks run
    const auto steps = rec.steps();
    for (const auto& s : steps) {
      int64_t prefill = 0;
      for (const step_trace_entry& e : s)
        if (e.rows > 2) prefill += e.rows;
      EXPECT_LE(prefill, 16);
      runs += static_cast<int64_t>(s.size());
    }
    EXPECT_EQ(loop.steps(), static_cast<int64_t>(steps.size()));
    if (B > 1) {
      EXPECT_LT(loop.steps(), runs) << "B=" << B << ": the evals never shared a step";
    }
  }
}

TEST(step_loop, candidates_forked_and_decoded_together_through_a_view_equal_those_on_the_engine) {
  if (qf::test::stories_model().empty()) GTEST_SKIP() << "stories260K not found (set QUICKFILL_TEST_DATA to the shared data)";
  std::shared_ptr<lm_backend> be = qf::test::load_stories_engine();
  ASSERT_TRUE(be);
  std::vector<int32_t> prompt = {be->vocab().specials().bos};
  for (int32_t id : be->vocab().encode("Once upon a time, there was a little girl named")) prompt.push_back(id);
  // n candidates from forks of the prompt's sequence, each on its own thread, their evals in an
  // eval_group on `b` (the engine itself, or a view of the loop).
  auto candidates = [&](lm_backend& b, int64_t* forks_made) {
    auto seq = b.new_sequence(256);
    candidate_forks forks(b, 256);
    fim_format fmt;
    fmt.stop_ids = {be->vocab().specials().eos};
    const cursor_context cx = make_cursor_context("x\n", 0, 1);
    const trigger_decision d;
    stop_checker stops(cx, d, false);
    gen_params p;
    p.max_tokens = 12;
    p.stop_rules = false;
    qf::infer::sampler_params sp;
    sp.temperature = 0.8f;
    sp.seed = 5;
    auto outs = generate_candidates(*seq, b.vocab(), fmt, prompt, stops, p, sp, 3, {}, &forks);
    std::vector<std::vector<int32_t>> gen;
    for (const auto& o : outs) gen.push_back(o.generated);
    if (forks_made) *forks_made = static_cast<int64_t>(forks.kv_bytes());
    return gen;
  };
  const auto direct = candidates(*be, nullptr);
  ASSERT_EQ(direct.size(), 3u);
  for (const auto& g : direct) EXPECT_FALSE(g.empty());
  EXPECT_NE(direct[1], direct[2]);  // sampled with different seeds
  step_loop loop(be);
  step_recorder rec;
  rec.attach(loop);
  auto view = loop.view(1);
  int64_t copied_bytes = -1;
  const auto through = candidates(*view, &copied_bytes);
  EXPECT_EQ(through, direct);
  EXPECT_EQ(copied_bytes, 0);  // the engine forked the view's sequence: no spare sequence was made
  bool three = false;  // one step held all three candidates' tokens
  for (const auto& st : rec.steps()) three = three || st.size() == 3;
  EXPECT_TRUE(three);
}

TEST(step_loop, forks_and_copies_of_view_sequences_continue_as_alone_on_the_real_engine) {
  if (qf::test::stories_model().empty()) GTEST_SKIP() << "stories260K not found (set QUICKFILL_TEST_DATA to the shared data)";
  std::shared_ptr<lm_backend> be = qf::test::load_stories_engine();
  ASSERT_TRUE(be);
  std::vector<int32_t> prompt = {be->vocab().specials().bos};
  for (int32_t id : be->vocab().encode("The little dog ran to the park and")) prompt.push_back(id);
  const decoded alone = greedy(be->new_sequence(256).get(), prompt, 8);
  step_loop loop(be);
  auto view = loop.view(1);
  auto parent = view->new_sequence(256);
  parent->eval(prompt, lm_logits::last, {}, lm_output::full);
  auto forks = view->fork(*parent, static_cast<int64_t>(prompt.size()), 2, 16);
  ASSERT_EQ(forks.size(), 2u);  // the engine's fork of the view's own sequence
  auto copy = view->new_sequence(256);
  copy->copy_prefix(*parent, static_cast<int64_t>(prompt.size()) - 3);
  std::vector<int32_t> rest(prompt.end() - 3, prompt.end());
  copy->eval(rest, lm_logits::last, {}, lm_output::full);
  for (lm_sequence* s : {forks[0].get(), forks[1].get(), copy.get()}) {
    EXPECT_EQ(s->tokens(), prompt);
    std::vector<int32_t> got;
    int32_t next = alone.tokens[0];
    for (int k = 0; k < 7; ++k) {
      const int32_t t[1] = {next};
      s->eval(t, lm_logits::last, {}, lm_output::best);
      got.push_back(next);
      next = s->best_token(0);
    }
    got.push_back(next);
    EXPECT_EQ(got, alone.tokens);
  }
  parent->keep_first(4);
  EXPECT_EQ(parent->tokens(), std::vector<int32_t>(prompt.begin(), prompt.begin() + 4));
  forks.clear();
}

// ---- the scripted engine ------------------------------------------------------

TEST(step_loop, a_long_prompt_is_cut_into_chunks_beside_the_others_decode_steps) {
  auto fake = std::make_shared<fake_backend>();
  // Each step waits for the owners whose evals it finished (as long as it takes): the decoder's next
  // token and the prompt's next chunk share every step.
  step_loop loop(fake, step_loop_options{2, 16, 60'000.0});
  step_recorder rec;
  rec.attach(loop);
  std::string text;
  for (int i = 0; i < 200; ++i) text += static_cast<char>('a' + (i * 7) % 26);
  const std::vector<int32_t> prompt = letters(text);
  std::atomic<bool> long_done{false};
  auto view1 = loop.view(1), view = loop.view(2);
  auto seq1 = view1->new_sequence(4096), seq = view->new_sequence(4096);

  // The decoder's first step is held until the prompt is queued behind it.
  rec.hold_step(1);
  std::thread decoder([&] {
    const int32_t first[2] = {'x', 'y'};
    seq1->eval(first, lm_logits::last, {}, lm_output::best);
    for (int n = 0; n < 1000 && !long_done.load(); ++n) {
      const int32_t t[1] = {seq1->best_token(0)};
      EXPECT_EQ(seq1->eval(t, lm_logits::last, {}, lm_output::best).n_evaluated, 1);
    }
  });
  ASSERT_TRUE(eventually([&] { return rec.holding(); }));
  lm_eval_result r;
  std::thread prompter([&] {
    r = seq->eval(prompt, lm_logits::last, {}, lm_output::best);
    loop.forget(2);  // done: the decoder's steps no longer wait for it
    long_done = true;
  });
  ASSERT_TRUE(eventually([&] { return loop.load(1).sequences == 1; }));
  rec.release();
  prompter.join();
  decoder.join();
  EXPECT_EQ(r.n_evaluated, 200);
  EXPECT_FALSE(r.cancelled);
  auto alone = fake->new_sequence(4096);
  alone->eval(prompt, lm_logits::last, {}, lm_output::best);
  EXPECT_EQ(seq->best_token(0), alone->best_token(0));
  EXPECT_EQ(seq->tokens(), prompt);

  int chunks = 0;
  int64_t rows = 0;
  for (const auto& s : rec.steps()) {
    for (const step_trace_entry& e : s) {
      if (e.owner != 2) continue;
      ++chunks;
      rows += e.rows;
      EXPECT_LE(e.rows, 16);
      EXPECT_EQ(e.finished, rows == 200);
      bool decode_beside = false;
      for (const step_trace_entry& o : s) decode_beside = decode_beside || (o.owner == 1 && o.rows == 1);
      EXPECT_TRUE(decode_beside) << "a chunk ran without the other owner's decode token";
    }
  }
  EXPECT_EQ(chunks, 13);  // 12 chunks of 16 and one of 8
  EXPECT_EQ(rows, 200);
}

TEST(step_loop, steps_take_entries_by_priority_then_the_owner_served_least_recently) {
  auto fake = std::make_shared<fake_backend>();
  step_loop loop(fake, step_loop_options{2, 8});
  step_recorder rec;
  rec.attach(loop);
  rec.hold_step(1);
  const std::vector<int32_t> eight = letters("abcdefgh"), one = letters("z");
  // Sequences are made before a step is held (new_sequence runs between steps).
  std::vector<std::unique_ptr<lm_backend>> views;
  std::vector<std::unique_ptr<lm_sequence>> seqs;
  auto make = [&](std::uint64_t owner) {
    views.push_back(loop.view(owner));
    seqs.push_back(views.back()->new_sequence(64));
    return seqs.back().get();
  };
  lm_sequence* lead = make(9);
  const std::uint64_t order[] = {1, 9, 3, 5, 2, 4, 1};
  std::vector<lm_sequence*> queued;
  for (std::uint64_t o : order) queued.push_back(make(o));
  // Owner 9 leads step 1, held open while the others queue.
  std::thread first([&] { lead->eval(one, lm_logits::last, {}, lm_output::best); });
  ASSERT_TRUE(eventually([&] { return rec.holding(); }));
  loop.set_priority(1, step_priority::background);
  loop.set_priority(2, step_priority::keystroke);
  loop.set_priority(3, step_priority::next_edit);
  loop.set_priority(4, step_priority::explicit_request);
  // Owner 9 (served in step 1) and owner 5 (never served), both keystrokes: 5 goes first.
  std::vector<std::thread> threads;
  for (size_t i = 0; i < queued.size(); ++i) {
    // The last two are decode entries (in the first step after the held one, whatever their priority).
    const std::vector<int32_t>& toks = i < 5 ? eight : one;
    lm_sequence* s = queued[i];
    threads.push_back(on_thread([&toks, s] {
      EXPECT_EQ(s->eval(toks, lm_logits::last, {}, lm_output::best).n_evaluated, static_cast<int64_t>(toks.size()));
    }));
    const int n = static_cast<int>(i) + 1;
    ASSERT_TRUE(eventually([&] { return loop.load(0).sequences == n; }));  // queued in this order
  }
  // What an eval of owner 1 (background) would meet: the other owners' 5 waiting entries, all
  // of them requests; it waits for their queued prompt rows (not owner 4's decode entry, which
  // shares its step).
  const lm_load l = loop.load(1);
  EXPECT_EQ(l.sequences, 5);
  EXPECT_EQ(l.foreground, 5);
  EXPECT_EQ(l.rows_waiting, 4 * 8);
  EXPECT_EQ(views[1]->load().sequences, 5);  // a view of owner 1
  // Owner 3 (next-edit) waits for the keystrokes' prompts (9, 5, 2), not background 1's; owner 2
  // (keystroke) for the other keystrokes' (9, 5); owner 5's own rows never count.
  EXPECT_EQ(loop.load(3).rows_waiting, 3 * 8);
  EXPECT_EQ(loop.load(2).rows_waiting, 2 * 8);
  EXPECT_EQ(loop.load(5).rows_waiting, 2 * 8);
  EXPECT_EQ(loop.load(2).foreground, 4);  // 9, 3, 5 and 4 (not background 1)
  EXPECT_GT(l.ms_per_step, 0.0);             // step 1 ran
  rec.release();
  first.join();
  for (auto& t : threads) t.join();
  seqs.clear();
  EXPECT_GT(loop.load(1).ms_per_row, 0.0);  // steps with prompt rows ran
  EXPECT_EQ(loop.load(1).sequences, 0);
  const auto steps = rec.steps();
  std::vector<std::vector<std::uint64_t>> owners;
  for (size_t i = 1; i < steps.size(); ++i) {
    owners.emplace_back();
    for (const step_trace_entry& e : steps[i]) owners.back().push_back(e.owner);
  }
  // Step 2: the decode entries (explicit before background), then 8 prefill rows: the keystroke
  // owners' first, those never served (5, then 2: arrival order) before 9 (served in step 1) though 9
  // came first; then next-edit 3, then background 1.
  const std::vector<std::vector<std::uint64_t>> want = {{4, 1, 5}, {2}, {9}, {3}, {1}};
  EXPECT_EQ(owners, want);
  EXPECT_EQ(steps[1][0].priority, step_priority::explicit_request);
  EXPECT_EQ(steps[1][2].priority, step_priority::keystroke);
}

TEST(step_loop, a_cancelled_entry_leaves_and_the_others_decode_as_alone) {
  auto checked = std::make_shared<checked_backend>();
  checked->inner.per_token = std::chrono::microseconds(2000);
  step_loop loop(checked, step_loop_options{2, 64});
  step_recorder rec;
  rec.attach(loop);
  const std::vector<int32_t> p1 = letters("hello world, hello"), p2 = letters("abcabcab"), p3 = letters("xyzzy xy");
  auto alone = [&](const std::vector<int32_t>& p) {
    fake_backend f;
    auto s = f.new_sequence(256);
    s->eval(p, lm_logits::last, {}, lm_output::best);
    std::vector<int32_t> out;
    for (int k = 0; k < 6; ++k) {
      const int32_t t[1] = {s->best_token(0)};
      out.push_back(t[0]);
      s->eval(t, lm_logits::last, {}, lm_output::best);
    }
    return out;
  };
  auto decode = [&](lm_sequence& s, const std::vector<int32_t>& p) {
    s.eval(p, lm_logits::last, {}, lm_output::best);
    std::vector<int32_t> out;
    for (int k = 0; k < 6; ++k) {
      const int32_t t[1] = {s.best_token(0)};
      out.push_back(t[0]);
      s.eval(t, lm_logits::last, {}, lm_output::best);
    }
    return out;
  };

  auto v1 = loop.view(1), v2 = loop.view(2), v3 = loop.view(3);
  auto s1 = v1->new_sequence(256), s2 = v2->new_sequence(256), s3 = v3->new_sequence(256);
  // 1. Cancelled while it waits: it returns while the step before it is still held.
  rec.hold_step(1);
  std::thread holder([&] {
    auto v = loop.view(9);
    auto s = v->new_sequence(64);
    s->eval(p2, lm_logits::last, {}, lm_output::best);
  });
  ASSERT_TRUE(eventually([&] { return rec.holding(); }));
  cancel_source waiting_cancel;
  std::atomic<bool> returned{false};
  lm_eval_result waited;
  std::thread waiter([&] {
    waited = s3->eval(p3, lm_logits::last, waiting_cancel.token(), lm_output::best);
    returned = true;
  });
  ASSERT_TRUE(eventually([&] { return loop.load(0).sequences == 1; }));
  waiting_cancel.cancel(cancel_reason::cancelled);
  EXPECT_TRUE(eventually([&] { return returned.load(); }));
  EXPECT_TRUE(rec.holding());  // it left while the step ahead of it was still running
  waiter.join();
  EXPECT_TRUE(waited.cancelled);
  EXPECT_EQ(waited.n_evaluated, 0);
  rec.release();
  holder.join();

  // 2. Cancelled during its step (the engine sees it cancelled when the batch
  // starts), beside two other owners' prompts; s3 resumes after its cancel.
  cancel_source mid;
  std::atomic<bool> cancelled_mid{false};
  checked->hook = [&](std::span<lm_batch_entry> es) {
    if (es.size() < 2 || cancelled_mid) return;
    for (const lm_batch_entry& e : es)
      if (std::equal(e.toks.begin(), e.toks.end(), p2.begin(), p2.end())) {
        mid.cancel(cancel_reason::cancelled);
        cancelled_mid = true;
      }
  };
  rec.hold_step(rec.steps().size() + 1);
  std::thread holder2([&] {
    auto v = loop.view(9);
    auto s = v->new_sequence(64);
    s->eval(p3, lm_logits::last, {}, lm_output::best);
  });
  ASSERT_TRUE(eventually([&] { return rec.holding(); }));
  std::vector<int32_t> got1, got3;
  lm_eval_result r2;
  std::thread t1([&] { got1 = decode(*s1, p1); });
  std::thread t2([&] { r2 = s2->eval(p2, lm_logits::last, mid.token(), lm_output::best); });
  std::thread t3([&] { got3 = decode(*s3, p3); });
  ASSERT_TRUE(eventually([&] { return loop.load(0).sequences == 3; }));
  rec.release();
  holder2.join();
  t1.join();
  t2.join();
  t3.join();
  EXPECT_TRUE(cancelled_mid.load());
  EXPECT_EQ(got1, alone(p1));
  EXPECT_EQ(got3, alone(p3));
  EXPECT_TRUE(r2.cancelled);
  EXPECT_EQ(r2.n_evaluated, 0);
  EXPECT_TRUE(s2->tokens().empty());
  EXPECT_EQ(decode(*s2, p2), alone(p2));  // it resumes
  bool cancel_in_trace = false;
  for (const auto& s : rec.steps())
    for (const step_trace_entry& e : s) cancel_in_trace = cancel_in_trace || (e.owner == 2 && e.cancelled);
  EXPECT_TRUE(cancel_in_trace);
  EXPECT_EQ(checked->violations(), 0);
}

TEST(step_loop, keep_first_copy_prefix_and_fork_through_views_run_between_steps) {
  auto checked = std::make_shared<checked_backend>();
  checked->inner.per_token = std::chrono::microseconds(500);
  step_loop loop(checked);
  auto v1 = loop.view(1), v2 = loop.view(2);
  auto busy = v1->new_sequence(4096);
  std::atomic<bool> stop{false};
  // Owner 1 keeps the engine busy with steps while owner 2 edits its sequences.
  std::thread decoder([&] {
    const int32_t first[2] = {'q', 'r'};
    busy->eval(first, lm_logits::last, {}, lm_output::best);
    while (!stop.load()) {
      const int32_t t[1] = {busy->best_token(0)};
      busy->eval(t, lm_logits::last, {}, lm_output::best);
    }
  });
  const std::vector<int32_t> p = letters("abcdefghij");
  for (int round = 0; round < 20; ++round) {
    auto a = v2->new_sequence(256), b = v2->new_sequence(256);
    ASSERT_EQ(a->eval(p, lm_logits::last, {}, lm_output::best).n_evaluated, 10);
    const int32_t next = a->best_token(0);
    a->keep_first(6);
    EXPECT_EQ(a->tokens(), letters("abcdef"));
    a->eval(std::span<const int32_t>(p).subspan(6), lm_logits::last, {}, lm_output::best);
    EXPECT_EQ(a->best_token(0), next);  // the cache is exact after the cut
    b->copy_prefix(*a, 8);              // from a view: the engine gets its own sequence
    EXPECT_EQ(b->tokens(), letters("abcdefgh"));
    a->move_range(8, 10, 6);
    EXPECT_EQ(a->tokens(), letters("abcdefij"));
    auto forks = v2->fork(*a, 5, 2, 16);
    ASSERT_EQ(forks.size(), 2u);
    for (auto& f : forks) {
      EXPECT_EQ(f->tokens(), letters("abcde"));
      const int32_t t[1] = {'z'};
      EXPECT_EQ(f->eval(t, lm_logits::last, {}, lm_output::best).n_evaluated, 1);  // forks evaluate in steps
    }
    // Two forks evaluated together (one view eval_batch) share a step.
    const int32_t t1[1] = {'y'}, t2[1] = {'x'};
    lm_batch_entry es[2];
    es[0].seq = forks[0].get();
    es[0].toks = t1;
    es[1].seq = forks[1].get();
    es[1].toks = t2;
    v2->eval_batch(es, lm_output::best);
    EXPECT_EQ(es[0].result.n_evaluated, 1);
    EXPECT_EQ(es[1].result.n_evaluated, 1);
    EXPECT_EQ(forks[0]->tokens(), letters("abcdezy"));
    EXPECT_EQ(forks[1]->tokens(), letters("abcdezx"));
  }
  stop = true;
  decoder.join();
  busy.reset();
  EXPECT_EQ(checked->violations(), 0);
  EXPECT_GT(loop.steps(), 20);
}

TEST(step_loop, an_engine_error_reaches_the_callers_of_its_step_and_the_loop_goes_on) {
  auto checked = std::make_shared<checked_backend>();
  step_loop loop(checked);
  step_recorder rec;
  rec.attach(loop);
  auto v1 = loop.view(1), v2 = loop.view(2), v3 = loop.view(3), v4 = loop.view(4), v9 = loop.view(9);
  auto s1 = v1->new_sequence(64), s2 = v2->new_sequence(64), s3 = v3->new_sequence(64), s4 = v4->new_sequence(4),
       s9 = v9->new_sequence(64);
  const std::vector<int32_t> poison = {'a', checked_backend::k_poison}, fine = letters("abc"), big = letters("abcdef");
  auto eval_on = [](lm_sequence* s, const std::vector<int32_t>& t, std::atomic<int>& errors) {
    return std::thread([s, &t, &errors] {
      try {
        s->eval(t, lm_logits::last, {}, lm_output::best);
      } catch (const std::runtime_error&) {
        ++errors;
      }
    });
  };
  // Step 2 holds owner 1's failing eval and owner 2's: the batch fails, owner 2's eval (which
  // committed nothing) runs again alone, and only owner 1 gets the error.
  rec.hold_step(1);
  std::atomic<int> e9{0}, e1{0}, e2{0}, e3{0}, e4{0};
  std::thread lead = eval_on(s9.get(), fine, e9);
  ASSERT_TRUE(eventually([&] { return rec.holding(); }));
  std::thread t1 = eval_on(s1.get(), poison, e1);
  std::thread t2 = eval_on(s2.get(), fine, e2);
  ASSERT_TRUE(eventually([&] { return loop.load(0).sequences == 2; }));
  rec.hold_step(2);
  rec.release();
  ASSERT_TRUE(eventually([&] { return rec.holding(); }));
  // Step 3: owner 4's eval overflows its sequence (an engine error of its own), owner 3's runs.
  std::thread t4 = eval_on(s4.get(), big, e4);
  std::thread t3 = eval_on(s3.get(), fine, e3);
  ASSERT_TRUE(eventually([&] { return loop.load(0).sequences == 2; }));
  rec.release();
  for (std::thread* t : {&lead, &t1, &t2, &t3, &t4}) t->join();
  EXPECT_EQ(e9.load(), 0);
  EXPECT_EQ(e1.load(), 1);
  EXPECT_EQ(e2.load(), 0);
  EXPECT_EQ(e3.load(), 0);
  EXPECT_EQ(e4.load(), 1);
  EXPECT_EQ(s3->tokens(), fine);
  EXPECT_EQ(s2->tokens(), fine);  // as alone
  EXPECT_EQ(s2->best_token(0), s3->best_token(0));
  EXPECT_EQ(s1->tokens(), std::vector<int32_t>{});
  const auto steps = rec.steps();
  ASSERT_GE(steps.size(), 3u);
  EXPECT_EQ(steps[1].size(), 2u);
  EXPECT_EQ(steps[2].size(), 2u);
  // The loop goes on: the failed owner evaluates again.
  EXPECT_EQ(s1->eval(fine, lm_logits::last, {}, lm_output::best).n_evaluated, 3);
  EXPECT_EQ(s1->best_token(0), s3->best_token(0));
}

TEST(step_loop, an_owner_with_an_eval_still_queued_is_not_waited_for) {
  auto fake = std::make_shared<fake_backend>();
  // Each step would wait (as long as it takes) for the owners whose evals it finished: not for one
  // whose thread still waits for another eval of its own.
  step_loop loop(fake, step_loop_options{2, 16, 600'000.0});
  auto view = loop.view(1);
  auto a = view->new_sequence(4096), b = view->new_sequence(4096);
  std::string text;
  for (int i = 0; i < 100; ++i) text += static_cast<char>('a' + (i * 5) % 26);
  const std::vector<int32_t> prompt = letters(text), one = letters("x");
  lm_batch_entry batch[2];
  batch[0].seq = a.get();
  batch[0].toks = one;
  batch[1].seq = b.get();
  batch[1].toks = prompt;
  std::atomic<bool> done{false};
  // The decode entry finishes in the first step, the prompt's chunks run in the next ones.
  std::thread t([&] {
    view->eval_batch(batch, lm_output::best);
    done = true;
  });
  const bool returned = eventually([&] { return done.load(); });
  loop.forget(1);  // (were it waited for: the wait ends here)
  t.join();
  EXPECT_TRUE(returned) << "a step waited for the owner whose prompt was still queued";
  EXPECT_EQ(batch[0].result.n_evaluated, 1);
  EXPECT_EQ(batch[1].result.n_evaluated, 100);
  EXPECT_EQ(b->tokens(), prompt);
  EXPECT_GE(loop.steps(), 7);  // 6 chunks of 16 and one of 4
}

}  // namespace
