// Next-edit prediction through the pipeline (next_edit.h) on the scripted
// test model, with a decoding rule that behaves like a next-edit model which
// has learnt one thing: read the latest rename in the prompt's edit history
// and apply it to the editable region (copying the region unchanged when
// there is none), writing "\n" line breaks. The real prompt building, KV pool, decoding with drafts,
// output parsing and minimal edits all run; only the network is scripted.
#include <gtest/gtest.h>

#include <set>

#include "text/lines.h"
#include "server/completion/next_edit/next_edit_diff.h"
#include "server/completion/pipeline/pipeline.h"
#include "tests/server/completion/fake_lm.h"

using namespace qf::server;
using namespace qf::server::completion;
using qf::test::fake_backend;
using qf::test::fake_vocab;

namespace {

const std::string k_uri = "file:///w/geo.py";

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    if (!word_char(s[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < s.size() && word_char(s[j])) ++j;
    out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string replace_word(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (size_t at = 0; (at = s.find(from, at)) != std::string::npos;) {
    const bool left = at == 0 || !word_char(s[at - 1]);
    const bool right = at + from.size() >= s.size() || !word_char(s[at + from.size()]);
    if (left && right) {
      s.replace(at, from.size(), to);
      at += to.size();
    } else {
      at += from.size();
    }
  }
  return s;
}

std::string between(std::string_view s, std::string_view open, std::string_view close, size_t from = 0) {
  const size_t a = s.find(open, from);
  if (a == std::string_view::npos) return {};
  const size_t b = s.find(close, a + open.size());
  return b == std::string_view::npos ? std::string() : std::string(s.substr(a + open.size(), b - a - open.size()));
}

// The renaming "model": the rename (a word replaced by another) of the
// newest edit in the history, applied to the region the prompt shows.
struct rename_model {
  std::shared_ptr<fake_vocab> vocab = std::make_shared<fake_vocab>();
  int32_t operator()(std::span<const int32_t> h) const {
    const std::string t = vocab->render(h);
    const bool zeta = t.find("### Response:") != std::string::npos;
    // The newest rename in the history.
    std::string from, to;
    const std::string old_mark = zeta ? "\n-" : "original:\n", new_mark = zeta ? "\n+" : "\nupdated:\n";
    const size_t last = zeta ? t.rfind("User edited") : t.rfind(".diff\noriginal:\n");
    if (last != std::string::npos && (zeta || t.find("### Response:") == std::string::npos)) {
      const std::string o = between(t, old_mark, "\n", last), n = between(t, new_mark, "\n", last);
      const std::vector<std::string> ow = words(o), nw = words(n);
      for (const std::string& w : ow)
        if (std::find(nw.begin(), nw.end(), w) == nw.end()) from = w;
      for (const std::string& w : nw)
        if (std::find(ow.begin(), ow.end(), w) == ow.end()) to = w;
    }
    std::string region, produced, end;
    if (zeta) {
      const std::string start = "<|editable_region_start|>\n";
      region = between(t, start, "\n<|editable_region_end|>", t.find("### User Excerpt:"));
      const size_t c = region.find("<|user_cursor_is_here|>");
      if (c != std::string::npos) region.erase(c, 23);
      produced = t.substr(t.rfind(start) + start.size());
      end = "\n<|editable_region_end|>";
    } else {
      region = between(t, "current/w/geo.py\n", "\n<|file_sep|>");
      produced = t.substr(t.rfind("updated/w/geo.py\n") + 17);
      end = "\n";
    }
    // It writes "\n" line breaks whatever the document has.
    std::erase(region, '\r');
    const std::string target = replace_word(region, from, to) + end;
    if (produced.size() < target.size() && target.compare(0, produced.size(), produced) == 0)
      return static_cast<unsigned char>(target[produced.size()]);
    return zeta ? fake_vocab::k_eos : fake_vocab::k_sep;
  }
};

struct fixture {
  std::unique_ptr<pipeline> p;
  std::shared_ptr<qf::test::fake_stats> stats;
  explicit fixture(std::string model_name = "sweep-next-edit-1.5B", completion_settings s = {}) {
    rename_model m;
    m.vocab->set_special(fake_vocab::k_sep, "<|file_sep|>");
    auto b = std::make_unique<fake_backend>(m);
    b->mutable_vocab().set_special(fake_vocab::k_sep, "<|file_sep|>");
    stats = b->stats;
    p = std::make_unique<pipeline>(std::move(b), s);
    p->set_model_name(std::move(model_name));
  }
};

std::string with_use_far_below() {
  std::string t = "def area(width, h):\n";
  for (int i = 0; i < 40; ++i) t += "    pass\n";
  t += "    return w * h\n";
  return t;
}

next_edit_request request(const std::string& text, std::shared_ptr<qf::index::edit_history> history, int64_t line,
                          int64_t col) {
  next_edit_request r;
  r.uri = k_uri;
  r.version = 2;
  r.text = text;
  r.cursor = {line, col};
  r.edits = std::move(history);
  r.received = std::chrono::steady_clock::now();
  return r;
}

// The user renamed the parameter w to width: the history holds that edit.
std::shared_ptr<qf::index::edit_history> renamed(const std::string& before, const std::string& after) {
  auto h = std::make_shared<qf::index::edit_history>();
  h->record(k_uri, before, after, 2);
  return h;
}

std::string apply(const std::string& text, const std::vector<next_edit_edit>& edits) {
  std::vector<region_edit> r;
  for (const next_edit_edit& e : edits)
    r.push_back(region_edit{qf::text::offset_of_line_col(text, e.begin.line, e.begin.byte_col),
                            qf::text::offset_of_line_col(text, e.end.line, e.end.byte_col), e.new_text});
  return apply_region_edits(text, r);
}

const std::string k_before = "def area(w, h):\n    return w * h\n\nprint(area(2, 3))\n";
const std::string k_after = "def area(width, h):\n    return w * h\n\nprint(area(2, 3))\n";

}  // namespace

TEST(next_edit_engine, a_rename_becomes_a_minimal_edit_at_its_use) {
  for (const char* model : {"sweep-next-edit-1.5B", "zeta (zeta.gguf)"}) {
    SCOPED_TRACE(model);
    fixture f(model);
    const next_edit_result r = f.p->next_edit(request(k_after, renamed(k_before, k_after), 0, 14), {});
    EXPECT_EQ(r.format, std::string(model).starts_with("zeta") ? "zeta" : "sweep");
    ASSERT_EQ(r.edits.size(), 1u) << r.reason;
    EXPECT_EQ(r.edits[0].begin, (next_edit_pos{1, 12}));
    EXPECT_EQ(r.edits[0].end, (next_edit_pos{1, 12}));
    EXPECT_EQ(r.edits[0].new_text, "idth");
    EXPECT_FALSE(r.edits[0].at_cursor);
    EXPECT_EQ(apply(k_after, r.edits), "def area(width, h):\n    return width * h\n\nprint(area(2, 3))\n");
    EXPECT_EQ(r.metrics.regions, 1);
    EXPECT_GT(r.metrics.tokens_accepted, 0);  // the rewrite copies the region: drafts from the prompt hold
  }
}

TEST(next_edit_engine, a_crlf_document_gets_edits_of_its_text_not_of_its_line_breaks) {
  // The "model" writes "\n" between lines, as models do; the document has "\r\n".
  auto crlf = [](std::string s) {
    std::string out;
    for (char c : s) {
      if (c == '\n') out += '\r';
      out += c;
    }
    return out;
  };
  fixture f;
  const std::string before = crlf(k_before), after = crlf(k_after);
  const next_edit_result r = f.p->next_edit(request(after, renamed(before, after), 0, 14), {});
  ASSERT_EQ(r.edits.size(), 1u) << r.reason;
  EXPECT_EQ(r.edits[0].begin, (next_edit_pos{1, 12}));
  EXPECT_EQ(r.edits[0].new_text, "idth");
  EXPECT_EQ(apply(after, r.edits), crlf("def area(width, h):\n    return width * h\n\nprint(area(2, 3))\n"));
}

TEST(next_edit_engine, a_rewrite_equal_to_the_region_is_silence) {
  fixture f;
  const next_edit_result r = f.p->next_edit(request(k_after, nullptr, 0, 14), {});
  EXPECT_TRUE(r.edits.empty());
  EXPECT_EQ(r.reason, "the model predicts no change");
  EXPECT_FALSE(r.incomplete);
}

TEST(next_edit_engine, the_second_place_of_the_history_is_decoded_too) {
  fixture f;
  const std::string after = with_use_far_below();
  std::string before = after;
  before.replace(0, 19, "def area(w, h):");
  const next_edit_result r = f.p->next_edit(request(after, renamed(before, after), 0, 14), {});
  EXPECT_EQ(r.metrics.regions, 2);
  ASSERT_EQ(r.edits.size(), 1u) << r.reason;
  EXPECT_EQ(r.edits[0].begin, (next_edit_pos{41, 12}));
  EXPECT_EQ(r.edits[0].new_text, "idth");
}

TEST(next_edit_engine, the_next_request_reuses_the_cached_prompt) {
  fixture f;
  auto h = renamed(k_before, k_after);
  const next_edit_result a = f.p->next_edit(request(k_after, h, 0, 14), {});
  const next_edit_result b = f.p->next_edit(request(k_after, h, 0, 14), {});
  EXPECT_EQ(a.edits.size(), 1u);
  EXPECT_EQ(b.edits.size(), 1u);
  EXPECT_GT(b.metrics.tokens_reused, a.metrics.tokens_reused);
  EXPECT_LT(b.metrics.tokens_evaluated, a.metrics.tokens_evaluated / 4);
}

TEST(next_edit_engine, other_models_and_the_off_setting_predict_nothing) {
  fixture f("Qwen2.5-Coder-0.5B (qwen.gguf)");
  next_edit_result r = f.p->next_edit(request(k_after, renamed(k_before, k_after), 0, 14), {});
  EXPECT_TRUE(r.edits.empty());
  EXPECT_EQ(r.format, "");
  EXPECT_NE(r.reason.find("nextEdit.format"), std::string::npos);
  EXPECT_EQ(f.stats->evaluated, 0);
  completion_settings s;
  s.next_edit_format = "sweep";  // forced
  f.p->configure(s);
  r = f.p->next_edit(request(k_after, renamed(k_before, k_after), 0, 14), {});
  EXPECT_EQ(r.format, "sweep");
  EXPECT_EQ(r.edits.size(), 1u);
  s.next_edit_format = "off";
  f.p->configure(s);
  r = f.p->next_edit(request(k_after, renamed(k_before, k_after), 0, 14), {});
  EXPECT_TRUE(r.edits.empty());
  EXPECT_EQ(r.format, "");
}

TEST(next_edit_engine, a_cancelled_request_stops_without_edits) {
  fixture f;
  qf::cancel_source src;
  src.cancel(qf::cancel_reason::content_modified);
  const next_edit_result r = f.p->next_edit(request(k_after, renamed(k_before, k_after), 0, 14), src.token());
  EXPECT_TRUE(r.edits.empty());
  EXPECT_EQ(f.stats->evaluated, 0);
}

TEST(next_edit_engine, a_budget_too_small_for_the_rewrite_gives_no_edits) {
  completion_settings s;
  s.next_edit_max_tokens = 16;  // the region needs more
  fixture f("sweep-next-edit-1.5B", s);
  const next_edit_result r = f.p->next_edit(request(k_after, renamed(k_before, k_after), 0, 14), {});
  EXPECT_TRUE(r.edits.empty());
  EXPECT_TRUE(r.incomplete);
}
