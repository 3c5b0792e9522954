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
//   quickfill/explainCompletion  completion_params
//                     -> {format, prompt, tokens, parts: [{kind, origin, text, tokens}],
//                         gate?: {TRIGGER: {threshold, origin}},
//                         load?: {TRIGGER: explain_load_plan}}
//                     (also what `quickfill prompt --json` prints)
// quickfill/nextEdit, didShow and didAccept are in protocol_next_edit.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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
BOOST_DESCRIBE_STRUCT(report_result, (), (html))

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
BOOST_DESCRIBE_STRUCT(status_result, (),
                      (modelLoaded, modelLoading, modelPath, modelSource, model, positionEncoding, openDocuments,
                       staleDocuments, openDocumentBytes, queued, workerBusy, noModelReason, sources, routes, daemon))

struct explain_part {
  std::string kind;    // "special", "file", "prefix", "suffix", ... (docs/protocol.md)
  std::string origin;  // a URI, "URI:LINE", or ""
  std::string text;    // as the model sees it
  std::int64_t tokens = 0;
};
BOOST_DESCRIBE_STRUCT(explain_part, (), (kind, origin, text, tokens))

// The confidence gate of one trigger kind; written as gate[trigger].
struct explain_gate {
  std::string trigger;  // "automatic", "explicit"
  double threshold = 0;
  std::string origin;   // "setting", "calibrated PATH", "default"
};

// What a request of one trigger kind would be given now under load; written
// as load[trigger] (docs/protocol.md).
struct explain_load_plan {
  bool overBudget = false;   // the estimate breaks the budget
  bool degraded = false;     // ... and completion.degrade is on
  double estimateMs = 0;
  double leftMs = 0;
  double waitMs = 0;
  std::int64_t promptRows = 0;
  std::int64_t maxTokens = 0;
  std::int64_t candidates = 0;
  bool shortened = false;
  bool candidatesDropped = false;
  bool backgroundPaused = false;
  std::optional<std::string> reroutedTo;  // routes.underLoad's source that would answer
  std::string reason;
};
BOOST_DESCRIBE_STRUCT(explain_load_plan, (),
                      (overBudget, degraded, estimateMs, leftMs, waitMs, promptRows, maxTokens, candidates, shortened,
                       candidatesDropped, backgroundPaused, reroutedTo, reason))

struct explain_load {
  std::string trigger;  // "automatic", "explicit"
  explain_load_plan plan;
};

struct explain_result {
  std::string format;
  std::string prompt;
  std::int64_t tokens = 0;
  std::vector<explain_part> parts;
  std::vector<explain_gate> gate;  // empty: `gate` is absent
  std::vector<explain_load> load;  // empty: `load` is absent
};
QF_LSP_CONVERSIONS(explain_result);

}  // namespace qf::lsp
