// Prompt formats of the open next-edit models, and reading their output.
//
// A next-edit model is given the recent edits, the file around the cursor
// with an editable region marked, and rewrites that region. Three published
// layouts are built here (docs/completion.md cites the sources):
//
// * zeta (Zed's Zeta, a Qwen2.5-Coder fine-tune): an instruction, the user's
//   edits as `User edited "PATH":` + a ```diff block each, and the excerpt
//   "```PATH\n" [<|start_of_file|>\n] context <|editable_region_start|>\n
//   region with <|user_cursor_is_here|> \n<|editable_region_end|> context
//   "\n```". The markers are plain text for the tokenizer. The response is
//   the excerpt again, rewritten; the prompt already carries the response up
//   to and including the start marker's line, so the model writes the
//   region and then "\n<|editable_region_end|>".
// * sweep (Sweep's next-edit models, qwen2): Qwen2.5-Coder's repository
//   format with its <|file_sep|> special token: related files, one
//   "PATH.diff" block per recent edit ("original:" / "updated:"), then the
//   window before the latest edit (original/PATH), the window now
//   (current/PATH) and an open updated/PATH block the model fills; it ends
//   with <|file_sep|> or <|endoftext|>.
// * instinct (Continue's Instinct, a Qwen2.5-Coder fine-tune): ChatML turns
//   (<|im_start|>/<|im_end|> special tokens): a system turn saying what the
//   markers mean, a user turn with "### Context:" (<|context_file|>: PATH,
//   <|snippet|>, code), "### User Edits:" (`User edited file "PATH"` and a
//   ```diff block each, newest first) and "### User Excerpt:" (the path, then
//   the excerpt with the zeta markers on lines of their own), closed by
//   "```\n### Response:"; the assistant turn is the rewritten region alone,
//   ended by <|im_end|>.
//
// A prompt is a list of pieces, plain text or special-token text; the
// tokenizer encodes plain text without parsing special tokens, so document
// text can never smuggle a control token in.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "indexing/edit_history.h"

namespace qf::server::completion {

enum class next_edit_family { zeta, sweep, instinct };

std::string_view family_name(next_edit_family f);

// The format for a model. `setting` is the nextEdit.format setting: "auto"
// picks by the model's name (GGUF general.name and file name; "zeta" ->
// zeta, "instinct" -> instinct, "sweep" with "next-edit"/"next_edit"/"nextedit" -> sweep), "off"
// and an unrecognized model give none, a family name forces it.
std::optional<next_edit_family> pick_next_edit_format(std::string_view setting, std::string_view model_name);

struct related_file {
  std::string path;
  std::string text;
};

struct next_edit_prompt_input {
  std::string path;        // the document's path as the prompt names it
  std::string_view text;   // the whole document
  size_t cursor = 0;       // byte offset, inside the region
  // The editable region: from a line start to a line end (its break excluded).
  size_t region_begin = 0, region_end = 0;
  // The excerpt around it (zeta, instinct): from a line start to a line end, containing the region.
  size_t context_begin = 0, context_end = 0;
  std::string original_region;       // sweep: the region as it was before the latest edit
  std::vector<index::edit_hunk> hunks;  // recent edits, oldest first
  std::vector<related_file> related;    // sweep, instinct: other files, most relevant last
};

struct prompt_piece {
  bool special = false;  // the text of one special token
  std::string text;
  bool operator==(const prompt_piece&) const = default;
};

struct next_edit_prompt {
  std::vector<prompt_piece> pieces;
  std::string end_text;                  // decoded text that ends the region (zeta)
  std::vector<std::string> stop_tokens;  // special tokens that end the output (sweep)
  std::string text() const;              // the pieces concatenated
};

next_edit_prompt build_next_edit_prompt(next_edit_family f, const next_edit_prompt_input& in);

// The rewritten region in `output` (the decoded text, stop token excluded):
// nullopt when the output is not a complete region (zeta: no end marker yet;
// sweep: not ended by a stop token). Cursor markers are removed.
std::optional<std::string> parse_next_edit_output(next_edit_family f, std::string_view output, bool stopped);

// The path a prompt shows for a URI (the scheme and leading slashes removed).
std::string prompt_path_of(std::string_view uri);

}  // namespace qf::server::completion
