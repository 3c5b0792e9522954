// The pipeline on the real engine: a tiny synthetic Qwen2-shaped model
// written in the test (random weights, real tokenizer and FIM tokens), the
// factory's error reporting, and FIM detection on real code-model vocabularies
// from the shared test data (skipped when absent).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "inference/convert/synth_model.h"
#include "inference/gguf/gguf.h"
#include "inference/tokenizer/tokenizer.h"
#include "server/completion/decode/engine_backend.h"
#include "server/completion/prompt/fim_format.h"
#include "server/completion/pipeline/pipeline.h"
#include "server/completion/prompt/prompt_layout.h"
#include "server/completion/pipeline/provider_factory.h"
#include "tests/shared_test_data.h"

namespace fs = std::filesystem;
using namespace qf::server;
using namespace qf::server::completion;

namespace {

fs::path temp_dir() {
  fs::path d = fs::temp_directory_path() / ("qf_completion_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

const std::string& tiny_model() {
  static const std::string path = [] {
    auto spec = qf::infer::convert::synth_preset("tiny", "qwen2");
    spec.n_ctx = 2048;
    spec.n_vocab = 1024;
    spec.init_std = 0.5f;  // larger weights: logits far from ties, so greedy is well defined
    std::string p = (temp_dir() / "tiny-qwen2.gguf").string();
    qf::infer::convert::write_synth_model(spec, qf::infer::ggml_type::f32, p);
    return p;
  }();
  return path;
}

// A one-layer model with the tiny model's tokenizer (same seed and vocabulary
// size), or with another one (another seed), to draft for it.
std::string draft_model(uint64_t seed) {
  auto spec = qf::infer::convert::synth_preset("tiny", "qwen2");
  spec.n_ctx = 2048;
  spec.n_vocab = 1024;
  spec.n_layer = 1;
  spec.init_std = 0.5f;
  spec.seed = seed;
  std::string p = (temp_dir() / ("draft-qwen2-" + std::to_string(seed) + ".gguf")).string();
  if (!fs::exists(p)) qf::infer::convert::write_synth_model(spec, qf::infer::ggml_type::f32, p);
  return p;
}

std::unique_ptr<completion_provider> load(const completion_settings& settings, std::string* err = nullptr) {
  provider_options o;
  o.model_path = tiny_model();
  o.completion = settings;
  o.engine.threads = 1;
  std::string e;
  auto p = make_completion_provider(o, &e);
  if (err) *err = e;
  return p;
}

std::string source() {
  std::string s = "import os\n\n";
  for (int i = 0; i < 6; ++i) s += "def f" + std::to_string(i) + "(x):\n    return x * " + std::to_string(i) + "\n\n";
  s += "def main():\n    total = 0\n    \n    print(total)\n";
  return s;
}
constexpr int64_t k_line = 22;  // the empty indented line in main()

completion_request request(const std::string& text, int64_t line, int64_t col) {
  completion_request r;
  r.uri = "file:///w/main.py";
  r.text = text;
  r.cursor = {line, col};
  r.explicit_trigger = true;
  r.received = clock::now();
  return r;
}

// Removes the files the tests wrote.
class temp_cleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(temp_dir(), ec);
  }
};
const auto* const k_cleanup = ::testing::AddGlobalTestEnvironment(new temp_cleanup);

std::string test_data() { return qf::test::shared_test_data(QUICKFILL_TEST_DATA_DIR); }

}  // namespace

TEST(engine_pipeline, loads_and_detects_the_fim_format) {
  std::string err;
  auto p = load({}, &err);
  ASSERT_TRUE(p) << err;
  auto* pl = dynamic_cast<pipeline*>(p.get());
  ASSERT_NE(pl, nullptr);
  EXPECT_TRUE(pl->format().has_fim);
  EXPECT_TRUE(pl->format().repo_level());
  EXPECT_EQ(pl->format().family, "qwen2.5-coder");
  EXPECT_FALSE(p->describe().empty());
}

TEST(engine_pipeline, second_request_after_one_character_evaluates_only_a_few_tokens) {
  auto p = load(completion_settings{.max_tokens_auto = 4, .max_tokens_explicit = 4, .type_through = false});
  ASSERT_TRUE(p);
  std::string text = source();
  completion_result r1 = p->complete(request(text, k_line, 4), {});
  EXPECT_GT(r1.metrics.tokens_evaluated, 50);
  for (const char* typed : {"r", "e", "t"}) {
    const int64_t col = static_cast<int64_t>(offset_of(text, k_line, 99) - offset_of(text, k_line, 0));
    text.insert(offset_of(text, k_line, col), typed);
    completion_result r = p->complete(request(text, k_line, col + 1), {});
    EXPECT_TRUE(r.metrics.cache_hit);
    EXPECT_LE(r.metrics.tokens_evaluated, 3) << "after typing '" << typed << "'";
    EXPECT_GT(r.metrics.tokens_reused, 50);
  }
}

