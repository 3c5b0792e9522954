// Post-processing with syntax: tables of (document with the cursor marked
// "@@", generated text, expected suggestion) per grammar, the rules that need
// no grammar (repetition, closers, bracket balance), and hostile inputs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "text/lines.h"
#include "indexing/syntax_check.h"
#include "indexing/syntax_language.h"
#include "server/completion/postprocess/cleanup.h"
#include "server/completion/postprocess/stop_rules.h"
#include "server/completion/postprocess/trigger.h"
#include "server/completion/postprocess/syntax_rules.h"

using namespace qf::server::completion;

namespace {

struct row {
  const char* what;
  std::string doc;  // "@@" marks the cursor
  std::string gen;  // what the model generated
  std::string want;
};

// finalize() on an explicit request at the marked cursor, with the grammar
// `language` ("" for none).
std::string post(const std::string& language, std::string doc, const std::string& gen) {
  const size_t cur = doc.find("@@");
  EXPECT_NE(cur, std::string::npos);
  doc.erase(cur, 2);
  const qf::text::line_col lc = qf::text::line_col_of_offset(doc, cur);
  const cursor_context cx = make_cursor_context(doc, lc.line, lc.col);
  const trigger_decision d = decide_trigger(cx, /*explicit_trigger=*/true, completion_settings{});
  const syntax_window w =
      make_syntax_window(doc, cur, language.empty() ? nullptr : qf::index::syntax_language_named(language));
  return finalize(gen, cx, d, true, &w);
}

void run_table(const std::string& language, const std::vector<row>& rows) {
  if (!qf::index::syntax_language_named(language)) GTEST_SKIP() << "no " << language << " grammar in this build";
  for (const row& r : rows) EXPECT_EQ(post(language, r.doc, r.gen), r.want) << language << ": " << r.what;
}

const std::string zeros = "0x" + std::string(126, '0');

}  // namespace

TEST(syntax_rules, python) {
  run_table("python", {
      {"degenerate digits", "def add(a, b):\n    return @@\n", zeros, "0x0"},
      {"ends at the end of the function", "def f(x):\n    @@\n\ndef g():\n    pass\n",
       "y = x + 1\n    return y\n\ndef h():\n    return 2", "y = x + 1\n    return y"},
      {"closer the suffix has", "x = compute(@@)\n", "a, b))", "a, b"},
      {"longest prefix without error", "value = @@\n", "foo(1, 2) bar baz", "foo(1, 2)"},
      {"closing quote the suffix has", "name = \"ab@@\"\n", "cd\"", "cd"},
      {"valid suggestion kept", "def f(xs):\n    total = 0\n    for x in xs:\n        @@\n",
       "total += x\n        count += 1", "total += x\n        count += 1"},
      {"ends with the loop it is in", "def f(xs):\n    total = 0\n    for x in xs:\n        @@\n",
       "total += x\n    return total", "total += x"},
  });
}

TEST(syntax_rules, javascript) {
  run_table("javascript", {
      {"ends at the end of the function", "function f(a) {\n  @@\n}\n\nfunction g() {}\n",
       "return a + 1;\n}\n\nfunction h() {\n  return 2;\n}", "return a + 1;"},
      {"call closed by the suffix", "console.log(@@);\n", "\"hi\");", "\"hi\""},
      {"array closed by the suffix", "const xs = [1, 2, @@];\n", "3]", "3"},
      {"longest prefix without error", "const y = @@\n", "a + b c d;", "a + b"},
  });
}

TEST(syntax_rules, typescript) {
  run_table("typescript", {
      {"ends at the end of the interface", "interface P {\n  name: string;\n  @@\n}\n",
       "age: number;\n}\n\nconst x = 1;", "age: number;"},
      {"token boundary", "function id<T>(x: T): T {\n  return @@\n}\n", "x) + 1;", "x"},
  });
  run_table("tsx", {
      {"element closed", "const e = <div>@@</div>;\n", "hi</div>", "hi"},
  });
}

