// LSP lifecycle, documents, settings, cancellation and progress (see
// lsp_server.h). Completion handlers live in lsp_server_completion.cpp.
#include "server/binding/lsp_server.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "server/report/report_html.h"
#include "server/core/user_config.h"

namespace qf::server {

namespace json = boost::json;
using lsp::error_code;
using lsp::rpc_error;

lsp_server::lsp_server(core_options opts, std::shared_ptr<lsp::outbox> out, event_loop& loop)
    : user_config_path_(opts.user_config_path.value_or(default_user_config_path())),
      loop_(loop),
      out_(out),
      rpc_(out),
      core_(with_workspace_progress(std::move(opts), loop, this),
            [&loop](std::function<void()> fn) { loop.post(std::move(fn)); }) {
  register_handlers();
  // Router notices (a spent quota, a source that could not be made): once each, as showMessage.
  core_.set_notice_handler([this](const std::string& m) {
    if (phase_ != phase::exited) show_message(lsp::message_type::warning, m);
  });
  core_.start();
}

lsp_server::~lsp_server() { core_.stop(); }

void lsp_server::register_handlers() {
  rpc_.on_request<lsp::initialize_params>(
      "initialize", [this](const lsp::initialize_params& p, const lsp::reply_once& r) { on_initialize(p, r); });
  rpc_.on_request("shutdown", [this](const json::value&, const lsp::reply_once& r) { on_shutdown(r); });
  rpc_.on_notification("initialized", [this](const json::value&) { on_initialized(); });
  // Document sync: params that do not decode still say which document went
  // out of sync (on_bad_document_notification).
  auto sync = [this]<class P>(const char* method, void (lsp_server::*fn)(const P&)) {
    rpc_.on_notification(method, [this, method, fn](const json::value& params) {
      P p;
      try {
        p = lsp::dispatcher::decode_params<P>(params);
      } catch (const rpc_error& e) {
        on_bad_document_notification(method, params, std::string(method) + " could not be read: " + e.what());
        throw;
      }
      (this->*fn)(p);
    });
  };
  sync("textDocument/didOpen", &lsp_server::on_did_open);
  sync("textDocument/didChange", &lsp_server::on_did_change);
  sync("textDocument/didClose", &lsp_server::on_did_close);
  rpc_.on_notification<lsp::did_save_text_document_params>(
      "textDocument/didSave", [this](const lsp::did_save_text_document_params& p) { on_did_save(p); });
  rpc_.on_notification<lsp::did_change_configuration_params>(
      "workspace/didChangeConfiguration",
      [this](const lsp::did_change_configuration_params& p) { on_did_change_configuration(p); });
  rpc_.on_notification<lsp::cancel_params>("$/cancelRequest",
                                           [this](const lsp::cancel_params& p) { on_cancel_request(p); });
  rpc_.on_notification<lsp::set_trace_params>("$/setTrace", [this](const lsp::set_trace_params& p) { on_set_trace(p); });
  rpc_.on_request<lsp::completion_params>(
      "textDocument/completion", [this](const lsp::completion_params& p, const lsp::reply_once& r) {
        // No context means the client cannot tell us; treat it as invoked.
        const bool explicit_trigger = !p.context || p.context->triggerKind == 1;
        start_completion(p.textDocument.uri, p.position, explicit_trigger, false, r);
      });
  rpc_.on_request<lsp::inline_completion_params>(
      "textDocument/inlineCompletion", [this](const lsp::inline_completion_params& p, const lsp::reply_once& r) {
        const bool explicit_trigger = p.context && p.context->triggerKind == 1;
        start_completion(p.textDocument.uri, p.position, explicit_trigger, true, r);
      });
  rpc_.on_request<lsp::completion_params>(
      "quickfill/explainCompletion",
      [this](const lsp::completion_params& p, const lsp::reply_once& r) { start_explain(p.textDocument.uri, p.position, r); });
  // Absent or null params take the defaults.
  rpc_.on_request<std::optional<lsp::stats_params>>(
      "quickfill/stats",
      [this](const std::optional<lsp::stats_params>& p, const lsp::reply_once& r) { on_stats(p, r); });
  // quickfill/report and quickfill/status read no params (whatever is sent).
  rpc_.on_request("quickfill/report", [this](const json::value&, const lsp::reply_once& r) { on_report(r); });
  rpc_.on_request("quickfill/status", [this](const json::value&, const lsp::reply_once& r) { on_status(r); });
  register_workspace_handlers();
  register_next_edit_handlers();
}

void lsp_server::handle_message(std::string_view body) {
  if (phase_ == phase::exited) return;
  lsp::incoming m = lsp::classify(body);
  if (m.replaced_surrogates > 0)
    spdlog::warn("{} lone UTF-16 surrogate escape(s) in a message read as U+FFFD", m.replaced_surrogates);
  switch (m.what) {
    case lsp::incoming::kind::invalid:
      spdlog::warn("invalid message: {}", m.invalid_reason);
      out_->send(lsp::make_error_response(m.id, m.invalid_code, m.invalid_reason));
      if (phase_ == phase::running) lost_message(body, m.invalid_reason);
      return;
    case lsp::incoming::kind::response:
      rpc_.dispatch_response(m);
      return;
    case lsp::incoming::kind::notification:
      if (m.method == "exit") {
        on_exit();
        return;
      }
      if (phase_ != phase::running) {
        spdlog::info("ignoring notification {} ({})", m.method,
                     phase_ == phase::uninitialized ? "before initialize" : "after shutdown");
        return;
      }
      if (trace_ != "off" && m.method != "$/cancelRequest")
        rpc_.notify("$/logTrace", json::object{{"message", "received notification " + m.method}});
      rpc_.dispatch_notification(m.method, m.params);
      return;
    case lsp::incoming::kind::request:
      if (phase_ == phase::uninitialized && m.method != "initialize") {
        out_->send(lsp::make_error_response(m.id, error_code::server_not_initialized,
                                            "the server is not initialized; send initialize first"));
        return;
      }
      if (phase_ == phase::shutting_down) {
        out_->send(lsp::make_error_response(m.id, error_code::invalid_request,
                                            "the server is shutting down; only exit is accepted"));
        return;
      }
      if (trace_ != "off")
        rpc_.notify("$/logTrace",
                    json::object{{"message", "received request " + m.method + " (" + json::serialize(m.id) + ")"}});
      rpc_.dispatch_request(m.id, m.method, m.params);
      return;
  }
}

void lsp_server::handle_transport_problem(const lsp::read_result& r) {
  if (phase_ == phase::exited) return;
  using kind = lsp::read_result::kind;
  if (r.what == kind::skipped) {
    // Already answered when the problem was found; only the lost content matters.
    spdlog::warn("transport: {}", r.error);
  } else {
    spdlog::error("transport: {}", r.error);
    const error_code code = r.what == kind::too_large ? error_code::invalid_request : error_code::parse_error;
    out_->send(lsp::make_error_response(nullptr, code, r.error));
  }
  if (phase_ == phase::running && !r.dropped.empty()) lost_message(r.dropped, r.error);
}

void lsp_server::on_bad_document_notification(const std::string& method, const json::value& params,
                                              const std::string& why) {
  const json::value* u = lsp::find_path(params, "textDocument.uri");
  std::string uri = u && u->is_string() ? std::string(u->get_string()) : std::string();
  spdlog::error("{}", why);
  if (method == "textDocument/didClose") {
    if (!uri.empty()) core_.close(uri);
    return;
  }
  if (method == "textDocument/didOpen") {
    if (uri.empty()) return;
    core_.close(uri);
    core_.documents().mark_not_tracked(uri, why);
    log_message(lsp::message_type::error, "quickfill: " + why + "; " + uri + " is not tracked");
    return;
  }
  const std::size_t n = core_.document_lost(uri, why);
  if (!uri.empty() && n == 0) {
    log_message(lsp::message_type::error, "quickfill: " + why + " (" + uri + " is not open)");
    return;
  }
  log_message(lsp::message_type::error, "quickfill: " + why + "; " +
                                            (uri.empty() ? std::to_string(n) + " open document(s) are"
                                                         : uri + " is") +
                                            " out of sync until reopened or sent in full");
}

void lsp_server::lost_message(std::string_view text, const std::string& why) {
  const lsp::message_peek pk = lsp::peek_message(text);
  const bool sync_method = pk.method == "textDocument/didOpen" || pk.method == "textDocument/didChange" ||
                           pk.method == "textDocument/didClose";
  // Only a lost document notification (or what looks like the start of one)
  // can put a document out of sync.
  if (pk.method.empty() ? !pk.has_content_changes : !sync_method) return;
  const std::string method = pk.method.empty() ? "textDocument/didChange" : pk.method;
  on_bad_document_notification(method, json::object{{"textDocument", json::object{{"uri", pk.uri}}}},
                               "a " + method + " message was lost (" + why + ")");
}

void lsp_server::handle_end_of_input() {
  if (phase_ == phase::exited) return;
  spdlog::info("input closed {}", phase_ == phase::shutting_down ? "after shutdown" : "without shutdown");
  finish(phase_ == phase::shutting_down ? 0 : 1);
}

void lsp_server::on_exit() { finish(phase_ == phase::shutting_down ? 0 : 1); }

void lsp_server::finish(int code) {
  if (phase_ == phase::exited) return;
  phase_ = phase::exited;
  core_.cancel_all(cancel_reason::shutdown);
  out_->close();
  if (on_exit_) on_exit_(code);
}

void lsp_server::on_initialize(const lsp::initialize_params& p, const lsp::reply_once& reply) {
  if (phase_ != phase::uninitialized) throw rpc_error(error_code::invalid_request, "initialize was already received");
  const json::value caps(p.capabilities);
  encoding_ = text::position_encoding::utf16;
  for (const auto& e : lsp::strings_at(caps, "general.positionEncodings"))
    if (e == "utf-8") encoding_ = text::position_encoding::utf8;
  client_progress_ = lsp::bool_at(caps, "window.workDoneProgress", false);
  if (p.trace) trace_ = *p.trace;
  // Always: the user config file applies without any initializationOptions too.
  apply_settings(p.initializationOptions ? *p.initializationOptions : json::value(nullptr), true);
  read_workspace_params(p);

  json::object capabilities{
      {"positionEncoding", text::encoding_name(encoding_)},
      {"textDocumentSync", json::object{{"openClose", true}, {"change", 2}, {"save", json::object{{"includeText", false}}}}},
      {"completionProvider",
       json::object{{"triggerCharacters", json::array{".", ":", "(", "[", "{", ",", " ", "=", ">"}},
                    {"resolveProvider", false}}},
      {"inlineCompletionProvider", json::object{}},
      {"workspace", json::object{{"workspaceFolders", json::object{{"supported", true}, {"changeNotifications", true}}}}},
  };
  phase_ = phase::running;
  spdlog::info("initialize: position encoding {}, work-done progress {}", text::encoding_name(encoding_),
               client_progress_ ? "yes" : "no");
  reply.result(json::object{{"capabilities", std::move(capabilities)},
                            {"serverInfo", json::object{{"name", "quickfill"}, {"version", QUICKFILL_VERSION}}}});
}

void lsp_server::on_initialized() {
  if (initialized_notified_) return;
  initialized_notified_ = true;
  begin_model_load();
  start_workspace();
}

void lsp_server::on_shutdown(const lsp::reply_once& reply) {
  phase_ = phase::shutting_down;
  core_.cancel_all(cancel_reason::shutdown);
  end_all_progress("the server is shutting down");
  reply.result(nullptr);
}

void lsp_server::on_did_open(const lsp::did_open_text_document_params& p) {
  const auto& d = p.textDocument;
  std::string error;
  if (core_.open(d.uri, d.languageId, d.version, d.text, &error)) {
    spdlog::debug("didOpen {} v{} ({} bytes)", d.uri, d.version, d.text.size());
    return;
  }
  const std::string msg = "quickfill: " + d.uri + " is not tracked: " + error +
                          ". Completion requests on it fail until it is closed and opened again.";
  spdlog::warn("{}", msg);
  log_message(lsp::message_type::error, msg);
  if (!limit_notified_) {
    limit_notified_ = true;  // once a session; every refusal is also in the log
    show_message(lsp::message_type::warning, msg);
  }
}

void lsp_server::on_did_change(const lsp::did_change_text_document_params& p) {
  std::vector<index::text_change> changes;
  changes.reserve(p.contentChanges.size());
  for (const auto& c : p.contentChanges) {
    index::text_change tc;
    tc.text = c.text;
    if (c.range)
      tc.range = index::text_range{c.range->start.line, c.range->start.character, c.range->end.line,
                                   c.range->end.character};
    changes.push_back(std::move(tc));
  }
  std::string error;
  if (!core_.change(p.textDocument.uri, p.textDocument.version, changes, encoding_, &error)) {
    const index::doc_state state = core_.documents().lookup(p.textDocument.uri).state;
    const char* consequence = state == index::doc_state::stale
                                  ? " (the document is out of sync until it is reopened or its full text is sent)"
                              : state == index::doc_state::not_tracked ? " (the document is not tracked)"
                                                                       : "";
    const std::string msg = "didChange " + p.textDocument.uri + " v" + std::to_string(p.textDocument.version) +
                            " rejected: " + error + consequence;
    spdlog::error("{}", msg);
    log_message(lsp::message_type::error, msg);
  }
}

void lsp_server::on_did_close(const lsp::did_close_text_document_params& p) { core_.close(p.textDocument.uri); }

void lsp_server::on_did_save(const lsp::did_save_text_document_params& p) {
  spdlog::debug("didSave {}", p.textDocument.uri);
}

void lsp_server::on_did_change_configuration(const lsp::did_change_configuration_params& p) {
  apply_settings(p.settings, false);
}

// Every payload replaces the whole settings, layered over the user config
// file, which is read again each time (absent keys take the file's value or
// their defaults; see server/core/settings.h and docs/security.md). Each problem
// goes to the log and to the client as window/logMessage; an error, a refused
// user config file and privileged keys sent by the editor are also shown with
// window/showMessage, each distinct message once.
void lsp_server::apply_settings(const json::value& payload, bool initializing) {
  const bool from_editor = has_settings(payload);
  if (!from_editor && !initializing) return;
  const user_config user = read_user_config(user_config_path_);
  if (!user.refused.empty())
    warn_once("quickfill: the user config file " + user_config_path_ + " is not used: " + user.refused +
              "; see docs/security.md");
  std::vector<std::string> refused;
  const parsed_settings parsed =
      parse_layered_settings(user.payload, from_editor ? payload : json::value(nullptr), &refused);
  for (const settings_problem& p : parsed.problems) {
    const bool error = p.level == settings_problem::severity::error;
    if (error)
      spdlog::error("settings: {}", p.message);
    else
      spdlog::warn("settings: {}", p.message);
    log_message(error ? lsp::message_type::error : lsp::message_type::warning, "quickfill settings: " + p.message);
    if (error && shown_settings_errors_.insert(p.message).second)
      show_message(lsp::message_type::error, "quickfill settings: " + p.message);
  }
  if (!refused.empty()) {
    std::string keys;
    for (const std::string& k : refused) keys += (keys.empty() ? "" : ", ") + k;
    const std::string where = user_config_path_.empty() ? "$XDG_CONFIG_HOME/quickfill/config.json" : user_config_path_;
    warn_once("quickfill: ignored settings that only the user config file may set: " + keys + " (set them in " +
              where + "; see docs/security.md)");
  }
  if (!parsed.usable) return;
  const bool model_changed = core_.apply_settings(parsed.values);
  if (model_changed && initialized_notified_) {
    no_model_notified_ = false;  // a new model choice deserves its own answer
    begin_model_load();
  }
}

void lsp_server::warn_once(const std::string& message) {
  spdlog::warn("{}", message);
  log_message(lsp::message_type::warning, message);
  if (shown_settings_errors_.insert(message).second) show_message(lsp::message_type::warning, message);
}

void lsp_server::on_cancel_request(const lsp::cancel_params& p) {
  if (!core_.cancel(lsp::id_to_string(p.id)))
    spdlog::debug("$/cancelRequest for {}: not queued or running", json::serialize(p.id));
}

void lsp_server::on_set_trace(const lsp::set_trace_params& p) {
  if (p.value != "off" && p.value != "messages" && p.value != "verbose")
    throw rpc_error(error_code::invalid_params, "params.value: expected \"off\", \"messages\" or \"verbose\"");
  trace_ = p.value;
}

void lsp_server::on_stats(const std::optional<lsp::stats_params>& p, const lsp::reply_once& reply) {
  const std::int64_t recent = p && p->recent ? *p->recent : 50;
  reply.result(core_.stats_json(static_cast<std::size_t>(recent)));
}

void lsp_server::on_report(const lsp::reply_once& reply) {
  std::string error;
  lsp::report_result r;
  r.html = report::render_report_html(core_.stats_json(0), &error);
  if (r.html.empty()) throw rpc_error(error_code::internal_error, "quickfill/report: " + error);
  reply.result_of(r);
}

void lsp_server::on_status(const lsp::reply_once& reply) {
  const core_status st = core_.status();
  lsp::status_result r;
  r.modelLoaded = st.model.loaded;
  r.modelLoading = st.model.loading;
  r.modelPath = st.model.path;
  r.modelSource = st.model.source;
  r.model = st.model.description;
  r.positionEncoding = text::encoding_name(encoding_);
  r.openDocuments = st.open_documents;
  r.staleDocuments = st.stale_documents;
  r.openDocumentBytes = st.open_document_bytes;
  r.queued = st.queued;
  r.workerBusy = st.worker_busy;
  if (!st.model.loaded && !st.model.error.empty()) r.noModelReason = st.model.error;
  r.sources = st.sources;
  r.routes = st.routes;
  r.daemon = daemon_status_ ? daemon_status_() : json::value(nullptr);
  reply.result_of(r);
}

std::string lsp_server::create_progress(const std::string& name) {
  if (!client_progress_) return {};
  std::string token = "quickfill/" + name + "/" + std::to_string(++progress_counter_);
  progress_[token] = progress_state{};
  rpc_.call("window/workDoneProgress/create", json::value_from(lsp::work_done_progress_create_params{token}),
            [this, token](const json::value* result, const json::value* error) {
              auto it = progress_.find(token);
              if (it == progress_.end()) return;
              if (error) {  // the client refused the token: nothing is sent on it
                progress_.erase(it);
                return;
              }
              it->second.created = true;
              for (auto& v : it->second.pending)
                rpc_.notify("$/progress", json::value_from(lsp::progress_params{token, v}));
              it->second.pending.clear();
              if (it->second.ended) progress_.erase(it);
            });
  return token;
}

void lsp_server::begin_model_load() {
  const std::string token = create_progress("load-model");
  lsp::work_done_progress begin;
  begin.kind = "begin";
  begin.title = "quickfill: loading model";
  begin.percentage = 0;
  send_progress(token, begin);
  core_.load_model(
      [this, token](int pct, const std::string& msg) {
        lsp::work_done_progress r;
        r.kind = "report";
        r.percentage = static_cast<std::uint32_t>(std::clamp(pct, 0, 100));
        r.message = msg;
        send_progress(token, r);
      },
      [this, token](const model_state& st) { on_model_loaded(token, st); });
}

void lsp_server::send_progress(const std::string& token, lsp::work_done_progress value) {
  auto it = progress_.find(token);
  if (it == progress_.end() || it->second.ended) return;  // no token, refused, or already ended
  if (value.kind == "end") it->second.ended = true;
  if (!it->second.created) {
    it->second.pending.push_back(std::move(value));
    return;
  }
  rpc_.notify("$/progress", json::value_from(lsp::progress_params{token, std::move(value)}));
  if (it->second.ended) progress_.erase(it);
}

void lsp_server::end_all_progress(const std::string& message) {
  std::vector<std::string> open;
  for (const auto& [token, st] : progress_)
    if (!st.ended) open.push_back(token);
  for (const auto& token : open) {
    lsp::work_done_progress end;
    end.kind = "end";
    end.message = message;
    send_progress(token, end);
  }
}

void lsp_server::on_model_loaded(const std::string& token, const model_state& st) {
  lsp::work_done_progress end;
  end.kind = "end";
  end.message = st.loaded ? "loaded " + st.description : "no model loaded";
  send_progress(token, end);
  if (st.loaded) {
    log_message(lsp::message_type::info, "quickfill: model loaded (" + st.description + ") from " + st.path);
    no_model_notified_ = false;
    return;
  }
  log_message(lsp::message_type::warning, "quickfill: no model loaded: " + st.error);
  if (!no_model_notified_) {
    no_model_notified_ = true;
    std::string why = st.error;
    if (!st.path.empty()) why = "Could not load " + st.path + " (from " + st.source + "): " + st.error;
    show_message(lsp::message_type::warning, "quickfill: no model is loaded, so completions will be empty. " + why);
  }
}

void lsp_server::show_message(lsp::message_type type, const std::string& message) {
  rpc_.notify("window/showMessage", json::value_from(lsp::show_message_params{static_cast<int>(type), message}));
}

void lsp_server::log_message(lsp::message_type type, const std::string& message) {
  rpc_.notify("window/logMessage", json::value_from(lsp::log_message_params{static_cast<int>(type), message}));
}

void lsp_server::log_to_client(lsp::message_type type, std::string message) {
  loop_.post([this, type, message = std::move(message)] {
    if (phase_ != phase::exited) log_message(type, message);
  });
}

}  // namespace qf::server
