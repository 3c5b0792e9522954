// The LSP-free server core (see server_core.h).
#include "server/core/server_core.h"

#include <cstdlib>

#include <spdlog/spdlog.h>

#include "text/utf8.h"
#include "server/completion/prompt/prompt_layout.h"
#include "server/core/model_locator.h"
#include "server/core/model_store.h"
#include "server/routing/make_router.h"

namespace qf::server {

namespace {

std::string home_folder() {
  const char* h = std::getenv("HOME");
  return h ? std::string(h) : std::string();
}

}  // namespace

server_core::server_core(core_options opts, post_fn post)
    : opts_(std::move(opts)),
      post_(std::move(post)),
      docs_(opts_.documents),
      worker_(&stats_, opts_.background),
      privacy_(std::make_shared<privacy_filter>(privacy_settings{}, std::vector<std::string>{}, home_folder())) {}

server_core::~server_core() { stop(); }

void server_core::start() { worker_.start(); }

void server_core::stop() {
  worker_.stop();
  if (workspace_) workspace_->stop();
}

server_settings server_core::settings() const {
  std::lock_guard<std::mutex> lock(mu_);
  return settings_.server;
}

completion::engine_options server_core::engine_options() const {
  std::lock_guard<std::mutex> lock(mu_);
  completion::engine_options e = settings_.engine;
  if (!opts_.cli_device.empty()) e.device = opts_.cli_device;
  e.threads = opts_.n_threads;
  e.step_graphs = opts_.step_graphs;
  return e;
}

model_state server_core::model() const {
  std::lock_guard<std::mutex> lock(mu_);
  return model_;
}

bool server_core::apply_settings(const quickfill_settings& next) {
  bool model_changed = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    model_changed = opts_.cli_model_path.empty() && next.server.model != settings_.server.model;
    quickfill_settings applied = next;
    if (applied.routing.keep_previous) applied.routing = settings_.routing;  // unreadable: the routing in force stays
    model_changed = model_changed || !applied.routing.same_routing(settings_.routing);  // the router is rebuilt
    settings_ = std::move(applied);
  }
  worker_.post_task([completion = next.completion](scheduler::provider_slot& p) {
    if (p) p->configure(completion);
  });
  refresh_privacy();
  if (workspace_requested_ && next.server.workspace_index != (workspace_ != nullptr))
    set_workspace_roots(workspace_roots_);  // the workspace.index setting turned the index on or off
  return model_changed;
}

std::shared_ptr<const privacy_filter> server_core::privacy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return privacy_;
}

bool server_core::is_private(const index::document& d) const { return privacy()->is_private(d.uri, d.language_id); }

std::string server_core::why_private(const std::string& uri) const {
  index::document_store::snapshot d = docs_.get(uri);
  return privacy()->why_private(uri, d ? std::string_view(d->language_id) : std::string_view());
}

// A new filter (the settings or the workspace folders changed): documents it
// now keeps out leave the context sources, and the provider drops every
// document's state, whose cached prompts may hold their text; documents it
// lets in again join them.
void server_core::refresh_privacy() {
  privacy_settings ps;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ps = settings_.privacy;
  }
  auto next = std::make_shared<const privacy_filter>(ps, workspace_roots_, home_folder());
  std::shared_ptr<const privacy_filter> before;
  {
    std::lock_guard<std::mutex> lock(mu_);
    before = std::exchange(privacy_, next);
  }
  if (workspace_)
    workspace_->set_exclude([next](const std::string& path, std::string_view language) {
      return !next->why_private_path(path, language).empty();
    });
  bool newly_private = false;
  std::vector<std::string> open_uris;
  for (const auto& d : docs_.recent("", SIZE_MAX)) {
    open_uris.push_back(d->uri);
    const bool was = before->is_private(d->uri, d->language_id), now = next->is_private(d->uri, d->language_id);
    if (now && !was) {
      newly_private = true;
      edits_->forget(d->uri);
      recent_->forget(d->uri);
      if (workspace_) workspace_->document_closed(d->uri);
      spdlog::info("privacy: {} is now kept out of completions and prompts: {}", d->uri,
                   next->why_private(d->uri, d->language_id));
    } else if (was && !now) {
      recent_->touch(d->uri, d->text, 0);
      if (workspace_) workspace_->document_updated(d);
    }
  }
  if (newly_private)
    worker_.post_task([open_uris](scheduler::provider_slot& p) {
      if (p)
        for (const std::string& u : open_uris) p->document_closed(u);
    });
}

