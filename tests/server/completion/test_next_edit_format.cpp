// Prompt formats of the next-edit models (next_edit_format.h), compared with
// the layouts their authors publish (docs/completion.md names the sources),
// character for character and token for token.
#include <gtest/gtest.h>

#include "server/completion/next_edit/next_edit.h"
#include "server/completion/next_edit/next_edit_format.h"
#include "tests/server/completion/fake_lm.h"

using namespace qf::server::completion;
using qf::test::fake_backend;
using qf::test::fake_vocab;

namespace {

const std::string k_doc =
    "import math\n"
    "\n"
    "def area(width, h):\n"
    "    return w * h\n"
    "\n"
    "print(area(2, 3))\n";

qf::index::edit_hunk rename_hunk() {
  qf::index::edit_hunk h;
  h.uri = "file:///src/geo.py";
  h.line = 2;
  h.old_lines = {"def area(w, h):"};
  h.new_lines = {"def area(width, h):"};
  return h;
}

next_edit_prompt_input input_for(size_t cursor_line) {
  next_edit_prompt_input in;
  in.path = "src/geo.py";
  in.text = k_doc;
  // Region: lines 2..3, excerpt: lines 1..4.
  in.region_begin = k_doc.find("def area");
  in.region_end = k_doc.find("\n\nprint") ;
  in.context_begin = k_doc.find("\ndef") ;
  in.context_end = k_doc.find("\nprint");
  in.cursor = cursor_line == 2 ? k_doc.find(", h):") : in.region_begin;
  in.original_region = "def area(w, h):\n    return w * h";
  in.hunks = {rename_hunk()};
  return in;
}

}  // namespace

TEST(next_edit_format, picks_the_format_from_the_model_name_or_the_setting) {
  EXPECT_EQ(pick_next_edit_format("auto", "zeta (zeta-Q4_K_M.gguf)"), next_edit_family::zeta);
  EXPECT_EQ(pick_next_edit_format("auto", "sweep-next-edit-1.5B (sweep-next-edit-1.5b.q8_0.gguf)"),
            next_edit_family::sweep);
  EXPECT_EQ(pick_next_edit_format("auto", "Qwen2.5-Coder-0.5B (qwen.gguf)"), std::nullopt);
  EXPECT_EQ(pick_next_edit_format("sweep", "Qwen2.5-Coder-0.5B"), next_edit_family::sweep);
  EXPECT_EQ(pick_next_edit_format("zeta", ""), next_edit_family::zeta);
  EXPECT_EQ(pick_next_edit_format("off", "zeta"), std::nullopt);
}

// Zeta: the instruction, "User edited PATH:" with a diff block per edit, the
// excerpt with the region and cursor markers, and the response opened up to
// the start marker's line (Zed's client sends the same excerpt; the model
// repeats it in its response).
TEST(next_edit_format, zeta_layout_matches_the_published_one) {
  // The excerpt starts at the empty line 1 (not the file's start: no <|start_of_file|>).
  next_edit_prompt_input in = input_for(2);
  in.context_begin = k_doc.find("\n\ndef") + 1;
  const next_edit_prompt p = build_next_edit_prompt(next_edit_family::zeta, in);
  const std::string head =
      "```src/geo.py\n"
      "\n"
      "<|editable_region_start|>\n";
  const std::string expected =
      "### Instruction:\n"
      "You are a code completion assistant and your task is to analyze user edits and then rewrite an excerpt that "
      "the user provides, suggesting the appropriate edits within the excerpt, taking into account the cursor "
      "location.\n"
      "\n"
      "### User Edits:\n"
      "\n"
      "User edited \"src/geo.py\":\n"
      "```diff\n"
      "@@ -3 +3 @@\n"
      "-def area(w, h):\n"
      "+def area(width, h):\n"
      "\n"
      "```\n"
      "\n"
      "### User Excerpt:\n"
      "\n" +
      head +
      "def area(width<|user_cursor_is_here|>, h):\n"
      "    return w * h\n"
      "<|editable_region_end|>\n"
      "\n"
      "```\n"
      "\n"
      "### Response:\n"
      "\n" +
      head;
  EXPECT_EQ(p.text(), expected);
  EXPECT_EQ(p.end_text, "\n<|editable_region_end|>");
  // The markers are plain text to the tokenizer: one piece, encoded as text.
  ASSERT_EQ(p.pieces.size(), 1u);
  EXPECT_FALSE(p.pieces[0].special);

  // The excerpt at the top of the file gets <|start_of_file|>.
  in.context_begin = 0;
  const std::string top = build_next_edit_prompt(next_edit_family::zeta, in).text();
  EXPECT_NE(top.find("### User Excerpt:\n\n```src/geo.py\n<|start_of_file|>\nimport math\n\n<|editable_region_start|>\n"),
            std::string::npos);
}

