// Next-edit jobs on the inference worker (see server_core.h).
#include "server/server_core.h"

namespace qf::server {

void server_core::next_edit(const std::string& key, next_edit_request req,
                            std::function<void(next_edit_result, bool no_model)> done,
                            std::function<void(cancel_reason)> on_cancel) {
  scheduler::job j;
  j.key = key;
  j.uri = req.uri;
  j.group = req.uri + "#nextEdit";
  auto post = post_;
  j.run = [req = std::move(req), done = std::move(done), post](completion_provider* provider,
                                                                 const cancel_token& cancel) {
    next_edit_result r;
    if (provider) r = provider->next_edit(req, cancel);
    if (cancel.is_cancelled()) return;  // already answered by on_cancel
    const bool no_model = provider == nullptr;
    post([done, r = std::move(r), no_model]() mutable { done(std::move(r), no_model); });
  };
  j.on_cancel = std::move(on_cancel);
  docs_.touch(j.uri);
  worker_.submit(std::move(j));
}

}  // namespace qf::server
