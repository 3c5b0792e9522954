// The server core's workspace index: started with the roots the client
// names, fed with open documents and file-change events, handed to every
// completion request as its definition_source (see server_core.h).
#include <spdlog/spdlog.h>

#include "server/core/server_core.h"

namespace qf::server {

void server_core::set_workspace_roots(std::vector<std::string> root_paths) {
  workspace_requested_ = true;
  workspace_roots_ = std::move(root_paths);
  refresh_privacy();  // paths relative to the folders match too
  if (!settings().workspace_index) {
    if (workspace_) {
      spdlog::info("workspace index: off (workspace.index setting)");
      workspace_->stop();
      workspace_.reset();
    }
    return;
  }
  if (!workspace_) {
    workspace_ = std::make_shared<index::workspace_index>(opts_.workspace);
    const std::shared_ptr<const privacy_filter> privacy = this->privacy();
    workspace_->set_exclude([privacy](const std::string& path, std::string_view language) {
      return !privacy->why_private_path(path, language).empty();
    });
    // Documents opened before the index existed override their files too (private ones never).
    for (const auto& d : docs_.recent("", SIZE_MAX))
      if (!privacy->is_private(d->uri, d->language_id)) workspace_->document_updated(d);
  }
  workspace_->set_roots(workspace_roots_);
}

void server_core::workspace_files_changed(std::vector<index::file_change> changes) {
  if (workspace_) workspace_->files_changed(std::move(changes));
}

}  // namespace qf::server
