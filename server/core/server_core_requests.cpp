// The request policy of the server core (see core_requests.h): which
// document a request may read, the deadline it gets, the statistics of each
// completion, the check that the document did not change while the worker
// ran, the next edits kept per document and offered with inline completions.
// Each request is answered once: a cancellation (on the cancelling thread)
// and the worker's result (on the dispatcher) race for a shared flag, and
// only the winner records and replies.
#include <atomic>
#include <memory>

#include "server/core/server_core.h"

namespace qf::server {

namespace {

using kind = request_failure::kind;

// True for the first caller only.
class answer_once {
 public:
  bool claim() const { return !done_->exchange(true); }

 private:
  std::shared_ptr<std::atomic<bool>> done_ = std::make_shared<std::atomic<bool>>(false);
};

double ms_since(clock::time_point t) { return std::chrono::duration<double, std::milli>(clock::now() - t).count(); }

// The text position of byte `offset` in `d`.
text_pos pos_of(const index::document& d, std::size_t offset) {
  const std::size_t line = d.lines.line_of(offset);
  return text_pos{static_cast<int64_t>(line), static_cast<int64_t>(offset - d.lines.line_start(line))};
}

// The completion request at `at`, with its context (add_context).
completion_request request_at(const server_core& core, const request_place& at) {
  const index::document& doc = *at.doc;
  completion_request req;
  req.uri = doc.uri;
  req.version = doc.version;
  req.language_id = doc.language_id;
  req.text = index::shared_text(at.doc);  // shared with the store, not copied
  req.cursor = at.cursor;
  core.add_context(req);
  return req;
}

}  // namespace

outcome<index::document_store::snapshot> server_core::request_document(const std::string& uri) const {
  const index::document_store::lookup_result found = docs_.lookup(uri);
  switch (found.state) {
    case index::doc_state::open: return found.doc;
    case index::doc_state::not_open: return refused(kind::not_open, "document is not open: " + uri);
    case index::doc_state::stale:
      return refused(kind::unavailable, "document is out of sync with the editor: " + uri + " (" + found.reason +
                                            "); reopen it or send its full text");
    case index::doc_state::not_tracked:
      return refused(kind::unavailable,
                     "document is not tracked: " + uri + " (" + found.reason + "); close it and open it again");
  }
  return refused(kind::not_open, "document is not open: " + uri);
}

void server_core::request_completion(completion_call call, reply_fn<completion_answer> reply) {
  const server_settings s = settings();
  completion_request req = request_at(*this, call.at);
  req.explicit_trigger = call.explicit_trigger;
  req.inline_request = call.inline_request;
  req.received = call.received;
  req.deadline =
      call.received + std::chrono::milliseconds(call.explicit_trigger ? s.explicit_deadline_ms : s.auto_deadline_ms);

  request_record base;
  base.uri = req.uri;
  base.version = req.version;
  base.inline_request = call.inline_request;
  base.explicit_trigger = call.explicit_trigger;
  base.slo_budget_ms = s.slo_budget_ms;

  const answer_once once;
  auto on_cancel = [this, once, reply, base, received = call.received](cancel_reason why) {
    if (!once.claim()) return;
    request_record r = base;
    r.outcome = request_outcome::cancelled;
    r.reason = why;
    r.wall_ms = ms_since(received);
    stats_.record(r);
    reply(cancelled_because(why));
  };
  auto done = [this, once, reply, base, received = call.received, at = call.at,
               on_cancel](completion_outcome out) {
    // The document changed (or closed) between the worker finishing and now.
    if (docs_.get(base.uri) != at.doc) return on_cancel(cancel_reason::content_modified);
    if (!once.claim()) return;
    request_record r = base;
    r.wall_ms = ms_since(received);
    completion_answer a;
    a.doc = at.doc;
    if (out.no_model || out.failed) {
      r.outcome = out.failed ? request_outcome::failed : request_outcome::no_model;
      a.no_model = out.no_model;
      if (out.failed) a.failed = out.error;
    } else {
      r.outcome = request_outcome::answered;
      r.items = out.result.items.size();
      r.metrics = out.result.metrics;
      a.result = std::move(out.result);
      if (base.inline_request) add_cached_next_edits(at, a.result);
    }
    stats_.record(r);
    reply(std::move(a));
  };
  complete(call.key, std::move(req), std::move(done), std::move(on_cancel));
}

void server_core::request_explanation(explain_call call, reply_fn<prompt_explanation> reply) {
  const std::string uri = call.at.doc->uri;
  if (const std::string why = why_private(uri); !why.empty())
    return reply(refused(kind::unavailable, uri + " is kept out of completions and prompts (" + why +
                                                "); there is no prompt to explain"));
  completion_request req = request_at(*this, call.at);
  req.explicit_trigger = true;
  req.received = call.received;
  // The budgets of both trigger kinds, for their load plans (explain.cpp).
  req.deadline = call.received + std::chrono::milliseconds(settings().explicit_deadline_ms);
  req.automatic_budget = std::chrono::milliseconds(settings().auto_deadline_ms);
  const answer_once once;
  auto on_cancel = [once, reply](cancel_reason why) {
    if (once.claim()) reply(cancelled_because(why));
  };
  auto done = [this, once, reply, at = call.at, uri, on_cancel](std::optional<prompt_explanation> e, bool no_model) {
    if (docs_.get(uri) != at.doc) return on_cancel(cancel_reason::content_modified);
    if (!once.claim()) return;
    if (no_model) {
      const model_state m = model();
      return reply(refused(kind::unavailable, "no model is loaded, so there is no prompt to explain" +
                                                  (m.error.empty() ? std::string() : ": " + m.error)));
    }
    if (!e) return reply(refused(kind::unavailable, "the completion provider cannot explain its prompt"));
    reply(std::move(*e));
  };
  explain(call.key, std::move(req), std::move(done), std::move(on_cancel));
}

void server_core::request_next_edit(next_edit_call call, reply_fn<next_edit_answer> reply) {
  const completion_request creq = request_at(*this, call.at);
  next_edit_request req;
  req.uri = creq.uri;
  req.version = creq.version;
  req.language_id = creq.language_id;
  req.text = creq.text;
  req.cursor = next_edit_pos{creq.cursor.line, creq.cursor.byte_col};
  req.received = call.received;
  req.deadline = call.received + std::chrono::milliseconds(settings().explicit_deadline_ms);
  for (const auto& d : creq.context_docs) req.context_docs.push_back({d.uri, d.text});
  req.edits = creq.edits;
  const std::string uri = req.uri;
  const answer_once once;
  auto on_cancel = [once, reply](cancel_reason why) {
    if (!once.claim()) return;
    // Preempted: by a newer next edit of the document or by any completion request.
    reply(cancelled_because(why, why == cancel_reason::preempted
                                     ? "superseded by a newer request (a completion request or a newer next edit "
                                       "of the document)"
                                     : ""));
  };
  auto done = [this, once, reply, at = call.at, uri, on_cancel](next_edit_result r, bool no_model) {
    if (docs_.get(uri) != at.doc) return on_cancel(cancel_reason::content_modified);
    if (!once.claim()) return;
    next_edit_answer a;
    a.doc = at.doc;
    if (no_model)
      a.reason = "no model is loaded";
    else if (r.edits.empty())
      a.reason = r.reason;
    {
      std::lock_guard<std::mutex> lock(next_edit_mu_);
      a.id = "next-edit-" + std::to_string(++next_edit_ids_);
      std::erase_if(next_edit_cache_, [&](const auto& kv) { return docs_.get(kv.first) != kv.second.doc; });
      next_edit_cache_[uri] = cached_next_edit{at.doc, r.edits};
    }
    a.result = std::move(r);
    reply(std::move(a));
  };
  next_edit(call.key, std::move(req), std::move(done), std::move(on_cancel));
}

void server_core::add_cached_next_edits(const request_place& at, completion_result& result) {
  std::vector<next_edit_edit> edits;
  {
    std::lock_guard<std::mutex> lock(next_edit_mu_);
    auto it = next_edit_cache_.find(at.doc->uri);
    if (it == next_edit_cache_.end()) return;
    if (it->second.doc != at.doc) {
      next_edit_cache_.erase(it);
      return;
    }
    edits = it->second.edits;
  }
  const index::document& d = *at.doc;
  const std::size_t cursor =
      d.lines.line_start(static_cast<std::size_t>(at.cursor.line)) + static_cast<std::size_t>(at.cursor.byte_col);
  for (const next_edit_edit& e : edits) {
    if (e.begin.line != at.cursor.line) continue;
    const std::size_t b = d.lines.line_start(e.begin.line) + static_cast<std::size_t>(e.begin.byte_col);
    const std::size_t en = d.lines.line_start(e.end.line) + static_cast<std::size_t>(e.end.byte_col);
    // The range must hold the cursor: widen it to the cursor with the text in between.
    const std::size_t rb = std::min(b, cursor), re = std::max(en, cursor);
    completion_candidate item;
    item.insert_text = d.text.substr(rb, b - rb) + e.new_text + d.text.substr(en, re - en);
    item.replace_begin = pos_of(d, rb);
    item.replace_end = pos_of(d, re);
    result.items.push_back(std::move(item));
  }
}

bool server_core::cancel(const std::string& key) { return worker_.cancel(key, cancel_reason::cancelled); }

void server_core::cancel_all(cancel_reason why) { worker_.cancel_all(why); }

core_status server_core::status() const {
  core_status st;
  st.model = model();
  st.open_documents = docs_.size();
  st.stale_documents = docs_.stale_count();
  st.open_document_bytes = docs_.total_bytes();
  st.queued = worker_.queued();
  st.worker_busy = worker_.busy();
  // From the board: never waits for the worker.
  const boost::json::value board = board_->status_json();
  st.sources = board.at("sources");
  st.routes = board.at("routes");
  return st;
}

boost::json::value server_core::stats_json(std::size_t recent) {
  const server_settings s = settings();
  boost::json::value stats = stats_.to_json(recent, slo_options{s.slo_budget_ms, s.slo_target});
  stats.as_object()["acceptance"] = acceptance_.to_json();
  stats.as_object()["sources"] = board_->stats_json();  // per completion source (server/routing/)
  return stats;
}

}  // namespace qf::server
