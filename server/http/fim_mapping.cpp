// A fill-in-the-middle request as a completion request (see fim_mapping.h).
#include "server/http/fim_mapping.h"

#include <algorithm>

#include "text/lines.h"

namespace qf::http {

std::string buffer_pool::choose(const std::string& scope, std::string_view text, std::size_t cursor) {
  buffer* best = nullptr;
  std::size_t best_edit = 0;
  for (auto& b : bufs_) {
    if (b.scope != scope) continue;
    const std::size_t n = std::min(b.text.size(), text.size());
    std::size_t head = 0;
    while (head < n && b.text[head] == text[head]) ++head;
    std::size_t tail = 0;
    while (tail < n - head && b.text[b.text.size() - 1 - tail] == text[text.size() - 1 - tail]) ++tail;
    const std::size_t kept = head + tail;
    // One edit between them, a small one, and where the cursor is: the same
    // client typing on (the edit is the keystrokes before the cursor).
    if (text.size() - kept > max_edit_bytes || b.text.size() - kept > max_edit_bytes) continue;
    const std::size_t edit = std::max(text.size() - kept, b.text.size() - kept);
    if (edit > 0 && (cursor + max_edit_bytes < head || cursor > text.size() - tail + max_edit_bytes)) continue;
    if (!best || edit < best_edit) best = &b, best_edit = edit;
  }
  if (!best) {
    if (bufs_.size() < capacity_) {
      bufs_.push_back(buffer{scope, "", "", 0});
      best = &bufs_.back();
    } else {
      best = &*std::min_element(bufs_.begin(), bufs_.end(),
                                [](const buffer& a, const buffer& b) { return a.used < b.used; });
      best->scope = scope;
    }
    best->key = "quickfill-http:/buffer/" + std::to_string(++made_);
  }
  best->text = std::string(text);
  best->used = ++tick_;
  return best->key;
}

server::completion_request make_completion_request(const fim_request& q, const std::string& key,
                                                   server::clock::time_point received, int deadline_ms) {
  server::completion_request r;
  r.uri = key;
  r.buffer_key = key;
  r.version = 1;
  std::string text;
  text.reserve(q.prefix.size() + q.middle.size() + q.suffix.size());
  text += q.prefix;
  text += q.middle;
  const std::size_t cursor = text.size();
  text += q.suffix;
  const text::line_col lc = text::line_col_of_offset(text, cursor);
  r.cursor = server::text_pos{lc.line, lc.col};
  r.text = index::shared_text(std::move(text));
  r.explicit_trigger = false;  // a keystroke's request: greedy, one candidate
  r.inline_request = true;
  r.max_tokens = q.n_predict > 0 ? q.n_predict : 0;
  r.received = received;
  double budget = q.t_max_prompt_ms + q.t_max_predict_ms;
  if (budget <= 0) budget = deadline_ms;
  r.deadline = received + std::chrono::microseconds(static_cast<long long>(budget * 1000));
  for (std::size_t i = 0; i < q.extra.size(); ++i) {
    const fim_chunk& c = q.extra[i];
    if (c.text.empty()) continue;
    const std::string name = c.filename.empty() ? "chunk-" + std::to_string(i) : c.filename;
    r.context_docs.push_back({"quickfill-http:/extra/" + name, index::shared_text(c.text)});
  }
  return r;
}

fim_answer make_answer(const fim_request& q, const server::completion_request& req,
                       const server::completion_result& r, const std::string& model) {
  fim_answer a;
  a.model = model;
  a.id_slot = q.id_slot < 0 ? 0 : q.id_slot;
  const server::completion_metrics& m = r.metrics;
  a.prompt_n = m.tokens_evaluated;
  a.cached_n = m.tokens_reused;
  a.predicted_n = m.tokens_generated;
  a.prompt_ms = std::max(0.0, m.ttft_ms - m.queue_ms);
  a.predicted_ms = std::max(0.0, m.total_ms - m.ttft_ms);
  const std::string_view text = req.text.view();
  const std::size_t cursor = q.prefix.size() + q.middle.size();
  for (const auto& c : r.items) {
    const std::size_t begin = text::offset_of_line_col(text, c.replace_begin.line, c.replace_begin.byte_col);
    const std::size_t end = text::offset_of_line_col(text, c.replace_end.line, c.replace_end.byte_col);
    if (begin > cursor || end < cursor) continue;
    std::string content = c.insert_text;
    // Text before the cursor that the candidate rewrites must be what it starts with.
    const std::string_view before = text.substr(begin, cursor - begin);
    if (content.compare(0, before.size(), before) != 0) continue;
    content.erase(0, before.size());
    // Text after the cursor it replaces stays in the buffer: drop it from the end.
    const std::string_view after = text.substr(cursor, end - cursor);
    if (!after.empty() && content.size() >= after.size() &&
        content.compare(content.size() - after.size(), after.size(), after) == 0)
      content.resize(content.size() - after.size());
    a.content = std::move(content);
    break;
  }
  const int limit = req.max_tokens;
  if (limit > 0 && a.predicted_n >= limit) a.stop_type = "limit";
  apply_stops(q, a);
  return a;
}

}  // namespace qf::http
