// The LSP binding of the server core: lifecycle, documents, completion,
// cancellation, settings, progress and the custom quickfill/* requests.
// Like clangd's ClangdLSPServer over ClangdServer, it only converts: typed
// messages (lsp/protocol*.h) into server_core calls (core_requests.h) and
// their answers and failures back into replies (failures: lsp_errors.h);
// the request policy is the core's.
//
// Runs on the dispatcher thread (the event loop): handle_message() receives
// each frame body from the reader thread via the loop, and every reply leaves
// through the outbox. Positions are converted here between the negotiated
// encoding (UTF-16 unless the client offers UTF-8) and the UTF-8 byte columns
// of the core. Lifecycle rules: requests before `initialize` get -32002,
// requests after `shutdown` get -32600, `exit` ends the process with 0 after
// shutdown and 1 otherwise (also when the input ends).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "text/position.h"
#include "lsp/jsonrpc.h"
#include "lsp/protocol_quickfill.h"
#include "lsp/transport.h"
#include "server/binding/event_loop.h"
#include "server/core/server_core.h"

namespace qf::server {

class lsp_server {
 public:
  lsp_server(core_options opts, std::shared_ptr<lsp::outbox> out, event_loop& loop);
  ~lsp_server();

  void handle_message(std::string_view body);
  void handle_transport_problem(const lsp::read_result& r);
  void handle_end_of_input();
  // Called once with the process exit code when the session ends.
  void set_exit_handler(std::function<void(int)> fn) { on_exit_ = std::move(fn); }
  // The `daemon` member of quickfill/status (null without it: the model is
  // this process's own); called on the loop thread. Set before serving.
  void set_daemon_status(std::function<boost::json::value()> fn) { daemon_status_ = std::move(fn); }
  // Sends window/logMessage; callable from any thread.
  void log_to_client(lsp::message_type type, std::string message);

  // Extra methods (custom extensions, test hooks); call before serving.
  void add_notification(const std::string& method, std::function<void(const boost::json::value&)> fn) {
    rpc_.on_notification(method, std::move(fn));
  }

  server_core& core() { return core_; }
  text::position_encoding encoding() const { return encoding_; }

 private:
  enum class phase { uninitialized, running, shutting_down, exited };

  void register_handlers();
  void on_initialize(const lsp::initialize_params& p, const lsp::reply_once& reply);
  void on_initialized();
  void on_shutdown(const lsp::reply_once& reply);
  void on_exit();
  void on_did_open(const lsp::did_open_text_document_params& p);
  void on_did_change(const lsp::did_change_text_document_params& p);
  void on_did_close(const lsp::did_close_text_document_params& p);
  void on_did_save(const lsp::did_save_text_document_params& p);
  void on_did_change_configuration(const lsp::did_change_configuration_params& p);
  void on_cancel_request(const lsp::cancel_params& p);
  void on_set_trace(const lsp::set_trace_params& p);
  void on_stats(const std::optional<lsp::stats_params>& p, const lsp::reply_once& reply);
  void on_report(const lsp::reply_once& reply);  // {"html": the dashboard}
  void on_status(const lsp::reply_once& reply);

  // The workspace index (lsp_server_workspace.cpp): roots from initialize and
  // workspace/didChangeWorkspaceFolders, file events from
  // workspace/didChangeWatchedFiles (registered dynamically when the client
  // can), and one $/progress for the first walk.
  void register_workspace_handlers();
  void read_workspace_params(const lsp::initialize_params& p);
  void start_workspace();
  void on_workspace_progress(std::size_t done, std::size_t total, bool finished);
  static core_options with_workspace_progress(core_options opts, event_loop& loop, lsp_server* self);
  // Creates a work-done progress token (when the client supports them) and
  // queues what is sent on it until the client accepts it; "" when not supported.
  std::string create_progress(const std::string& name);

  // Completion (lsp_server_completion.cpp). place_of: the core's place for a
  // request's document and position, or nullopt once `reply` has the
  // failure (a document that is not open, stale or not tracked).
  std::optional<request_place> place_of(const std::string& uri, const lsp::position& pos,
                                        const lsp::reply_once& reply) const;
  // quickfill/explainCompletion (lsp_server_explain.cpp).
  void start_explain(const std::string& uri, const lsp::position& pos, const lsp::reply_once& reply);
  void start_completion(const std::string& uri, const lsp::position& pos, bool explicit_trigger,
                        bool inline_request, const lsp::reply_once& reply);
  boost::json::value build_reply(const index::document& doc, const completion_result& result,
                                 bool inline_request) const;
  lsp::position to_lsp(const index::document& doc, const text_pos& p) const;

  // Next-edit prediction and acceptance reports (lsp_server_next_edit.cpp):
  // quickfill/nextEdit, quickfill/didShow, quickfill/didAccept.
  void register_next_edit_handlers();

  // Document sync problems: a notification whose params do not decode, and
  // messages lost to framing or JSON errors (see lost_message()).
  void on_bad_document_notification(const std::string& method, const boost::json::value& params,
                                    const std::string& why);
  void lost_message(std::string_view text, const std::string& why);

  // Model loading with work-done progress: each load has its own token, which
  // gets exactly one end (when that load finishes, or at shutdown).
  void begin_model_load();
  void send_progress(const std::string& token, lsp::work_done_progress value);
  void end_all_progress(const std::string& message);
  void on_model_loaded(const std::string& token, const model_state& st);

  // initializing: applied even when the payload carries no quickfill settings
  // (the user config file alone).
  void apply_settings(const boost::json::value& payload, bool initializing);
  // Warning to the log and logMessage, and shown with showMessage the first time.
  void warn_once(const std::string& message);
  void show_message(lsp::message_type type, const std::string& message);
  void log_message(lsp::message_type type, const std::string& message);
  void finish(int code);

  const std::string user_config_path_;  // the user config file ("" = none)
  event_loop& loop_;
  std::shared_ptr<lsp::outbox> out_;
  lsp::dispatcher rpc_;
  server_core core_;
  phase phase_ = phase::uninitialized;
  bool initialized_notified_ = false;
  text::position_encoding encoding_ = text::position_encoding::utf16;
  bool client_progress_ = false;
  std::string trace_ = "off";
  bool no_model_notified_ = false;
  std::set<std::string> shown_settings_errors_;  // settings messages already shown with showMessage
  struct progress_state {
    bool created = false;  // the client accepted window/workDoneProgress/create
    bool ended = false;    // the end is sent or queued; nothing follows it
    std::vector<lsp::work_done_progress> pending;  // until created
  };
  std::map<std::string, progress_state> progress_;  // tokens not finished yet
  bool limit_notified_ = false;
  int progress_counter_ = 0;
  std::function<void(int)> on_exit_;
  std::function<boost::json::value()> daemon_status_;
  std::vector<std::string> workspace_roots_;  // absolute folder paths
  bool watch_dynamic_ = false;                // the client registers didChangeWatchedFiles on request
  std::string workspace_token_;               // progress of the first walk ("" when not reported)
  bool workspace_progress_begun_ = false;
  bool workspace_progress_over_ = false;
};

}  // namespace qf::server
