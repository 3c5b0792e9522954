// The privacy filter (see privacy_filter.h).
#include "server/core/privacy_filter.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "indexing/file_uri.h"

namespace qf::server {

std::vector<std::string> default_privacy_exclude() {
  return {
      // Environment files and keys.
      ".env", ".env.*", ".envrc", "*.pem", "*.key", "id_rsa*", "id_ed25519*", "id_ecdsa*", "id_dsa*", "*.p12",
      "*.pfx", "*.jks", "*.keystore", "*.kdbx", "*.tfvars", "*.kubeconfig",
      // Credentials of package managers, git, databases, HTTP.
      ".npmrc", ".yarnrc.yml", ".pypirc", ".netrc", ".pgpass", ".my.cnf", ".git-credentials", ".htpasswd",
      ".vault-token", "**/.cargo/credentials", "**/.cargo/credentials.toml", "**/.gem/credentials",
      // Secret folders and files by name.
      "**/secrets/**", "secrets.json", "secrets.yaml", "secrets.yml", "secrets.toml", "credentials.json",
      "client_secret*.json", "service-account*.json",
      // Home-folder credentials of common CLIs (cloud, containers, hosting).
      "**/.ssh/**", "**/.gnupg/**", "**/.aws/credentials", "**/.aws/sso/cache/**", "**/.aws/cli/cache/**",
      "**/.config/gcloud/**", "**/.azure/**", "**/.oci/**", "**/.bluemix/**", "**/.docker/config.json",
      "**/.kube/config", "**/.config/gh/hosts.yml", "**/.config/doctl/config.yaml", "**/.config/hcloud/cli.toml",
      "**/.config/rclone/rclone.conf", "**/.databrickscfg", "**/.s3cfg", "**/.boto", "**/.terraform.d/credentials.tfrc.json",
      "**/.fly/config.yml", "**/.wrangler/config/**", "**/.config/op/**",
  };
}

namespace {

// At most this many globs are used: the first ones, which are the user
// config file's (or the default) list; the editor's additions come after.
constexpr std::size_t max_globs = 1024;

std::vector<std::string> first_globs(const std::vector<std::string>& all) {
  if (all.size() <= max_globs) return all;
  spdlog::warn("privacy.exclude: {} patterns, only the first {} are used", all.size(), max_globs);
  return std::vector<std::string>(all.begin(), all.begin() + max_globs);
}

}  // namespace

privacy_filter::privacy_filter(const privacy_settings& s, std::vector<std::string> workspace_roots, std::string home)
    : settings_(s), roots_(std::move(workspace_roots)), globs_(first_globs(s.exclude), home) {
  for (auto& r : roots_)
    while (r.size() > 1 && r.back() == '/') r.pop_back();
}

std::string privacy_filter::why_private(std::string_view uri, std::string_view language_id) const {
  std::string key = std::string(language_id) + '\n' + std::string(uri);
  {
    std::lock_guard<std::mutex> lock(memo_mu_);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  }
  std::string why = why_private_path(privacy_path_of_uri(uri), language_id);
  std::lock_guard<std::mutex> lock(memo_mu_);
  if (memo_.size() >= 4096) memo_.clear();  // bounded: open documents are far fewer
  memo_.emplace(std::move(key), why);
  return why;
}

std::string privacy_filter::why_private_path(std::string_view path, std::string_view language_id) const {
  if (!language_id.empty()) {
    const auto& langs = settings_.disabled_languages;
    if (std::find(langs.begin(), langs.end(), language_id) != langs.end())
      return "language `" + std::string(language_id) + "` is in privacy.disabledLanguages";
  }
  if (path.empty() || globs_.empty()) return {};
  const std::string* hit = globs_.match(path);
  for (std::size_t i = 0; !hit && i < roots_.size(); ++i) {
    const std::string rel = index::path_relative_to_roots(path, {roots_[i]});
    if (!rel.empty()) hit = globs_.match(rel);
  }
  return hit ? "it matches the privacy.exclude pattern `" + *hit + "`" : std::string();
}

std::string privacy_path_of_uri(std::string_view uri) {
  std::string path = index::file_uri_to_path(uri);
  if (!path.empty()) return path;
  const std::size_t colon = uri.find(':');
  if (colon == std::string_view::npos) return std::string(uri);
  std::string_view rest = uri.substr(colon + 1);
  if (rest.starts_with("//")) {
    const std::size_t slash = rest.find('/', 2);
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  }
  rest = rest.substr(0, std::min(rest.find('?'), rest.find('#')));
  return std::string(rest);
}

}  // namespace qf::server
