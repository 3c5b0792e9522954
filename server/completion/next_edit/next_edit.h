// Next-edit prediction on the completion pipeline's model and prefix cache.
//
// Per request: pick the format (next_edit_format.h) -> the editable region
// around the cursor (next_edit_region.h) -> the prompt (recent edits oldest
// first, bounded in bytes; related files for sweep) -> a KV slot of the
// pipeline's pool, reusing the longest cached prefix as completions do ->
// budgeted prompt phase and greedy decoding, drafting from the prompt (the
// rewrite mostly copies the region, so prompt-lookup drafts are long and
// mostly accepted) until the region ends -> minimal edits against the
// region (next_edit_diff.h). A rewrite equal to the region gives no edits.
// When the latest edit of the document removed a word that is still used
// outside the region, a second region around that use is decoded the same
// way, while the deadline allows. The request is the server's to cancel:
// every edit of the document makes it stale.
#pragma once

#include <string>

#include "inference/core/cancellation.h"
#include "server/completion/decode/kv_pool.h"
#include "server/completion/api/lm.h"
#include "server/completion/next_edit/next_edit_format.h"
#include "server/completion/api/next_edit_types.h"
#include "server/completion/api/settings.h"

namespace qf::server::completion {

class next_edit_engine {
 public:
  next_edit_engine(lm_backend& backend, kv_pool& pool, const completion_settings& settings);

  void set_model_name(std::string name) { model_name_ = std::move(name); }
  const std::string& model_name() const { return model_name_; }

  next_edit_result run(const next_edit_request& req, const cancel_token& cancel);

  // The tokens of a prompt: special pieces as their token when the
  // vocabulary has it (as text otherwise), plain text without parsing
  // special tokens; BOS first when the model wants one.
  std::vector<int32_t> tokenize(const next_edit_prompt& p) const;

  // The KV owner key of a document's next-edit prompts (kept apart from its
  // completion slots).
  static std::string slot_owner(const std::string& uri) { return uri + "#next-edit"; }

 private:
  struct decoded {
    std::string text;
    bool stopped = false;    // a stop token ended it
    bool cancelled = false;  // the request was cancelled
    bool out_of_time = false;
  };
  decoded decode(const std::string& owner, const std::vector<int32_t>& prompt, const next_edit_prompt& p,
                 int max_tokens, std::chrono::steady_clock::time_point deadline, const cancel_token& cancel,
                 next_edit_metrics& m);

  lm_backend& backend_;
  kv_pool& pool_;
  const completion_settings& s_;
  std::string model_name_;
};

}  // namespace qf::server::completion
