// The prompt's context block: each ranked source appears (scope headers above
// the window, a definition from another file used near the cursor, recent
// chunks, edits as a diff), the budget holds, the block's tokens stay the same
// across keystrokes inside a function (the KV cache stays warm), and
// explain() splits the prompt into parts that add up to it.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "indexing/edit_history.h"
#include "text/lines.h"
#include "indexing/recent_chunks.h"
#include "server/completion/prompt/context_block.h"
#include "server/completion/pipeline/pipeline.h"
#include "server/completion/prompt/prompt_layout.h"
#include "tests/server/completion/fake_lm.h"

using namespace qf::server;
using namespace qf::server::completion;
using qf::test::fake_vocab;

namespace {

const std::string k_uri = "file:///proj/src/shapes.py";
const std::string k_util = "file:///proj/src/geometry.py";

// A class with a long method: the class line and the signature are far above the cursor.
std::string source() {
  std::string s = "from geometry import area_of\n\nclass Shape:\n    def __init__(self):\n        self.w = 1\n\n"
                  "    def measure(self, scale):\n";
  for (int i = 0; i < 60; ++i) s += "        v" + std::to_string(i) + " = self.w * " + std::to_string(i) + "\n";
  s += "        total = area_of(self.w, scale)\n        \n        return total\n";
  return s;
}
constexpr int64_t k_cursor_line = 68;  // the indented empty line after `total = ...`

// A definition source over a fixed table (the workspace index is another part).
class table_source final : public qf::index::definition_source {
 public:
  std::multimap<std::string, qf::index::definition> defs;
  std::map<std::string, std::vector<qf::index::import_ref>> imports;
  std::map<std::string, std::string> resolved;
  std::vector<qf::index::definition> lookup(std::string_view name, std::size_t max) const override {
    std::vector<qf::index::definition> out;
    auto [b, e] = defs.equal_range(std::string(name));
    for (auto it = b; it != e && out.size() < max; ++it) out.push_back(it->second);
    return out;
  }
  std::vector<qf::index::import_ref> imports_of(std::string_view uri) const override {
    auto it = imports.find(std::string(uri));
    return it == imports.end() ? std::vector<qf::index::import_ref>{} : it->second;
  }
  std::string resolve_import(std::string_view, const qf::index::import_ref& imp) const override {
    auto it = resolved.find(imp.module);
    return it == resolved.end() ? "" : it->second;
  }
};

std::shared_ptr<table_source> geometry_source() {
  auto src = std::make_shared<table_source>();
  qf::index::definition near{"area_of", qf::index::definition_kind::function, k_util, 11,
                             "def area_of(w: float, h: float) -> float:", "Area of a w x h rectangle.", ""};
  qf::index::definition other{"area_of", qf::index::definition_kind::function, "file:///proj/other/misc.py", 3,
                              "def area_of(shape):", "", ""};
  src->defs.emplace("area_of", other);  // listed first, but not imported
  src->defs.emplace("area_of", near);
  src->imports[k_uri] = {qf::index::import_ref{"geometry", {"area_of"}, 0}};
  src->resolved["geometry"] = k_util;
  return src;
}

struct fixture {
  fake_vocab vocab;
  completion_settings s;
  fim_format fmt;
  std::unique_ptr<chunk_tokenizer> tok;
  std::unique_ptr<prompt_builder> pb;
  fixture() {
    s.prefix_tokens = 120;  // a window of a few lines: the class and method headers are outside it
    s.suffix_tokens = 24;
    s.context_block_tokens = 600;  // the test vocabulary spends about a token per byte
  }
  void init() {
    fmt = detect_fim_format(vocab);
    tok = std::make_unique<chunk_tokenizer>(vocab);
    pb = std::make_unique<prompt_builder>(fmt, *tok, s);
  }
  std::string render(const std::vector<int32_t>& t) const { return vocab.render(t); }
};

int64_t tokens_of(const layout& st, std::string_view kind) {
  int64_t n = 0;
  for (const layout_part& p : st.parts)
    if (p.kind == kind) n += p.tokens;
  return n;
}

std::string text_of(const layout& st, std::string_view kind) {
  std::string out;
  for (const layout_part& p : st.parts)
    if (p.kind == kind) out += p.text;
  return out;
}

}  // namespace

TEST(context_block, scope_headers_outside_the_window_by_indentation) {
  fixture f;
  f.init();
  const std::string text = source();
  layout st;
  layout_input in{text, k_cursor_line, 8, k_uri, {}};
  prompt p = f.pb->build(in, st);
  ASSERT_GT(st.window_first_line, 7);  // the headers are outside the prefix window
  const std::string scope = text_of(st, "scope");
  EXPECT_EQ(scope, "class Shape:\n    def measure(self, scale):\n# ...\n");
  // They sit right after the prefix marker, before the window's lines.
  const std::string r = f.render(p.tokens);
  EXPECT_NE(r.find("<PRE>class Shape:\n    def measure(self, scale):\n# ...\n        v"), std::string::npos) << r;
}

