// The workspace index over LSP (see lsp_server.h): roots from initialize
// (workspaceFolders, else rootUri, else rootPath) and
// workspace/didChangeWorkspaceFolders; file events from
// workspace/didChangeWatchedFiles, which is registered after `initialized`
// when the client supports dynamic registration; one work-done progress
// ("indexing N/M files") for the first walk, ended exactly once.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "indexing/file_uri.h"
#include "server/binding/lsp_server.h"

namespace qf::server {

namespace json = boost::json;

namespace {

// Folder paths of a WorkspaceFolder[] (entries that are not file URIs are skipped).
std::vector<std::string> folder_paths(const json::value* folders) {
  std::vector<std::string> out;
  if (!folders || !folders->is_array()) return out;
  for (const json::value& f : folders->get_array()) {
    const json::value* u = f.is_object() ? f.get_object().if_contains("uri") : nullptr;
    if (!u || !u->is_string()) continue;
    std::string p = index::file_uri_to_path(std::string_view(u->get_string()));
    if (!p.empty()) out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

core_options lsp_server::with_workspace_progress(core_options opts, event_loop& loop, lsp_server* self) {
  opts.workspace.on_progress = [&loop, self](std::size_t done, std::size_t total, bool finished) {
    loop.post([self, done, total, finished] { self->on_workspace_progress(done, total, finished); });
  };
  return opts;
}

void lsp_server::register_workspace_handlers() {
  rpc_.on_notification("workspace/didChangeWorkspaceFolders", [this](const json::value& params) {
    const json::value* event = lsp::find_path(params, "event");
    if (!event) throw lsp::rpc_error(lsp::error_code::invalid_params, "params.event: expected an object");
    for (const auto& r : folder_paths(lsp::find_path(*event, "removed")))
      workspace_roots_.erase(std::remove(workspace_roots_.begin(), workspace_roots_.end(), r), workspace_roots_.end());
    for (auto& a : folder_paths(lsp::find_path(*event, "added")))
      if (std::find(workspace_roots_.begin(), workspace_roots_.end(), a) == workspace_roots_.end())
        workspace_roots_.push_back(std::move(a));
    spdlog::info("workspace folders changed: {} root(s)", workspace_roots_.size());
    core_.set_workspace_roots(workspace_roots_);
  });
  rpc_.on_notification("workspace/didChangeWatchedFiles", [this](const json::value& params) {
    const json::value* changes = lsp::find_path(params, "changes");
    if (!changes || !changes->is_array())
      throw lsp::rpc_error(lsp::error_code::invalid_params, "params.changes: expected an array");
    std::vector<index::file_change> out;
    for (const json::value& c : changes->get_array()) {
      const json::value* u = c.is_object() ? c.get_object().if_contains("uri") : nullptr;
      const json::value* t = c.is_object() ? c.get_object().if_contains("type") : nullptr;
      if (!u || !u->is_string() || !t || !t->is_int64()) continue;
      std::string path = index::file_uri_to_path(std::string_view(u->get_string()));
      if (path.empty()) continue;
      const std::int64_t type = t->get_int64();
      const auto kind = type == 1 ? index::file_change_kind::created
                        : type == 3 ? index::file_change_kind::deleted
                                    : index::file_change_kind::changed;
      out.push_back({std::move(path), kind});
    }
    core_.workspace_files_changed(std::move(out));
  });
}

void lsp_server::read_workspace_params(const lsp::initialize_params& p) {
  const json::value caps(p.capabilities);
  watch_dynamic_ = lsp::bool_at(caps, "workspace.didChangeWatchedFiles.dynamicRegistration", false);
  workspace_roots_.clear();
  if (p.workspaceFolders) workspace_roots_ = folder_paths(&*p.workspaceFolders);
  if (workspace_roots_.empty() && p.rootUri) {
    std::string root = index::file_uri_to_path(*p.rootUri);
    if (!root.empty()) workspace_roots_.push_back(std::move(root));
  }
  if (workspace_roots_.empty() && p.rootPath && !p.rootPath->empty() && p.rootPath->front() == '/')
    workspace_roots_.push_back(*p.rootPath);
}

void lsp_server::start_workspace() {
  if (workspace_roots_.empty()) return;
  core_.set_workspace_roots(workspace_roots_);
  if (!core_.workspace()) return;  // turned off by the workspace.index setting
  if (watch_dynamic_) {
    json::object watcher{{"globPattern",
                          "**/{*.py,*.pyi,*.js,*.jsx,*.mjs,*.cjs,*.ts,*.tsx,*.mts,*.cts,*.c,*.h,*.cc,*.cpp,*.cxx,*.hh,"
                          "*.hpp,*.hxx,*.cu,*.cuh,*.go,*.rs,*.java,.gitignore}"}};
    json::object reg{{"id", "quickfill/watched-files"},
                     {"method", "workspace/didChangeWatchedFiles"},
                     {"registerOptions", json::object{{"watchers", json::array{watcher}}}}};
    rpc_.call("client/registerCapability", json::object{{"registrations", json::array{reg}}},
              [](const json::value*, const json::value* error) {
                if (error) spdlog::warn("the client refused to watch files: {}", json::serialize(*error));
              });
  }
  workspace_token_ = create_progress("index-workspace");
}

void lsp_server::on_workspace_progress(std::size_t done, std::size_t total, bool finished) {
  if (workspace_progress_over_ || phase_ == phase::exited) return;
  if (!workspace_progress_begun_) {
    workspace_progress_begun_ = true;
    lsp::work_done_progress begin;
    begin.kind = "begin";
    begin.title = "quickfill: indexing the workspace";
    begin.percentage = 0;
    begin.message = "indexing 0/" + std::to_string(total) + " files";
    send_progress(workspace_token_, begin);
  }
  lsp::work_done_progress v;
  v.kind = finished ? "end" : "report";
  v.message = (finished ? "indexed " : "indexing ") + std::to_string(done) + "/" + std::to_string(total) + " files";
  if (!finished) v.percentage = static_cast<std::uint32_t>(total == 0 ? 100 : done * 100 / total);
  send_progress(workspace_token_, v);
  if (finished) workspace_progress_over_ = true;
}

}  // namespace qf::server