TEST(engine_pipeline, speculative_output_equals_greedy_output) {
  completion_settings common;
  common.type_through = false;
  common.stop_rules = false;
  common.max_tokens_explicit = 24;
  completion_settings greedy_settings = common, spec_settings = common;
  greedy_settings.speculative = false;
  spec_settings.speculative = true;
  spec_settings.draft_max = 6;
  spec_settings.draft_ngram = 1;
  auto greedy = load(greedy_settings);
  auto spec = load(spec_settings);
  ASSERT_TRUE(greedy && spec);
  std::string text = source();
  for (int64_t line : {k_line, int64_t{4}, int64_t{10}}) {
    completion_result g = greedy->complete(request(text, line, 4), {});
    completion_result s = spec->complete(request(text, line, 4), {});
    ASSERT_EQ(g.items.size(), s.items.size());
    if (!g.items.empty()) {
      EXPECT_EQ(g.items[0].insert_text, s.items[0].insert_text) << "line " << line;
    }
    EXPECT_EQ(g.metrics.tokens_generated, s.metrics.tokens_generated);
    EXPECT_EQ(g.metrics.tokens_drafted, 0);
    EXPECT_GT(s.metrics.tokens_drafted, 0);
  }
}

// A draft model given by name goes through the resolver (the server passes
// the models folder's lookup), never the working directory, which for an
// editor is often the repository.
TEST(engine_pipeline, a_draft_model_name_is_not_taken_from_the_working_directory) {
  const fs::path dir = temp_dir() / "draft_by_name";
  fs::create_directories(dir / "repo");
  fs::create_directories(dir / "models");
  fs::copy_file(draft_model(1), dir / "repo" / "planted.gguf", fs::copy_options::overwrite_existing);
  const fs::path old = fs::current_path();
  fs::current_path(dir / "repo");
  completion_settings s;
  s.speculative = true;
  s.draft_max = 4;
  s.draft_model = "planted.gguf";
  provider_options o;
  o.model_path = tiny_model();
  o.completion = s;
  o.engine.threads = 1;
  auto has_draft = [&]() {
    std::string e;
    auto p = make_completion_provider(o, &e);
    EXPECT_TRUE(p) << e;
    auto* pl = dynamic_cast<pipeline*>(p.get());
    return pl != nullptr && pl->draft_model() != nullptr;
  };
  EXPECT_FALSE(has_draft());  // no resolver: a name is refused
  o.resolve_model = [&](const std::string& n) { return (dir / "models" / n).string(); };
  EXPECT_FALSE(has_draft());  // not in the models folder: not loaded from the repository either
  fs::copy_file(dir / "repo" / "planted.gguf", dir / "models" / "planted.gguf", fs::copy_options::overwrite_existing);
  EXPECT_TRUE(has_draft());  // from the models folder
  fs::current_path(old);
}

TEST(engine_pipeline, a_draft_model_keeps_the_greedy_output) {
  completion_settings common;
  common.type_through = false;
  common.stop_rules = false;
  common.max_tokens_explicit = 24;
  common.sampling_explicit = sampling_settings{};  // greedy, one candidate
  common.speculative = true;
  common.draft_max = 4;
  completion_settings drafted = common;
  drafted.draft_model = draft_model(1);
  drafted.draft_min_prob = 0;  // always draft: every proposal is verified
  auto lookup = load(common);
  auto spec = load(drafted);
  ASSERT_TRUE(lookup && spec);
  auto* pl = dynamic_cast<pipeline*>(spec.get());
  ASSERT_NE(pl, nullptr);
  ASSERT_NE(pl->draft_model(), nullptr);
  EXPECT_NE(spec->describe().find("drafts by"), std::string::npos);
  const std::string text = source();
  for (int64_t line : {k_line, int64_t{4}, int64_t{10}}) {
    // Twice: the first request finds the drafter cold (prompt lookup), the
    // background catches it up, the second one drafts with the model.
    for (int pass = 0; pass < 2; ++pass) {
      completion_result g = lookup->complete(request(text, line, 4), {});
      completion_result s = spec->complete(request(text, line, 4), {});
      while (spec->background_step({})) {
      }
      ASSERT_EQ(g.items.size(), s.items.size());
      if (!g.items.empty()) {
        EXPECT_EQ(g.items[0].insert_text, s.items[0].insert_text) << "line " << line;
      }
      EXPECT_EQ(g.metrics.tokens_generated, s.metrics.tokens_generated);
    }
  }
  EXPECT_GT(pl->draft_model()->stats().model_drafts, 0);
  EXPECT_GT(pl->draft_model()->stats().caught_up, 0);

  // Another tokenizer is refused with a reason; prompt lookup stays.
  drafted.draft_model = draft_model(2);
  spec->configure(drafted);
  EXPECT_EQ(pl->draft_model(), nullptr);
  std::string why;
  EXPECT_FALSE(pl->load_draft_model(&why));
  EXPECT_NE(why.find("tokenizer"), std::string::npos) << why;
  // A file that is not there: a reason too, and completions go on.
  drafted.draft_model = (temp_dir() / "missing.gguf").string();
  spec->configure(drafted);
  EXPECT_EQ(pl->draft_model(), nullptr);
  EXPECT_GT(spec->complete(request(text, k_line, 4), {}).metrics.tokens_generated, 0);
  // Turned off again.
  drafted.draft_model.clear();
  spec->configure(drafted);
  EXPECT_EQ(pl->draft_model(), nullptr);
}