TEST(next_edit_format, zeta_output_is_read_up_to_the_end_marker) {
  EXPECT_EQ(parse_next_edit_output(next_edit_family::zeta, "a<|user_cursor_is_here|>b\nc\n<|editable_region_end|>\nrest", false),
            "ab\nc");
  EXPECT_EQ(parse_next_edit_output(next_edit_family::zeta, "a\nb", false), std::nullopt);  // not finished
  EXPECT_EQ(parse_next_edit_output(next_edit_family::zeta, "\n<|editable_region_end|>", false), "");
}

// Sweep: Qwen2.5-Coder's <|file_sep|> layout: related files, a PATH.diff
// block per edit (original:/updated:), the window before the edit, the
// window now and the open updated/ block.
TEST(next_edit_format, sweep_layout_matches_the_published_one_token_for_token) {
  next_edit_prompt_input in = input_for(2);
  in.related = {related_file{"src/util.py", "def helper():\n    pass"}};
  const next_edit_prompt p = build_next_edit_prompt(next_edit_family::sweep, in);
  const std::string expected =
      "<|file_sep|>src/util.py\n"
      "def helper():\n"
      "    pass\n"
      "<|file_sep|>src/geo.py.diff\n"
      "original:\n"
      "def area(w, h):\n"
      "updated:\n"
      "def area(width, h):\n"
      "<|file_sep|>original/src/geo.py\n"
      "def area(w, h):\n"
      "    return w * h\n"
      "<|file_sep|>current/src/geo.py\n"
      "def area(width, h):\n"
      "    return w * h\n"
      "<|file_sep|>updated/src/geo.py\n";
  EXPECT_EQ(p.text(), expected);
  EXPECT_EQ(p.stop_tokens, (std::vector<std::string>{"<|file_sep|>", "<|endoftext|>"}));

  // Tokens: each <|file_sep|> is the one special token, the text between is
  // encoded as plain text (BOS first, as this vocabulary asks for it).
  fake_backend be;
  be.mutable_vocab().set_special(fake_vocab::k_sep, "<|file_sep|>");
  completion_settings s;
  kv_pool pool(be, s);
  next_edit_engine engine(be, pool, s);
  const fake_vocab& v = be.mutable_vocab();
  std::vector<int32_t> want{fake_vocab::k_bos};
  size_t at = 0;
  for (size_t sep = expected.find("<|file_sep|>"); sep != std::string::npos;
       sep = expected.find("<|file_sep|>", at)) {
    const auto t = v.encode(std::string_view(expected).substr(at, sep - at));
    want.insert(want.end(), t.begin(), t.end());
    want.push_back(fake_vocab::k_sep);
    at = sep + 12;
  }
  const auto tail = v.encode(std::string_view(expected).substr(at));
  want.insert(want.end(), tail.begin(), tail.end());
  EXPECT_EQ(engine.tokenize(p), want);
  EXPECT_EQ(std::count(want.begin(), want.end(), fake_vocab::k_sep), 5);

  // Document text that spells the token stays text.
  std::string sneaky = k_doc;
  sneaky.replace(sneaky.find("w * h"), 5, "<|file_sep|>");
  in.text = sneaky;
  in.region_end = sneaky.find("\n\nprint");
  const auto toks = engine.tokenize(build_next_edit_prompt(next_edit_family::sweep, in));
  EXPECT_EQ(std::count(toks.begin(), toks.end(), fake_vocab::k_sep), 5);
}

TEST(next_edit_format, sweep_output_needs_its_stop_token) {
  EXPECT_EQ(parse_next_edit_output(next_edit_family::sweep, "a\nb\n", true), "a\nb");
  EXPECT_EQ(parse_next_edit_output(next_edit_family::sweep, "a\nb\n", false), std::nullopt);
}