void server_core::load_model(std::function<void(int, const std::string&)> progress,
                             std::function<void(const model_state&)> done) {
  const server_settings s = settings();
  const completion::engine_options engine = engine_options();
  completion::completion_settings completion;
  routing::routing_settings routes;
  std::function<void(const std::string&)> notice;
  {
    std::lock_guard<std::mutex> lock(mu_);
    completion = settings_.completion;
    routes = settings_.routing;
    notice = notice_handler_;
  }
  model_choice choice = choose_model(opts_.cli_model_path, s.model);
  {
    std::lock_guard<std::mutex> lock(mu_);
    model_.loading = true;
    model_.path = text::repair_utf8(choice.path);
    model_.source = choice.source;
  }
  auto post = post_;
  auto factory = opts_.factory;
  auto board = board_;
  worker_.post_task([this, choice, completion, engine, post, factory, progress, done, routes, notice,
                     board](scheduler::provider_slot& slot) {
    slot.reset();  // free the old model before loading the next one
    model_state st;
    st.path = choice.path;
    st.source = choice.source;
    if (!choice.error.empty()) {
      st.error = choice.error;
    } else if (choice.path.empty() && routes.sources.empty()) {
      st.error = "no model file was given (--model or the quickfill.model setting) and the default model " +
                 std::string(default_model_name) + " was not found";
      if (!choice.searched.empty()) {
        st.error += " (looked in";
        for (const auto& p : choice.searched) st.error += " " + p;
        st.error += ")";
      }
    } else {
      provider_options po;
      po.model_path = choice.path;
      po.resolve_model = [](const std::string& m) {
        std::string why;
        return resolve_model_setting(m, &why);  // "" refuses: never relative to the working directory
      };
      po.completion = completion;
      po.engine = engine;
      po.on_progress = [post, progress](int pct, const std::string& msg) {
        if (progress) post([progress, pct, msg] { progress(pct, msg); });
      };
      if (notice) po.on_notice = [post, notice](const std::string& m) { post([notice, m] { notice(m); }); };
      std::string error;
      std::unique_ptr<completion_provider> p;
      try {
        // The router over the sources of the settings (one implicit local
        // source without them: exactly the factory's provider, metered).
        routing::router_inputs in;
        in.context.base = po;
        in.context.factory = factory;
        in.context.resolve_model = [](const std::string& m) { return choose_model("", m).path; };
        in.settings = routes;
        in.board = board;
        if (notice) in.notify = [post, notice](const std::string& m) { post([notice, m] { notice(m); }); };
        p = routing::make_router(in, &error);
      } catch (const std::exception& e) {
        error = e.what();
      }
      if (p) {
        st.loaded = true;
        st.description = p->describe();
        slot = std::move(p);
      } else {
        st.error = error.empty() ? "the model could not be loaded" : error;
      }
    }
    // Paths, GGUF metadata and loader errors reach the client: valid UTF-8 only.
    for (std::string* t : {&st.path, &st.source, &st.description, &st.error}) text::repair_utf8_in_place(*t);
    {
      std::lock_guard<std::mutex> lock(mu_);
      model_ = st;
    }
    if (st.loaded)
      spdlog::info("model loaded from {} ({}): {}", st.path, st.source, st.description);
    else
      spdlog::warn("no model loaded: {}", st.error);
    if (done) post([done, st] { done(st); });
  });
}

void server_core::set_notice_handler(std::function<void(const std::string&)> handler) {
  std::lock_guard<std::mutex> lock(mu_);
  notice_handler_ = std::move(handler);
}

bool server_core::open(const std::string& uri, const std::string& language_id, std::int64_t version,
                       std::string text, std::string* error) {
  worker_.cancel_document(uri, cancel_reason::content_modified);
  const index::document_store::snapshot prior = docs_.get(uri);
  const bool was_context = prior && !is_private(*prior);
  if (docs_.open(uri, language_id, version, std::move(text), error)) {
    index::document_store::snapshot doc = docs_.get(uri);
    syntax_.opened(doc);
    if (is_private(*doc)) {
      // Reopened with another language: nothing of it stays as context, nor in a cached prompt.
      edits_->forget(uri);
      recent_->forget(uri);
      if (workspace_) workspace_->document_closed(uri);
      if (was_context) {
        std::vector<std::string> open_uris;
        for (const auto& d : docs_.recent("", SIZE_MAX)) open_uris.push_back(d->uri);
        worker_.post_task([open_uris](scheduler::provider_slot& p) {
          if (p)
            for (const std::string& u : open_uris) p->document_closed(u);
        });
      }
      spdlog::info("privacy: {} is kept out of completions and prompts: {}", uri, why_private(uri));
      return true;
    }
    recent_->touch(uri, doc->text, 0);
    if (workspace_) workspace_->document_updated(doc);
    return true;
  }
  // Refused: whatever the provider kept for an earlier version goes.
  worker_.post_task([uri](scheduler::provider_slot& p) {
    if (p) p->document_closed(uri);
  });
  return false;
}

std::size_t server_core::document_lost(const std::string& uri, const std::string& reason) {
  if (!uri.empty()) {
    worker_.cancel_document(uri, cancel_reason::content_modified);
    return docs_.mark_stale(uri, reason) ? 1 : 0;
  }
  worker_.cancel_all(cancel_reason::content_modified);
  return docs_.mark_all_stale(reason);
}

