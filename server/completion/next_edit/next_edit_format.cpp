// Next-edit prompt formats (see the header; docs/completion.md cites the sources).
#include "server/completion/next_edit/next_edit_format.h"

#include <algorithm>
#include <cctype>

namespace qf::server::completion {
namespace {

constexpr std::string_view k_zeta_cursor = "<|user_cursor_is_here|>";
constexpr std::string_view k_zeta_start = "<|editable_region_start|>";
constexpr std::string_view k_zeta_end = "<|editable_region_end|>";
constexpr std::string_view k_zeta_sof = "<|start_of_file|>";
// Zeta's instruction, as its training data and Zed's client have it.
constexpr std::string_view k_zeta_instruction =
    "### Instruction:\n"
    "You are a code completion assistant and your task is to analyze user edits and then rewrite an excerpt that "
    "the user provides, suggesting the appropriate edits within the excerpt, taking into account the cursor "
    "location.\n\n";
constexpr std::string_view k_file_sep = "<|file_sep|>";
constexpr std::string_view k_endoftext = "<|endoftext|>";
// Instinct: ChatML turns, and its own context markers (plain text).
constexpr std::string_view k_im_start = "<|im_start|>";
constexpr std::string_view k_im_end = "<|im_end|>";
constexpr std::string_view k_instinct_file = "<|context_file|>";
constexpr std::string_view k_instinct_snippet = "<|snippet|>";
// The system turn: what the sections and markers of the user turn mean.
// Continue's client sends a longer system message of its own; the sections,
// markers and response contract described here are the same.
constexpr std::string_view k_instinct_system =
    "You predict the next edit a developer will make. The user message has three sections. \"### Context:\" "
    "holds snippets of other files, each as <|context_file|>: PATH, then <|snippet|>, then the code. "
    "\"### User Edits:\" holds the developer's recent edits as unified diffs, most recent first. "
    "\"### User Excerpt:\" holds the current file's path and an excerpt of it, in which "
    "<|editable_region_start|> and <|editable_region_end|> delimit the region you rewrite and "
    "<|user_cursor_is_here|> marks the cursor.\n\n"
    "Answer with the editable region only, rewritten as the developer will have it after their next edit: "
    "no markers, no code from outside the region, the existing indentation kept. Do not undo their last edit. "
    "If nothing should change, answer with the region unchanged.";
constexpr std::string_view k_instinct_request =
    "Read the context, the edits and the excerpt to see what the developer is doing, and rewrite the editable "
    "region of the excerpt as it will be after the changes they make next: code added, removed or modified.";

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void erase_all(std::string& s, std::string_view what) {
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at)) s.erase(at, what.size());
}

// A hunk's body as diff -U0 has it, without the file header (every line,
// the last one too, ends with a break, as Zed's unified diffs do).
std::string hunk_body(const index::edit_hunk& h) {
  std::string d = index::render_unified_diff(h);
  const size_t at = d.find("@@");
  return at == std::string::npos ? std::string() : d.substr(at);
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += '\n';
    out += lines[i];
  }
  return out;
}

class piece_list {
 public:
  void text(std::string_view t) {
    if (t.empty()) return;
    if (!pieces_.empty() && !pieces_.back().special) pieces_.back().text.append(t);
    else pieces_.push_back(prompt_piece{false, std::string(t)});
  }
  void special(std::string_view t) { pieces_.push_back(prompt_piece{true, std::string(t)}); }
  std::vector<prompt_piece> take() { return std::move(pieces_); }

 private:
  std::vector<prompt_piece> pieces_;
};