// Instinct: ChatML turns around Continue's user-turn layout: the request,
// "### Context:" (<|context_file|>: PATH / <|snippet|> / code), "### User
// Edits:" (newest first), "### User Excerpt:" with the markers on lines of
// their own, closed by "```\n### Response:"; <|im_start|> and <|im_end|> are
// the special tokens, everything else is text.
TEST(next_edit_format, instinct_layout_matches_the_published_one) {
  next_edit_prompt_input in = input_for(2);
  in.related = {related_file{"src/util.py", "def helper():\n    pass"}};
  qf::index::edit_hunk older;
  older.uri = "file:///src/util.py";
  older.line = 0;
  older.old_lines = {"def help():"};
  older.new_lines = {"def helper():"};
  in.hunks = {older, rename_hunk()};  // oldest first, as the engine passes them
  const next_edit_prompt p = build_next_edit_prompt(next_edit_family::instinct, in);
  ASSERT_EQ(p.pieces.size(), 10u);
  EXPECT_EQ(p.pieces[0], (prompt_piece{true, "<|im_start|>"}));
  EXPECT_EQ(p.pieces[1].text.substr(0, 7), "system\n");
  EXPECT_EQ(p.pieces[2], (prompt_piece{true, "<|im_end|>"}));
  EXPECT_EQ(p.pieces[3], (prompt_piece{false, "\n"}));
  EXPECT_EQ(p.pieces[4], (prompt_piece{true, "<|im_start|>"}));
  EXPECT_EQ(p.pieces[5].text.substr(0, 5), "user\n");
  EXPECT_EQ(p.pieces[6], (prompt_piece{true, "<|im_end|>"}));
  EXPECT_EQ(p.pieces[7], (prompt_piece{false, "\n"}));
  EXPECT_EQ(p.pieces[8], (prompt_piece{true, "<|im_start|>"}));
  EXPECT_EQ(p.pieces[9], (prompt_piece{false, "assistant\n"}));
  // The system turn names every marker the user turn uses.
  for (const char* marker : {"<|context_file|>", "<|snippet|>", "<|editable_region_start|>",
                             "<|editable_region_end|>", "<|user_cursor_is_here|>", "### Context:",
                             "### User Edits:", "### User Excerpt:"})
    EXPECT_NE(p.pieces[1].text.find(marker), std::string::npos) << marker;
  const std::string& user = p.pieces[5].text;
  const size_t sections = user.find("\n\n### Context:\n");
  ASSERT_NE(sections, std::string::npos);
  EXPECT_EQ(user.substr(sections),
            "\n\n### Context:\n"
            "<|context_file|>: src/util.py\n"
            "<|snippet|>\n"
            "def helper():\n"
            "    pass\n"
            "\n"
            "### User Edits:\n"
            "\n"
            "User edited file \"src/geo.py\"\n"
            "\n"
            "```diff\n"
            "@@ -3 +3 @@\n"
            "-def area(w, h):\n"
            "+def area(width, h):\n"
            "```\n"
            "User edited file \"src/util.py\"\n"
            "\n"
            "```diff\n"
            "@@ -1 +1 @@\n"
            "-def help():\n"
            "+def helper():\n"
            "```\n"
            "\n"
            "### User Excerpt:\n"
            "src/geo.py\n"
            "\n"
            "\n"
            "<|editable_region_start|>\n"
            "def area(width<|user_cursor_is_here|>, h):\n"
            "    return w * h\n"
            "<|editable_region_end|>\n"
            "```\n"
            "### Response:");
  EXPECT_EQ(p.stop_tokens, (std::vector<std::string>{"<|im_end|>", "<|endoftext|>"}));

  // Tokens: the three turn openers and two closers are special tokens; the
  // markers, and document text that spells a turn token, are text.
  fake_backend be;
  be.mutable_vocab().set_special(fake_vocab::k_sep, "<|im_start|>");
  completion_settings s;
  kv_pool pool(be, s);
  next_edit_engine engine(be, pool, s);
  const auto plain = engine.tokenize(p);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), fake_vocab::k_sep), 3);
  std::string sneaky = k_doc;
  sneaky.replace(sneaky.find("w * h"), 5, "<|im_start|>");
  in.text = sneaky;
  in.region_end = sneaky.find("\n\nprint");
  in.context_end = sneaky.find("\nprint");
  const auto toks = engine.tokenize(build_next_edit_prompt(next_edit_family::instinct, in));
  EXPECT_EQ(std::count(toks.begin(), toks.end(), fake_vocab::k_sep), 3);
}

TEST(next_edit_format, instinct_output_is_the_region_up_to_the_end_of_the_turn) {
  EXPECT_EQ(parse_next_edit_output(next_edit_family::instinct, "a<|user_cursor_is_here|>b\nc\n", true), "ab\nc");
  EXPECT_EQ(parse_next_edit_output(next_edit_family::instinct, "a\nb", false), std::nullopt);  // turn not ended
  // Markers echoed on lines of their own are dropped.
  EXPECT_EQ(parse_next_edit_output(next_edit_family::instinct,
                                   "<|editable_region_start|>\na\nb\n<|editable_region_end|>\n", true),
            "a\nb");
  EXPECT_EQ(pick_next_edit_format("auto", "instinct (instinct-Q4_K_M.gguf)"), next_edit_family::instinct);
  EXPECT_EQ(pick_next_edit_format("instinct", "Qwen2.5-Coder-7B"), next_edit_family::instinct);
}
