// Placeholder until the completion pipeline lands: reports that no engine is built.
#include "server/completion/provider_factory.h"

namespace qf::server {
std::unique_ptr<completion_provider> make_completion_provider(const provider_options& opts,
                                                              std::string* error) {
  if (error) *error = "the inference engine is not built into this binary yet; cannot load " + opts.model_path;
  return nullptr;
}
}  // namespace qf::server