next_edit_prompt build_zeta(const next_edit_prompt_input& in) {
  const std::string_view t = in.text;
  piece_list p;
  p.text(k_zeta_instruction);
  p.text("### User Edits:\n\n");
  for (size_t i = 0; i < in.hunks.size(); ++i) {
    if (i) p.text("\n\n");
    // The path quoted, as Zed wrote it (Rust's Debug format of a path) when Zeta was trained.
    p.text("User edited \"");
    p.text(prompt_path_of(in.hunks[i].uri));
    p.text("\":\n```diff\n");
    p.text(hunk_body(in.hunks[i]));
    p.text("\n```");
  }
  p.text("\n\n### User Excerpt:\n\n");
  // The excerpt; the response repeats it, so the prompt carries the
  // response's head (up to the start marker's line) as well.
  std::string head = "```" + in.path + "\n";
  if (in.context_begin == 0) head.append(k_zeta_sof).append("\n");
  head.append(t.substr(in.context_begin, in.region_begin - in.context_begin));
  head.append(k_zeta_start).append("\n");
  p.text(head);
  p.text(t.substr(in.region_begin, in.cursor - in.region_begin));
  p.text(k_zeta_cursor);
  p.text(t.substr(in.cursor, in.region_end - in.cursor));
  p.text("\n");
  p.text(k_zeta_end);
  p.text(t.substr(in.region_end, in.context_end - in.region_end));
  p.text("\n```\n\n### Response:\n\n");
  p.text(head);
  next_edit_prompt out;
  out.pieces = p.take();
  out.end_text = "\n" + std::string(k_zeta_end);
  out.stop_tokens = {std::string(k_endoftext)};
  return out;
}

next_edit_prompt build_sweep(const next_edit_prompt_input& in) {
  const std::string_view t = in.text;
  piece_list p;
  for (const related_file& f : in.related) {
    p.special(k_file_sep);
    p.text(f.path + "\n" + f.text + "\n");
  }
  for (const index::edit_hunk& h : in.hunks) {
    p.special(k_file_sep);
    p.text(prompt_path_of(h.uri) + ".diff\noriginal:\n" + join_lines(h.old_lines) + "\nupdated:\n" +
           join_lines(h.new_lines) + "\n");
  }
  p.special(k_file_sep);
  p.text("original/" + in.path + "\n" + in.original_region + "\n");
  p.special(k_file_sep);
  p.text("current/" + in.path + "\n");
  p.text(t.substr(in.region_begin, in.region_end - in.region_begin));
  p.text("\n");
  p.special(k_file_sep);
  p.text("updated/" + in.path + "\n");
  next_edit_prompt out;
  out.pieces = p.take();
  out.stop_tokens = {std::string(k_file_sep), std::string(k_endoftext)};
  return out;
}

// Instinct (Continue's Qwen2.5-Coder-7B fine-tune): a ChatML system turn and
// a user turn of four parts -- the request, "### Context:" with the related
// files, "### User Edits:" with one diff block per edit, newest first, and
// "### User Excerpt:" with the path and the excerpt, the markers on lines of
// their own and the cursor marker inside its line -- ending "```\n### Response:".
// The assistant turn is opened; the model writes the region and ends its turn.
next_edit_prompt build_instinct(const next_edit_prompt_input& in) {
  const std::string_view t = in.text;
  std::string user(k_instinct_request);
  user += "\n\n### Context:\n";
  for (size_t i = 0; i < in.related.size(); ++i) {
    if (i) user += "\n";
    user.append(k_instinct_file).append(": ").append(in.related[i].path).append("\n");
    user.append(k_instinct_snippet).append("\n").append(in.related[i].text);
  }
  user += "\n\n### User Edits:\n\n";
  for (size_t i = in.hunks.size(); i-- > 0;) {
    if (i + 1 < in.hunks.size()) user += "\n";
    std::string body = hunk_body(in.hunks[i]);
    if (!body.empty() && body.back() == '\n') body.pop_back();
    user += "User edited file \"" + prompt_path_of(in.hunks[i].uri) + "\"\n\n```diff\n" + body + "\n```";
  }
  user += "\n\n### User Excerpt:\n" + in.path + "\n\n";
  user.append(t.substr(in.context_begin, in.region_begin - in.context_begin));
  user.append(k_zeta_start).append("\n");
  user.append(t.substr(in.region_begin, in.cursor - in.region_begin));
  user.append(k_zeta_cursor);
  user.append(t.substr(in.cursor, in.region_end - in.cursor));
  user.append("\n").append(k_zeta_end);
  user.append(t.substr(in.region_end, in.context_end - in.region_end));
  user += "```\n### Response:";
  piece_list p;
  p.special(k_im_start);
  p.text("system\n");
  p.text(k_instinct_system);
  p.special(k_im_end);
  p.text("\n");
  p.special(k_im_start);
  p.text("user\n");
  p.text(user);
  p.special(k_im_end);
  p.text("\n");
  p.special(k_im_start);
  p.text("assistant\n");
  next_edit_prompt out;
  out.pieces = p.take();
  out.stop_tokens = {std::string(k_im_end), std::string(k_endoftext)};
  return out;
}

}  // namespace