// Three candidates on the real engine: the prompt is evaluated once, the
// greedy one is token for token the single greedy answer (each candidate
// continues the one prompt KV after the slot is cut back to it), sampling
// repeats itself given the seed, and the prompt stays cached for the next request.
TEST(engine_pipeline, candidates_share_the_prompt_kv) {
  completion_settings common;
  common.type_through = false;
  common.stop_rules = false;
  common.speculative = false;
  common.max_tokens_explicit = 8;
  completion_settings one = common, three = common;
  one.sampling_explicit.temperature = 0;
  three.sampling_explicit = sampling_settings{.temperature = 1.0, .top_k = 0, .top_p = 1, .min_p = 0,
                                              .candidates = 3};
  auto greedy = load(one);
  auto sampled = load(three);
  ASSERT_TRUE(greedy && sampled);
  const std::string text = source();
  const completion_result g = greedy->complete(request(text, k_line, 4), {});
  const completion_result r = sampled->complete(request(text, k_line, 4), {});
  ASSERT_EQ(g.items.size(), 1u);
  EXPECT_EQ(g.metrics.candidates, 1);
  EXPECT_EQ(r.metrics.candidates, 3);
  EXPECT_GT(r.metrics.tokens_evaluated, 50);
  EXPECT_EQ(r.metrics.tokens_evaluated, g.metrics.tokens_evaluated) << "the prompt is evaluated once";
  EXPECT_EQ(r.metrics.tokens_generated, 24);
  ASSERT_FALSE(r.items.empty());
  bool has_greedy = false;
  for (const auto& c : r.items) {
    has_greedy |= c.insert_text == g.items[0].insert_text;
    ASSERT_TRUE(c.score.has_value());
    EXPECT_LT(*c.score, 0.0);
  }
  EXPECT_TRUE(has_greedy) << "the greedy candidate equals the single greedy answer";
  EXPECT_NEAR(*g.items[0].score, *std::find_if(r.items.begin(), r.items.end(), [&](const auto& c) {
                                      return c.insert_text == g.items[0].insert_text;
                                    })->score, 1e-4);
  // Again: the same candidates from the cached prompt (one token evaluated).
  const completion_result again = sampled->complete(request(text, k_line, 4), {});
  EXPECT_LE(again.metrics.tokens_evaluated, 1);
  ASSERT_EQ(again.items.size(), r.items.size());
  for (size_t i = 0; i < r.items.size(); ++i) EXPECT_EQ(again.items[i].insert_text, r.items[i].insert_text) << i;
}

TEST(engine_pipeline, cancelled_request_keeps_the_prompt_in_the_cache) {
  auto p = load(completion_settings{.type_through = false});
  ASSERT_TRUE(p);
  std::string text = source();
  qf::cancel_source src;
  src.cancel(qf::cancel_reason::content_modified);
  // Cancelled before anything: nothing is answered.
  completion_result r0 = p->complete(request(text, k_line, 4), src.token());
  EXPECT_TRUE(r0.items.empty());
  completion_result r1 = p->complete(request(text, k_line, 4), {});
  const int64_t prompt_len = r1.metrics.tokens_reused + r1.metrics.tokens_evaluated;
  completion_result r2 = p->complete(request(text, k_line, 4), {});
  EXPECT_EQ(r2.metrics.tokens_reused, prompt_len - 1);
}