TEST(syntax_rules, c) {
  run_table("c", {
      {"ends at the end of the function", "int add(int a, int b) {\n  return @@\n}\n",
       "a + b;\n}\n\nint sub(int a, int b) {\n  return a - b;\n}", "a + b;"},
      {"call closed by the suffix", "void f(int x) {\n  printf(\"%d\\n\", @@);\n}\n", "x);", "x"},
      {"degenerate hex digits", "unsigned x = @@;\n", "0x" + std::string(60, 'F'), "0xF"},
      {"valid block kept", "int f(int n) {\n  @@\n}\n", "if (n < 0) {\n    return -n;\n  }\n  return n;",
       "if (n < 0) {\n    return -n;\n  }\n  return n;"},
  });
}

TEST(syntax_rules, cpp) {
  run_table("cpp", {
      {"ends at the end of the struct", "struct S {\n  int a;\n  @@\n};\n",
       "int b;\n};\n\nstruct T {\n  int c;\n};", "int b;"},
      {"braces closed by the suffix", "std::vector<int> v{@@};\n", "1, 2, 3}", "1, 2, 3"},
  });
}

TEST(syntax_rules, go) {
  run_table("go", {
      {"ends at the end of the function", "package m\n\nfunc add(a, b int) int {\n\t@@\n}\n",
       "return a + b\n}\n\nfunc sub(a, b int) int {\n\treturn a - b\n}", "return a + b"},
      {"call closed by the suffix", "package m\n\nfunc f() {\n\tfmt.Println(@@)\n}\n", "\"x\")", "\"x\""},
  });
}

TEST(syntax_rules, rust) {
  run_table("rust", {
      {"ends at the end of the function", "fn add(a: i32, b: i32) -> i32 {\n    @@\n}\n",
       "a + b\n}\n\nfn sub() {}", "a + b"},
      {"longest prefix without error", "fn f() {\n    let v = vec![@@];\n}\n", "1, 2, 3]; let", "1, 2, 3"},
  });
}

TEST(syntax_rules, java) {
  run_table("java", {
      {"ends at the end of the method", "class A {\n  int f() {\n    @@\n  }\n}\n",
       "return 1;\n  }\n\n  int g() {\n    return 2;\n  }", "return 1;"},
      {"call closed by the suffix", "class A {\n  void f() {\n    System.out.println(@@);\n  }\n}\n", "s);", "s"},
  });
}

TEST(syntax_rules, without_a_grammar_the_line_rules_stay) {
  // No grammar: syntax errors are not looked at.
  EXPECT_EQ(post("", "x = @@\n", "1 2 3"), "1 2 3");
  // A grammar that this build may lack is treated the same way.
  EXPECT_EQ(post("", "value = @@\n", "foo(1, 2) bar baz"), "foo(1, 2) bar baz");
  // Closers the suffix has and degenerate repetition are cut anyway.
  EXPECT_EQ(post("", "puts(@@)\n", "x)"), "x");
  EXPECT_EQ(post("", "x = @@\n", zeros), "0x0");
  // A multi-line suggestion leaving a bracket open that nothing after the cursor closes.
  EXPECT_EQ(post("", "@@\n", "a = 1\nfoo(\n  a,\n  b"), "a = 1");
  EXPECT_EQ(post("", "@@\n", "foo(\n  a,\n  b"), "foo(");
  // ... unless the text after the cursor closes it.
  EXPECT_EQ(post("", "@@\n)\n", "foo(\n  a,\n  b"), "foo(\n  a,\n  b");
}

TEST(syntax_rules, repetition) {
  EXPECT_EQ(cut_repetition("a()\nb()\na()\nb()\na()\nb()\nc()"), "a()\nb()");
  EXPECT_EQ(cut_repetition("x = 1\nx = 1\nx = 1\n"), "x = 1");
  EXPECT_EQ(cut_repetition("f(" + std::string(20, 'a') + std::string(40, ',') + std::string(100, '-')), "f(" + std::string(20, 'a') + std::string(40, ',') + "-");
  std::string list = "[";
  for (int i = 0; i < 20; ++i) list += "1, ";
  EXPECT_EQ(cut_repetition(list), "[1,");
  // Not degenerate: short runs, separators under 100 characters, indentation, distinct lines.
  for (const std::string& s : {std::string("0xFFFFFFFFFFFFFFFF"), "# " + std::string(78, '-'),
                              std::string("if x:\n                y = 1"), std::string("a = 1\nb = 2\na = 1\nb = 3")})
    EXPECT_EQ(cut_repetition(s), s);
  // While streaming: the checker stops at the run.
  const cursor_context cx = make_cursor_context("def add(a, b):\n    return \n", 1, 11);
  const trigger_decision d = decide_trigger(cx, false, completion_settings{});
  stop_checker sc(cx, d, true);
  bool stopped = false;
  for (char c : zeros)
    if ((stopped = sc.push(std::string(1, c)))) break;
  EXPECT_TRUE(stopped);
  EXPECT_EQ(sc.kept(), "0x0");
}

