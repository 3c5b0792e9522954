// The stop rules applied while decoding (see the header).
#include "server/completion/postprocess/stop_rules.h"

#include <algorithm>

#include "server/completion/postprocess/syntax_rules.h"

namespace qf::server::completion {
namespace {

bool is_closer(std::string_view trimmed) {
  return !trimmed.empty() && (trimmed.front() == '}' || trimmed.front() == ')' || trimmed.front() == ']' ||
                              trimmed.starts_with("end"));
}

}  // namespace

stop_checker::stop_checker(const cursor_context& cx, const trigger_decision& d, bool stop_rules)
    : cx_(cx), d_(d), rules_(stop_rules) {}

bool stop_checker::push(std::string_view text) {
  if (stopped_) return true;
  // Line breaks as '\n' only, so that the rules below see the lines the
  // document would ("\r\n" may arrive split over two pieces).
  for (char c : text) {
    if (c == '\n' && after_cr_) {
      after_cr_ = false;
      continue;
    }
    after_cr_ = c == '\r';
    text_.push_back(after_cr_ ? '\n' : c);
  }
  scan();
  if (rules_ && !stopped_) {
    const size_t cut = repetition_cut_at_end(std::string_view(text_).substr(0, keep_));
    if (cut != std::string_view::npos) {
      keep_ = cut;
      stopped_ = true;
    }
  }
  return stopped_;
}

bool stop_checker::at_line_end() const { return text_.empty() || text_.back() == '\n'; }

std::string stop_checker::kept_at_deadline() const {
  std::string k = kept();
  if (!rules_ || !d_.multi_line) return k;
  size_t nl = k.rfind('\n');
  if (nl == std::string::npos) return k;
  return k.substr(0, nl);
}

void stop_checker::scan() {
  if (!rules_) {
    keep_ = text_.size();
    return;
  }
  // Inserting lines: the first line is already a line of its own, and it may
  // be the code right of the cursor itself (nothing to insert).
  const std::string_view right = trim_space(cx_.line_after);
  size_t first_nl = text_.find('\n');
  if (d_.inserts_lines && first_nl != std::string::npos &&
      trim_space(std::string_view(text_).substr(0, first_nl)) == right) {
    keep_ = 0;
    stopped_ = true;
    return;
  }
  if (!d_.multi_line) {
    if (first_nl != std::string::npos) {
      keep_ = d_.inserts_lines ? first_nl + 1 : first_nl;
      stopped_ = true;
    } else {
      keep_ = text_.size();
    }
    return;
  }
  // Multi-line: look at every line after the first (the first continues the cursor line).
  const std::string_view first_next = [&]() -> std::string_view {
    if (d_.inserts_lines) return right;  // the code right of the cursor follows the inserted lines
    for (const std::string& l : cx_.next_lines)
      if (!trim_space(l).empty()) return trim_space(l);
    return {};
  }();
  // The first line continues the cursor line; its indentation is that line's.
  // Inserted lines dedent from their own first line's indentation (or the
  // cursor line's, when less).
  int base_indent = cx_.base_indent;
  if (d_.inserts_lines && first_nl != std::string::npos) {
    const std::string_view first = std::string_view(text_).substr(0, first_nl);
    if (!trim_space(first).empty()) base_indent = std::min(base_indent, indent_width(first));
  }
  size_t line_start = first_nl;
  keep_ = text_.size();
  bool body_seen = false;
  if (line_start == std::string::npos) return;
  for (;;) {
    size_t begin = line_start + 1;
    size_t end = text_.find('\n', begin);
    const bool complete = end != std::string::npos;
    std::string_view line = std::string_view(text_).substr(begin, (complete ? end : text_.size()) - begin);
    std::string_view t = trim_space(line);
    if (!t.empty()) {
      int ind = indent_width(line);
      // Indentation is only known once the first non-blank character arrived.
      bool stop = ind < base_indent;
      if (d_.block_opener && body_seen && ind <= base_indent) {
        if (is_closer(t)) {
          // Keep the closing line itself, then stop.
          if (complete) {
            keep_ = end;
            stopped_ = true;
            return;
          }
          return;  // wait for the line to complete
        }
        stop = true;
      }
      if (!stop && complete && !first_next.empty() && t == first_next) stop = true;
      if (stop) {
        // Cut before the '\n' that starts this line (inserted lines keep it).
        keep_ = d_.inserts_lines ? line_start + 1 : line_start;
        stopped_ = true;
        return;
      }
      if (ind > base_indent) body_seen = true;
    }
    if (!complete) return;
    line_start = end;
  }
}

}  // namespace qf::server::completion
