// The custom requests about the server itself (docs/protocol.md):
//   quickfill/stats   {recent?}  -> the statistics document (raw JSON: the
//                                   same document the HTTP endpoint serves at
//                                   /quickfill/stats, described in
//                                   docs/protocol.md; `quickfill report` reads it)
//   quickfill/report  (no params) -> {html}
//   quickfill/status  (no params) -> {modelLoaded, modelLoading, modelPath,
//                                     modelSource, model, positionEncoding,
//                                     openDocuments, staleDocuments,
//                                     openDocumentBytes, queued, workerBusy,
//                                     noModelReason?, sources, routes, daemon}
// quickfill/nextEdit, didShow and didAccept are in protocol_next_edit.h;
// quickfill/explainCompletion takes completion_params.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lsp/protocol.h"

namespace qf::lsp {

// Params may be absent or null (decode std::optional<stats_params>).
struct stats_params {
  // How many recent requests to list (default 50); anything but a
  // non-negative integer is an error naming params.recent.
  std::optional<std::int64_t> recent;
};
QF_LSP_CONVERSIONS(stats_params);

struct report_result {
  std::string html;  // the dashboard: one self-contained page
};
QF_LSP_CONVERSIONS(report_result);

struct status_result {
  bool modelLoaded = false;
  bool modelLoading = false;
  std::string modelPath;
  std::string modelSource;  // --model / setting / default
  std::string model;        // the provider's description when loaded
  std::string positionEncoding;
  std::uint64_t openDocuments = 0;
  std::uint64_t staleDocuments = 0;
  std::uint64_t openDocumentBytes = 0;
  std::uint64_t queued = 0;
  bool workerBusy = false;
  std::optional<std::string> noModelReason;  // no model loaded, and why
  json::value sources;  // each completion source's health (docs/protocol.md)
  json::value routes;
  json::value daemon;   // the daemon this session runs in; null when the model is this process's own
};
QF_LSP_CONVERSIONS(status_result);

}  // namespace qf::lsp
