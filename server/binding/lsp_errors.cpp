// Request failures as LSP errors (see lsp_errors.h).
#include "server/binding/lsp_errors.h"

namespace qf::server {

lsp::error_code error_code_of(const request_failure& f) {
  switch (f.what) {
    case request_failure::kind::cancelled:
      return f.reason == cancel_reason::content_modified ? lsp::error_code::content_modified
                                                         : lsp::error_code::request_cancelled;
    case request_failure::kind::not_open: return lsp::error_code::invalid_params;
    case request_failure::kind::unavailable: return lsp::error_code::request_failed;
  }
  return lsp::error_code::request_failed;
}

void reply_failure(const lsp::reply_once& reply, const request_failure& f) {
  reply.error(error_code_of(f), f.message);
}

}  // namespace qf::server
