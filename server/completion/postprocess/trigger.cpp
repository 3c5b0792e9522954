// The trigger decision (see the header).
#include "server/completion/postprocess/trigger.h"

#include <algorithm>

namespace qf::server::completion {
namespace {

bool ends_with_block_opener(std::string_view before) {
  std::string_view t = rtrim_space(before);
  if (t.empty()) return false;
  char c = t.back();
  if (c == '{' || c == '(' || c == '[' || c == ':') return true;
  return t.ends_with("=>") || t.ends_with("->") || t.ends_with(" do") || t.ends_with(" then");
}

}  // namespace

trigger_decision decide_trigger(const cursor_context& cx, bool explicit_trigger, const completion_settings& s) {
  trigger_decision d;
  const bool after_word = !cx.line_before.empty() && is_word_byte(static_cast<unsigned char>(cx.line_before.back()));
  const bool code_right = std::any_of(cx.line_after.begin(), cx.line_after.end(),
                                      [](char c) { return is_word_byte(static_cast<unsigned char>(c)); });
  if (!explicit_trigger && !s.auto_trigger_mid_word && after_word && code_right) d.skip = true;
  const bool rest_empty = trim_space(cx.line_after).empty();
  d.block_opener = rest_empty && ends_with_block_opener(cx.line_before);
  const bool empty_line = trim_space(cx.line_before).empty() && rest_empty;
  if (s.multi_line && rest_empty) d.multi_line = explicit_trigger || empty_line || d.block_opener;
  d.inserts_lines = cx.line_before.empty() && !rest_empty;
  if (s.multi_line && d.inserts_lines) d.multi_line = explicit_trigger;
  if (!s.stop_rules) d.multi_line = true;  // fixed-length generation: no line rule
  return d;
}

}  // namespace qf::server::completion