TEST(syntax_rules, window_is_bounded_and_starts_at_column_zero) {
  std::string doc = "import os\n\ndef f(x):\n    a = 1\n    b = 2\n";
  const size_t cur = doc.size();
  doc += "    c = 3\n\ndef g():\n    pass\n";
  const syntax_window w = make_syntax_window(doc, cur, nullptr);
  EXPECT_EQ(w.before, "def f(x):\n    a = 1\n    b = 2\n");
  EXPECT_EQ(w.after, "    c = 3\n");
  std::string big;
  for (int i = 0; i < 5000; ++i) big += "    line_" + std::to_string(i) + " = 1\n";
  const syntax_window b = make_syntax_window(big, big.size() / 2, nullptr);
  EXPECT_LE(b.before.size(), k_window_bytes);
  EXPECT_LE(b.after.size(), k_window_bytes_after);
}

TEST(syntax_rules, hostile_inputs_end_with_a_prefix) {
  const qf::index::syntax_language* py = qf::index::syntax_language_named("python");
  const qf::index::syntax_language* c = qf::index::syntax_language_named("c");
  if (!py || !c) GTEST_SKIP() << "no grammars in this build";
  // Deep nesting before the cursor: the window holds 16 KiB of it.
  std::string deep = "x = " + std::string(100000, '(');
  syntax_window w = make_syntax_window(deep, deep.size(), py);
  syntax_trim_stats st;
  std::string out = syntax_trim("1 + 2", w, k_syntax_budget, &st);
  EXPECT_TRUE(std::string("1 + 2").starts_with(out));
  EXPECT_LE(st.parses, k_max_parses);
  // A huge, non-repeating suggestion: bounded work, a prefix of it comes back.
  std::string huge;
  for (int i = 0; i < 40000; ++i) huge += "int v" + std::to_string(i) + " = " + std::to_string(i * 7) + ";\n";
  huge += "}}}";
  const std::string doc = "int f() {\n  \n}\n";
  w = make_syntax_window(doc, 12, c);
  st = {};
  out = syntax_trim(huge, w, k_syntax_budget, &st);
  EXPECT_TRUE(huge.starts_with(out));
  EXPECT_LE(st.parses, k_max_parses);
  // Deeply nested brackets in the suggestion itself.
  std::string nest;
  for (int i = 0; i < 20000; ++i) nest += i % 2 ? "[" : "(";
  w = make_syntax_window(doc, 12, c);
  out = finalize(nest, make_cursor_context(doc, 1, 2), trigger_decision{.multi_line = true}, true, &w);
  EXPECT_TRUE(nest.starts_with(out));
}

TEST(syntax_rules, check_syntax_counts_errors_and_finds_the_enclosing_block) {
  const qf::index::syntax_language* py = qf::index::syntax_language_named("python");
  if (!py) GTEST_SKIP() << "no python grammar in this build";
  const std::string good = "def f(x):\n    return x\n\ndef g():\n    pass\n";
  auto r = qf::index::check_syntax(*py, good, {14, 14}, 14, good.size(), std::chrono::milliseconds(50));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->errors(), 0u);
  EXPECT_EQ(r->block_end, good.find("\n\ndef g"));  // f's definition ends after "return x"
  auto bad = qf::index::check_syntax(*py, "x = (1,\ny = 2\n", {0, 0}, 0, 0, std::chrono::milliseconds(50));
  ASSERT_TRUE(bad);
  EXPECT_GT(bad->errors(), 0u);
  // A budget of nothing does not finish.
  EXPECT_FALSE(qf::index::check_syntax(*py, std::string(20000, '('), {0, 0}, 0, 0, std::chrono::microseconds(0)));
}