TEST(context_block, no_scope_headers_when_the_window_shows_them) {
  fixture f;
  f.s.prefix_tokens = 4096;
  f.init();
  const std::string text = source();
  layout st;
  layout_input in{text, k_cursor_line, 8, k_uri, {}};
  f.pb->build(in, st);
  EXPECT_EQ(st.window_first_line, 0);
  EXPECT_EQ(text_of(st, "scope"), "");
}

TEST(context_block, a_definition_from_an_imported_file_used_near_the_cursor_appears) {
  fixture f;
  f.init();
  const std::string text = source();
  auto src = geometry_source();
  layout st;
  layout_input in{text, k_cursor_line, 8, k_uri, {}};
  in.ctx.language_id = "python";
  in.ctx.definitions = src.get();
  f.pb->build(in, st);
  const std::string defs = text_of(st, "definition");
  // The imported file's definition wins over the first one listed; a pseudo file in repo-level formats.
  EXPECT_NE(defs.find("geometry.py\n# Area of a w x h rectangle.\ndef area_of(w: float, h: float) -> float:\n"),
            std::string::npos)
      << defs;
  EXPECT_EQ(defs.find("def area_of(shape)"), std::string::npos);
  bool origin = false;
  for (const layout_part& p : st.parts) origin |= p.kind == "definition" && p.origin == k_util + ":12";
  EXPECT_TRUE(origin);
  // Far from the cursor the name is not looked up.
  layout st2;
  layout_input far{text, 20, 8, k_uri, {}};
  far.ctx.definitions = src.get();
  f.pb->build(far, st2);
  EXPECT_EQ(text_of(st2, "definition"), "");
}

TEST(context_block, identifiers_near_the_cursor_leave_out_keywords_and_names_the_window_defines) {
  const std::string text = "def helper(a):\n    return a\n\nresult = compute(value)\nif result: helper(result)\n";
  context_view v;
  v.uri = k_uri;
  v.text = text;
  v.cursor_line = 4;
  v.cursor_line_begin = text.find("if result");
  v.window_first_line = 0;
  v.window_end_line = 5;
  v.window_begin = 0;
  v.window_end = text.size();
  const std::vector<std::string> ids = identifiers_near_cursor(v, 1);
  EXPECT_EQ(ids, (std::vector<std::string>{"compute", "value"}));
}

TEST(context_block, recent_chunks_and_edits_of_other_files_appear_and_the_budget_holds) {
  fixture f;
  f.vocab.mutable_specials().fim_rep = -1;  // comment-headed blocks instead of pseudo files
  f.vocab.mutable_specials().fim_sep = -1;
  f.init();
  const std::string text = source();
  qf::index::recent_chunks ring;
  ring.touch("file:///proj/src/io.py", "def load(path):\n    with open(path) as f:\n        return f.read()\n", 1);
  qf::index::edit_history edits;
  edits.record("file:///proj/src/io.py", "x = 1\n", "x = 2\n", 2);
  layout st;
  layout_input in{text, k_cursor_line, 8, k_uri, {}};
  in.ctx.language_id = "python";
  in.ctx.recent = &ring;
  in.ctx.edits = &edits;
  f.pb->build(in, st);
  EXPECT_EQ(text_of(st, "recent"),
            "# io.py:1\ndef load(path):\n    with open(path) as f:\n        return f.read()\n");
  EXPECT_EQ(text_of(st, "edits"),
            "# io.py.diff\n# --- a/proj/src/io.py\n# +++ b/proj/src/io.py\n# @@ -1 +1 @@\n# -x = 1\n# +x = 2\n");
  const int64_t block = tokens_of(st, "scope") + tokens_of(st, "recent") + tokens_of(st, "edits");
  EXPECT_LE(block, f.s.context_block_tokens);
  // A small budget: fewer items, never more than the budget.
  for (int budget : {0, 10, 40, 80, 160}) {
    fixture g;
    g.s.context_block_tokens = budget;
    g.init();
    layout st2;
    g.pb->build(in, st2);
    const int64_t n = tokens_of(st2, "scope") + tokens_of(st2, "recent") + tokens_of(st2, "edits") +
                      tokens_of(st2, "definition");
    EXPECT_LE(n, budget + 8) << budget;  // + the "..." marker line after the scope headers
    if (budget == 0) {
      EXPECT_EQ(n, 0);
    }
  }
}

TEST(context_block, the_window_s_own_edits_and_chunks_are_left_out) {
  fixture f;
  f.init();
  const std::string text = source();
  qf::index::recent_chunks ring;
  ring.touch(k_uri, text, k_cursor_line);
  qf::index::edit_history edits;
  std::string before = text;
  before.replace(before.find("total = area_of"), 5, "summe");
  edits.record(k_uri, before, text, 3);
  layout st;
  layout_input in{text, k_cursor_line, 8, k_uri, {}};
  in.ctx.recent = &ring;
  in.ctx.edits = &edits;
  f.pb->build(in, st);
  EXPECT_EQ(text_of(st, "recent"), "");
  EXPECT_EQ(text_of(st, "edits"), "");
}