TEST(engine_pipeline, factory_reports_bad_files_without_throwing) {
  std::string err;
  provider_options o;
  o.model_path = (temp_dir() / "missing.gguf").string();
  EXPECT_EQ(make_completion_provider(o, &err), nullptr);
  EXPECT_FALSE(err.empty());

  const std::string corrupt = (temp_dir() / "corrupt.gguf").string();
  {
    std::ofstream f(corrupt, std::ios::binary);
    f << "GGUF\x03\x00\x00\x00garbage that is not a header";
  }
  o.model_path = corrupt;
  err.clear();
  EXPECT_EQ(make_completion_provider(o, &err), nullptr);
  EXPECT_NE(err.find("model"), std::string::npos) << err;

  const std::string unknown = (temp_dir() / "unknown-arch.gguf").string();
  {
    qf::infer::gguf::writer w;
    w.add_string("general.architecture", "gpt9");
    w.write(unknown);
  }
  o.model_path = unknown;
  err.clear();
  EXPECT_EQ(make_completion_provider(o, &err), nullptr);
  EXPECT_NE(err.find("gpt9"), std::string::npos) << err;

  o.model_path.clear();
  err.clear();
  EXPECT_EQ(make_completion_provider(o, &err), nullptr);
  EXPECT_FALSE(err.empty());
}

TEST(engine_pipeline, fim_formats_of_real_vocabularies) {
  const fs::path dir = fs::path(test_data()) / "vocab";
  if (!fs::exists(dir / "ggml-vocab-starcoder.gguf"))
    GTEST_SKIP() << "shared test data not found at " << dir << " (set QUICKFILL_TEST_DATA)";
  auto detect = [&](const char* name) {
    auto f = qf::infer::gguf::file::open((dir / name).string());
    auto tok = qf::infer::tokenizer::from_gguf(*f);
    auto v = make_engine_vocab(*tok);
    return detect_fim_format(*v);
  };
  fim_format sc = detect("ggml-vocab-starcoder.gguf");
  EXPECT_TRUE(sc.has_fim);
  EXPECT_EQ(sc.pre, 1);
  EXPECT_EQ(sc.mid, 2);
  EXPECT_EQ(sc.suf, 3);
  EXPECT_EQ(sc.pad, 4);
  EXPECT_EQ(sc.family, "starcoder2");
  fim_format ds = detect("ggml-vocab-deepseek-coder.gguf");
  EXPECT_TRUE(ds.has_fim);
  EXPECT_EQ(ds.family, "deepseek-coder");
  fim_format qw = detect("ggml-vocab-qwen2.gguf");  // the base Qwen2 vocabulary has no FIM tokens
  EXPECT_FALSE(qw.has_fim);
}

TEST(engine_pipeline, forks_share_the_slot_cells_and_continue_as_alone) {
  engine_options eo;
  eo.threads = 1;
  std::string err;
  auto be = load_engine_backend(tiny_model(), eo, &err);
  ASSERT_TRUE(be) << err;
  const std::vector<int32_t> prompt = be->vocab().encode("def add(a, b):\n    return a + b\n\ndef sub(a, b):\n");
  ASSERT_GT(prompt.size(), 17u);
  auto slot = be->new_sequence(256);
  slot->eval(prompt, lm_logits::last, {}, lm_output::best);
  auto forks = be->fork(*slot, static_cast<int64_t>(prompt.size()), 2, 24);
  ASSERT_EQ(forks.size(), 2u);
  EXPECT_EQ(forks[0]->kv_bytes(), 0u) << "a fork holds no cells of its own until it writes";
  // Each continues with its own token, as a sequence that evaluated everything itself.
  const int32_t toks[3] = {be->vocab().encode("x")[0], be->vocab().encode("y")[0], be->vocab().encode("z")[0]};
  std::vector<lm_batch_entry> es(3);
  lm_sequence* seqs[3] = {slot.get(), forks[0].get(), forks[1].get()};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(seqs[i]->tokens(), prompt);
    es[static_cast<size_t>(i)].seq = seqs[i];
    es[static_cast<size_t>(i)].toks = std::span<const int32_t>(&toks[i], 1);
  }
  be->eval_batch(es, lm_output::full);
  for (int i = 0; i < 3; ++i) {
    auto alone = be->new_sequence(256);
    std::vector<int32_t> all = prompt;
    all.push_back(toks[i]);
    alone->eval(all, lm_logits::last, {}, lm_output::full);
    const auto a = alone->logits(0), b = seqs[i]->logits(0);
    ASSERT_EQ(a.size(), b.size());
    double num = 0, den = 0;
    for (size_t j = 0; j < a.size(); ++j) num += (a[j] - b[j]) * (a[j] - b[j]), den += a[j] * a[j];
    EXPECT_LT(std::sqrt(num / den), 1e-4) << "sequence " << i;
  }
  // No room for that many: the caller copies instead.
  EXPECT_TRUE(be->fork(*slot, static_cast<int64_t>(prompt.size()), 8, 400).empty());
  forks.clear();
  EXPECT_EQ(be->fork(*slot, 4, 1, 8).size(), 1u) << "the forks' blocks came back";
}
