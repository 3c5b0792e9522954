// Next-edit prediction on the real engine: a tiny synthetic Qwen2-shaped
// model with Qwen2.5-Coder's special tokens (random weights, so what it
// predicts is arbitrary): the sweep prompt's <|file_sep|> is the one special
// token of the real vocabulary, and whatever the model writes comes back as
// well-formed edits of the document, or as silence.
#include <gtest/gtest.h>

#include <filesystem>

#include "text/lines.h"
#include "inference/convert/synth_model.h"
#include "server/completion/decode/engine_backend.h"
#include "server/completion/decode/kv_pool.h"
#include "server/completion/next_edit/next_edit.h"
#include "server/completion/next_edit/next_edit_diff.h"
#include "server/completion/pipeline/provider_factory.h"

namespace fs = std::filesystem;
using namespace qf::server;
using namespace qf::server::completion;

namespace {

const std::string& model_path() {
  static const std::string path = [] {
    const fs::path d = fs::temp_directory_path() / ("qf_next_edit_test_" + std::to_string(::getpid()));
    fs::create_directories(d);
    auto spec = qf::infer::convert::synth_preset("tiny", "qwen2");
    spec.n_ctx = 2048;
    spec.n_vocab = 1024;
    spec.init_std = 0.5f;
    const std::string p = (d / "tiny-qwen2.gguf").string();
    qf::infer::convert::write_synth_model(spec, qf::infer::ggml_type::f32, p);
    return p;
  }();
  return path;
}

class cleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(fs::path(model_path()).parent_path(), ec);
  }
};
const auto* const k_env = ::testing::AddGlobalTestEnvironment(new cleanup);

// The engine backend of the test model, on one thread (null, with a failure, when it does not load).
std::unique_ptr<lm_backend> load_backend() {
  std::string err;
  engine_options eo;
  eo.threads = 1;
  auto backend = load_engine_backend(model_path(), eo, &err);
  EXPECT_TRUE(backend) << err;
  return backend;
}

// The shipped provider on the test model with a forced next-edit format.
std::unique_ptr<completion_provider> provider_for(const std::string& format, int max_tokens) {
  provider_options o;
  o.model_path = model_path();
  o.completion.next_edit_format = format;
  o.completion.next_edit_max_tokens = max_tokens;
  o.engine.threads = 1;
  std::string err;
  auto p = make_completion_provider(o, &err);
  EXPECT_TRUE(p) << err;
  return p;
}

const std::string k_before = "def area(w, h):\n    return w * h\n\nprint(area(2, 3))\n";
const std::string k_after = "def area(width, h):\n    return w * h\n\nprint(area(2, 3))\n";

}  // namespace

TEST(next_edit_real_model, sweep_prompt_tokens_use_the_file_separator_token) {
  auto backend = load_backend();
  ASSERT_TRUE(backend);
  const int32_t sep = backend->vocab().find_token("<|file_sep|>");
  ASSERT_GE(sep, 0);
  completion_settings s;
  kv_pool pool(*backend, s);
  next_edit_engine engine(*backend, pool, s);
  next_edit_prompt_input in;
  in.path = "w/geo.py";
  in.text = k_after;
  in.region_begin = 0;
  in.region_end = k_after.size() - 1;
  in.context_end = in.region_end;
  in.original_region = k_before.substr(0, k_before.size() - 1);
  const next_edit_prompt p = build_next_edit_prompt(next_edit_family::sweep, in);
  std::vector<int32_t> want;
  if (backend->vocab().add_bos() && backend->vocab().specials().bos >= 0) want.push_back(backend->vocab().specials().bos);
  const std::string text = p.text();
  size_t at = 0;
  for (size_t k = text.find("<|file_sep|>"); k != std::string::npos; k = text.find("<|file_sep|>", at)) {
    const auto t = backend->vocab().encode(std::string_view(text).substr(at, k - at));
    want.insert(want.end(), t.begin(), t.end());
    want.push_back(sep);
    at = k + 12;
  }
  const auto t = backend->vocab().encode(std::string_view(text).substr(at));
  want.insert(want.end(), t.begin(), t.end());
  EXPECT_EQ(engine.tokenize(p), want);
  EXPECT_EQ(std::count(want.begin(), want.end(), sep), 3);
}

TEST(next_edit_real_model, whatever_the_model_writes_comes_back_as_valid_edits) {
  auto p = provider_for("sweep", 64);
  ASSERT_TRUE(p);
  auto history = std::make_shared<qf::index::edit_history>();
  history->record("file:///w/geo.py", k_before, k_after, 2);
  next_edit_request req;
  req.uri = "file:///w/geo.py";
  req.text = k_after;
  req.cursor = {0, 14};
  req.edits = history;
  req.received = std::chrono::steady_clock::now();
  const next_edit_result r = p->next_edit(req, {});
  EXPECT_EQ(r.format, "sweep");
  EXPECT_GT(r.metrics.tokens_evaluated, 0);
  EXPECT_EQ(r.edits.empty(), !r.reason.empty());
  std::vector<region_edit> flat;
  for (const next_edit_edit& e : r.edits) {
    const size_t b = qf::text::offset_of_line_col(k_after, e.begin.line, e.begin.byte_col);
    const size_t en = qf::text::offset_of_line_col(k_after, e.end.line, e.end.byte_col);
    ASSERT_LE(b, en);
    ASSERT_LE(en, k_after.size());
    ASSERT_TRUE(flat.empty() || flat.back().end <= b);
    flat.push_back(region_edit{b, en, e.new_text});
  }
  // Edits are minimal: none is empty and none keeps a common end on both sides.
  for (const region_edit& e : flat) EXPECT_TRUE(e.begin != e.end || !e.new_text.empty());
}

// Instinct on the real vocabulary: the turn tokens are Qwen2.5's special
// tokens (three openers, two closers); the markers stay text; whatever the
// model writes comes back as edits or silence.
TEST(next_edit_real_model, instinct_prompt_uses_the_chat_turn_tokens) {
  auto backend = load_backend();
  ASSERT_TRUE(backend);
  const int32_t start = backend->vocab().find_token("<|im_start|>");
  const int32_t end = backend->vocab().find_token("<|im_end|>");
  ASSERT_GE(start, 0);
  ASSERT_GE(end, 0);
  completion_settings s;
  kv_pool pool(*backend, s);
  next_edit_engine engine(*backend, pool, s);
  next_edit_prompt_input in;
  in.path = "w/geo.py";
  in.text = k_after;
  in.cursor = 14;
  in.region_end = k_after.size() - 1;
  in.context_end = in.region_end;
  const auto toks = engine.tokenize(build_next_edit_prompt(next_edit_family::instinct, in));
  EXPECT_EQ(std::count(toks.begin(), toks.end(), start), 3);
  EXPECT_EQ(std::count(toks.begin(), toks.end(), end), 2);
  EXPECT_EQ(backend->vocab().find_token("<|editable_region_start|>"), -1);

  auto p = provider_for("instinct", 32);
  ASSERT_TRUE(p);
  next_edit_request req;
  req.uri = "file:///w/geo.py";
  req.text = k_after;
  req.cursor = {0, 14};
  req.received = std::chrono::steady_clock::now();
  const next_edit_result r = p->next_edit(req, {});
  EXPECT_EQ(r.format, "instinct");
  EXPECT_GT(r.metrics.tokens_evaluated, 0);
  EXPECT_EQ(r.edits.empty(), !r.reason.empty());
}