// Typing inside the function: the block's tokens do not change, and at most a
// couple of tokens per keystroke are new (what the KV cache must evaluate).
TEST(context_block, the_context_block_is_identical_across_keystrokes_inside_a_function) {
  auto src = geometry_source();
  qf::index::recent_chunks ring;
  ring.touch("file:///proj/src/io.py", "def load(path):\n    return open(path).read()\n", 0);
  qf::index::edit_history edits;
  edits.record("file:///proj/src/io.py", "x = 1\n", "x = 2\n", 2);
  completion_settings s;
  s.prefix_tokens = 120;
  s.suffix_tokens = 24;
  s.context_block_tokens = 600;
  s.type_through = false;
  s.rebase_when_idle = false;
  auto b = std::make_unique<qf::test::fake_backend>(qf::test::copy_rule);
  pipeline p(std::move(b), s);
  std::string text = source();
  const size_t line_begin = qf::text::line_start_offset(text, k_cursor_line);
  std::vector<int32_t> first_head;
  std::string typed = "x = area_of(total, 2) + self.w\n        y = total";
  size_t col = 8;
  for (size_t i = 0; i <= typed.size(); ++i) {
    completion_request r;
    r.uri = k_uri;
    r.language_id = "python";
    r.text = text;
    const auto lc = qf::text::line_col_of_offset(text, line_begin + col);
    r.cursor = {lc.line, lc.col};
    r.received = clock::now();
    r.definitions = src;
    r.edits = std::shared_ptr<const qf::index::edit_history>(std::shared_ptr<void>(), &edits);
    r.recent = std::shared_ptr<const qf::index::recent_chunks>(std::shared_ptr<void>(), &ring);
    completion_result res = p.complete(r, {});
    // Edits of this file near the cursor and its own chunk do not enter the block.
    ring.touch(k_uri, text, lc.line);
    const layout* lay = p.layout_of(k_uri);
    ASSERT_NE(lay, nullptr);
    std::vector<int32_t> block;
    size_t n = 0;
    for (const layout_part& part : lay->parts) {
      if (part.kind == "prefix") break;
      n += static_cast<size_t>(part.tokens);
    }
    block.assign(lay->head.begin(), lay->head.begin() + static_cast<std::ptrdiff_t>(n));
    if (i == 0) {
      first_head = block;
      EXPECT_GT(text_of(*lay, "definition").size(), 0u);
      EXPECT_GT(text_of(*lay, "scope").size(), 0u);
    } else {
      EXPECT_EQ(block, first_head) << "keystroke " << i;
      EXPECT_LE(res.metrics.tokens_evaluated, 3) << "keystroke " << i;
    }
    if (i == typed.size()) break;
    std::string before = text;
    text.insert(line_begin + col, 1, typed[i]);
    edits.record(k_uri, before, text, static_cast<int64_t>(i + 2));
    ++col;
  }
}

TEST(context_block, explain_parts_add_up_to_the_prompt_and_leave_the_cache_alone) {
  completion_settings s;
  s.prefix_tokens = 120;
  s.suffix_tokens = 24;
  s.type_through = false;
  auto b = std::make_unique<qf::test::fake_backend>(qf::test::copy_rule);
  const fake_vocab& vocab = static_cast<const fake_vocab&>(b->vocab());
  pipeline p(std::move(b), s);
  const std::string text = source();
  completion_request r;
  r.uri = k_uri;
  r.language_id = "python";
  r.text = text;
  r.cursor = {k_cursor_line, 8};
  r.definitions = geometry_source();
  r.context_docs.push_back({k_util, qf::index::shared_text(std::string("def area_of(w, h):\n    return w * h\n"))});
  std::optional<prompt_explanation> ex = p.explain(r);
  ASSERT_TRUE(ex);
  EXPECT_EQ(p.layout_of(k_uri), nullptr);  // no state was made
  EXPECT_EQ(p.pool().n_slots(), 0);  // nothing evaluated
  int64_t sum = 0;
  std::string all;
  std::set<std::string> kinds;
  for (const prompt_part& part : ex->parts) {
    sum += part.tokens;
    all += part.text;
    kinds.insert(part.kind);
  }
  EXPECT_EQ(sum, ex->tokens);
  EXPECT_EQ(all, ex->text);
  for (const char* k : {"special", "file", "scope", "definition", "prefix", "suffix", "middle"}) EXPECT_TRUE(kinds.contains(k)) << k;
  // The same prompt complete() evaluates.
  r.received = clock::now();
  completion_result res = p.complete(r, {});
  EXPECT_EQ(res.metrics.tokens_reused + res.metrics.tokens_evaluated, ex->tokens);
  ASSERT_NE(p.layout_of(k_uri), nullptr);
  EXPECT_EQ(ex->text.substr(0, vocab.render(p.layout_of(k_uri)->head).size()), vocab.render(p.layout_of(k_uri)->head));
}