std::string_view family_name(next_edit_family f) {
  switch (f) {
    case next_edit_family::zeta: return "zeta";
    case next_edit_family::sweep: return "sweep";
    case next_edit_family::instinct: return "instinct";
  }
  return "zeta";
}

std::optional<next_edit_family> pick_next_edit_format(std::string_view setting, std::string_view model_name) {
  if (setting == "zeta") return next_edit_family::zeta;
  if (setting == "sweep") return next_edit_family::sweep;
  if (setting == "instinct") return next_edit_family::instinct;
  if (setting != "auto") return std::nullopt;
  const std::string n = lower(model_name);
  if (n.find("zeta") != std::string::npos) return next_edit_family::zeta;
  if (n.find("instinct") != std::string::npos) return next_edit_family::instinct;
  if (n.find("sweep") != std::string::npos &&
      (n.find("next-edit") != std::string::npos || n.find("next_edit") != std::string::npos ||
       n.find("nextedit") != std::string::npos))
    return next_edit_family::sweep;
  return std::nullopt;
}

std::string prompt_path_of(std::string_view uri) {
  if (uri.starts_with("file://")) uri.remove_prefix(7);
  while (uri.starts_with("/")) uri.remove_prefix(1);
  return std::string(uri);
}

std::string next_edit_prompt::text() const {
  std::string s;
  for (const prompt_piece& p : pieces) s += p.text;
  return s;
}

next_edit_prompt build_next_edit_prompt(next_edit_family f, const next_edit_prompt_input& in) {
  switch (f) {
    case next_edit_family::zeta: return build_zeta(in);
    case next_edit_family::sweep: return build_sweep(in);
    case next_edit_family::instinct: return build_instinct(in);
  }
  return build_zeta(in);
}

std::optional<std::string> parse_next_edit_output(next_edit_family f, std::string_view output, bool stopped) {
  std::string s;
  if (f == next_edit_family::zeta) {
    const std::string end = "\n" + std::string(k_zeta_end);
    size_t at = output.find(end);
    if (at == std::string_view::npos) {
      // A region left empty ends with the marker right away.
      if (!output.starts_with(k_zeta_end)) return std::nullopt;
      at = 0;
    }
    s = std::string(output.substr(0, at));
  } else {
    if (!stopped) return std::nullopt;
    s = std::string(output);
    if (f == next_edit_family::instinct) {
      // Told to leave the markers out, it may still echo them on lines of their own.
      if (s.starts_with(k_zeta_start)) s.erase(0, s.find('\n') == std::string::npos ? s.size() : s.find('\n') + 1);
      if (const size_t at = s.rfind(k_zeta_end); at != std::string::npos) s.erase(at);
    }
    if (!s.empty() && s.back() == '\n') s.pop_back();
    if (!s.empty() && s.back() == '\r') s.pop_back();
  }
  erase_all(s, k_zeta_cursor);
  return s;
}

}  // namespace qf::server::completion
