// The pipeline's next-edit prediction: a next_edit_engine sharing the
// pipeline's model, settings and KV pool (created on first use and again
// after the pool is rebuilt), so next-edit prompts and completion prompts
// compete for the same memory budget and reuse cached prefixes the same way.
#include <spdlog/spdlog.h>

#include "server/completion/pipeline/pipeline.h"

namespace qf::server::completion {

void pipeline::set_model_name(std::string name) {
  model_name_ = std::move(name);
  if (next_edit_) next_edit_->set_model_name(model_name_);
}

next_edit_result pipeline::next_edit(const next_edit_request& req, const cancel_token& cancel) {
  if (!next_edit_) {
    next_edit_ = std::make_unique<next_edit_engine>(*backend_, *pool_, s_);
    next_edit_->set_model_name(model_name_);
  }
  try {
    return next_edit_->run(req, cancel);
  } catch (const std::exception& e) {
    spdlog::warn("next edit failed for {}: {}", req.uri, e.what());
    next_edit_result r;
    r.reason = std::string("next-edit prediction failed: ") + e.what();
    return r;
  }
}

}  // namespace qf::server::completion
