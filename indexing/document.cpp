// Applying edits to a document (see document.h).
#include "indexing/document.h"

#include "text/utf8.h"

namespace qf::index {

document::document(std::string uri_, std::string language_id_, std::int64_t version_, std::string text_)
    : uri(std::move(uri_)), language_id(std::move(language_id_)), version(version_), text(std::move(text_)),
      lines(text) {}

bool apply_change(std::string& text, text::line_table& lines, const text_change& change, text::position_encoding enc,
                  std::string* error) {
  // Inserted text is valid UTF-8 (always so when it came from JSON).
  if (!text::is_valid_utf8(change.text)) {
    text_change repaired{change.range, text::repair_utf8(change.text)};
    return apply_change(text, lines, repaired, enc, error);
  }
  if (!change.range) {
    text = change.text;
    lines = text::line_table(text);
    return true;
  }
  const text_range& r = *change.range;
  if (r.start_line > r.end_line || (r.start_line == r.end_line && r.start_character > r.end_character)) {
    if (error)
      *error = "range start " + std::to_string(r.start_line) + ":" + std::to_string(r.start_character) +
               " is after its end " + std::to_string(r.end_line) + ":" + std::to_string(r.end_character);
    return false;
  }
  auto begin = text::offset_of(text, lines, r.start_line, r.start_character, enc);
  auto end = text::offset_of(text, lines, r.end_line, r.end_character, enc);
  if (!begin || !end) {
    if (error)
      *error = "line " + std::to_string(begin ? r.end_line : r.start_line) + " is past the last line (" +
               std::to_string(lines.line_count() - 1) + ")";
    return false;
  }
  // Both ends may have clamped to the same line end; start never passes end
  // because clamping is monotonic within a line and lines are ordered.
  text.replace(*begin, *end - *begin, change.text);
  lines = text::line_table(text);
  return true;
}

bool document::apply(const std::vector<text_change>& changes, text::position_encoding enc, std::string* error) {
  std::string work = text;
  text::line_table work_lines = lines;
  for (std::size_t i = 0; i < changes.size(); ++i) {
    std::string why;
    if (!apply_change(work, work_lines, changes[i], enc, &why)) {
      if (error) *error = "change " + std::to_string(i) + ": " + why;
      return false;
    }
  }
  text = std::move(work);
  lines = std::move(work_lines);
  return true;
}

}  // namespace qf::index