bool server_core::change(const std::string& uri, std::int64_t version,
                         const std::vector<index::text_change>& changes, text::position_encoding enc,
                         std::string* error) {
  index::document_store::snapshot before = docs_.get(uri);
  if (!docs_.change(uri, version, changes, enc, error)) {
    // Whatever happened to the edit, the client's text moved on.
    worker_.cancel_document(uri, cancel_reason::content_modified);
    return false;
  }
  index::document_store::snapshot after = docs_.get(uri);
  // Cancels the document's work, except a generation the edit typed along with.
  if (after)
    worker_.document_edited(uri, after->text);
  else
    worker_.cancel_document(uri, cancel_reason::content_modified);
  const bool kept_out = after && is_private(*after);
  if (before && after && !kept_out) {
    edits_->record(uri, before->text, after->text, after->version);
    const auto& last = changes.empty() ? std::optional<index::text_range>() : changes.back().range;
    recent_->touch(uri, after->text, last ? last->start_line : 0);
  }
  if (workspace_ && after && !kept_out) workspace_->document_updated(after);  // debounced there
  syntax_.changed(std::move(before), std::move(after), changes, enc);  // queues only; parsed off this thread
  return true;
}

void server_core::close(const std::string& uri) {
  worker_.cancel_document(uri, cancel_reason::content_modified);
  docs_.close(uri);
  syntax_.closed(uri);
  if (workspace_) workspace_->document_closed(uri);
  edits_->forget(uri);
  recent_->forget(uri);
  worker_.post_task([uri](scheduler::provider_slot& p) {
    if (p) p->document_closed(uri);
  });
}

void server_core::add_context(completion_request& req) const {
  const std::shared_ptr<const privacy_filter> privacy = this->privacy();
  if (privacy->is_private(req.uri, req.language_id)) return;  // answered without the provider anyway
  const std::size_t limit = static_cast<std::size_t>(settings().context_documents);
  for (const auto& d : docs_.recent(req.uri, SIZE_MAX)) {
    if (req.context_docs.size() >= limit) break;
    if (!privacy->is_private(d->uri, d->language_id)) req.context_docs.push_back({d->uri, index::shared_text(d)});
  }
  req.workspace_roots = workspace_roots_;
  req.definitions = workspace_;
  req.syntax = syntax_.latest(req.uri);
  req.edits = edits_;
  req.recent = recent_;
  recent_->touch(req.uri, req.text.view(), req.cursor.line);
}

void server_core::complete(const std::string& key, completion_request req,
                           std::function<void(completion_outcome)> done, std::function<void(cancel_reason)> on_cancel) {
  if (privacy()->is_private(req.uri, req.language_id)) {
    // An empty answer, without the provider: the text goes to no model and no source.
    post_([done = std::move(done)] { done(completion_outcome{}); });
    return;
  }
  cancel_next_edits();
  scheduler::job j;
  j.key = key;
  j.uri = req.uri;
  j.group = req.uri + (req.inline_request ? "#inline" : "#completion");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (settings_.completion.inflight_reuse && settings_.completion.type_through) {
      req.progress = std::make_shared<completion::generation_progress>();
      j.text = req.text;
      j.cursor = completion::offset_of(req.text, req.cursor.line, req.cursor.byte_col);
      j.progress = req.progress;
    }
  }
  auto post = post_;
  j.run = [req = std::move(req), done = std::move(done), post](completion_provider* provider,
                                                                 const cancel_token& cancel) {
    completion_outcome out;
    if (!provider) {
      out.no_model = true;
    } else {
      const auto started = clock::now();
      try {
        out.result = provider->complete(req, cancel);
      } catch (const std::exception& ex) {
        out.failed = true;
        out.error = ex.what();
      }
      if (out.result.metrics.queue_ms == 0)
        out.result.metrics.queue_ms = std::chrono::duration<double, std::milli>(started - req.received).count();
    }
    if (cancel.is_cancelled()) return;  // already answered by on_cancel
    post([done, out = std::move(out)]() mutable { done(std::move(out)); });
  };
  j.on_cancel = std::move(on_cancel);
  docs_.touch(j.uri);
  worker_.submit(std::move(j));
}

void server_core::explain(const std::string& key, completion_request req,
                          std::function<void(std::optional<prompt_explanation>, bool no_model)> done,
                          std::function<void(cancel_reason)> on_cancel) {
  if (privacy()->is_private(req.uri, req.language_id)) {
    post_([done = std::move(done)] { done(std::nullopt, false); });  // no prompt is ever built for it
    return;
  }
  scheduler::job j;
  j.key = key;
  j.uri = req.uri;
  j.group = req.uri + "#explain";
  auto post = post_;
  j.run = [req = std::move(req), done = std::move(done), post](completion_provider* provider, const cancel_token& cancel) {
    std::optional<prompt_explanation> e;
    if (provider) e = provider->explain(req);
    if (cancel.is_cancelled()) return;  // already answered by on_cancel
    const bool no_model = provider == nullptr;
    post([done, e = std::move(e), no_model]() mutable { done(std::move(e), no_model); });
  };
  j.on_cancel = std::move(on_cancel);
  worker_.submit(std::move(j));
}

}  // namespace qf::server
