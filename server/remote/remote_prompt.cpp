// Cutting the prompt parts of a remote request (see remote_prompt.h).
#include "server/remote/remote_prompt.h"

#include <algorithm>

#include "indexing/file_uri.h"
#include "text/lines.h"

namespace qf::remote {

namespace {

bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xc0) == 0x80; }

// The last `max` bytes of `text`, starting at a line start (or, when the
// last `max` bytes hold no line break, at a UTF-8 sequence's start).
std::string_view tail_lines(std::string_view text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t from = text.size() - max;
  while (from < text.size() && !text::is_line_break_char(text[from - 1])) ++from;
  if (from == text.size()) {
    from = text.size() - max;
    while (from < text.size() && continuation(text[from])) ++from;
  }
  return text.substr(from);
}

// The first `max` bytes of `text`, ending after a line break (or at a UTF-8
// sequence's start).
std::string_view head_lines(std::string_view text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t to = max;
  while (to > 0 && !text::is_line_break_char(text[to - 1])) --to;
  if (to == 0) {
    to = max;
    while (to > 0 && continuation(text[to])) --to;
  }
  return text.substr(0, to);
}

}  // namespace

std::string uri_filename(std::string_view uri, const std::vector<std::string>& roots) {
  const std::string path = index::file_uri_to_path(uri);
  if (path.empty()) return std::string(uri);
  std::string rel = index::path_relative_to_roots(path, roots);
  if (!rel.empty()) return rel;
  return path.substr(path.rfind('/') + 1);  // outside the workspace: the name alone
}

prompt_parts build_prompt(const server::completion_request& req, const remote_options& o) {
  prompt_parts out;
  out.filename = uri_filename(req.uri, req.workspace_roots);
  const std::string_view text = req.text;
  const std::size_t cursor = std::min(text::offset_of_line_col(text, req.cursor.line, req.cursor.byte_col), text.size());
  out.prefix = std::string(tail_lines(text.substr(0, cursor), o.max_prefix_chars));
  out.suffix = std::string(head_lines(text.substr(cursor), o.max_suffix_chars));

  std::size_t budget = o.max_extra_chars;
  auto add = [&](const std::string& uri, std::string_view chunk) {
    if (budget == 0 || uri == req.uri || chunk.empty()) return;
    std::string_view cut = head_lines(chunk, budget);
    if (cut.empty()) return;
    budget -= cut.size();
    out.extra.push_back({uri_filename(uri, req.workspace_roots), std::string(cut)});
  };
  if (req.recent)
    for (const auto& c : req.recent->recent()) add(c.uri, c.text);
  for (const auto& d : req.context_docs) add(d.uri, d.text);
  return out;
}

}  // namespace qf::remote
