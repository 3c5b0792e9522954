// Next-edit jobs on the inference worker (see server_core.h). They are the
// worker's lowest priority: a completion request cancels them (preempted)
// before it is queued, so it never waits for a region rewrite.
#include "server/core/server_core.h"

namespace qf::server {

void server_core::next_edit(const std::string& key, next_edit_request req,
                            std::function<void(next_edit_result, bool no_model)> done,
                            std::function<void(cancel_reason)> on_cancel) {
  if (const std::string why = privacy()->why_private(req.uri, req.language_id); !why.empty()) {
    next_edit_result r;
    r.reason = "the document is kept out of completions (" + why + ")";
    post_([done = std::move(done), r = std::move(r)]() mutable { done(std::move(r), false); });
    return;
  }
  {
    std::lock_guard<std::mutex> lock(next_edit_mu_);
    next_edit_keys_.insert(key);
  }
  scheduler::job j;
  j.key = key;
  j.uri = req.uri;
  j.group = req.uri + "#nextEdit";
  auto post = post_;
  j.run = [this, key, req = std::move(req), done = std::move(done), post](completion_provider* provider,
                                                                            const cancel_token& cancel) {
    next_edit_result r;
    if (provider) r = provider->next_edit(req, cancel);
    {
      std::lock_guard<std::mutex> lock(next_edit_mu_);
      next_edit_keys_.erase(key);
    }
    if (cancel.is_cancelled()) return;  // already answered by on_cancel
    const bool no_model = provider == nullptr;
    post([done, r = std::move(r), no_model]() mutable { done(std::move(r), no_model); });
  };
  j.on_cancel = [this, key, on_cancel = std::move(on_cancel)](cancel_reason why) {
    {
      std::lock_guard<std::mutex> lock(next_edit_mu_);
      next_edit_keys_.erase(key);
    }
    if (on_cancel) on_cancel(why);
  };
  docs_.touch(j.uri);
  worker_.submit(std::move(j));
}

void server_core::cancel_next_edits() {
  std::set<std::string> keys;
  {
    std::lock_guard<std::mutex> lock(next_edit_mu_);
    if (next_edit_keys_.empty()) return;
    keys = next_edit_keys_;
  }
  for (const std::string& k : keys) worker_.cancel(k, cancel_reason::preempted);
}

}  // namespace qf::server
