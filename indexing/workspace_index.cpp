// The workspace index's thread and events (see workspace_index.h).
#include "indexing/workspace_index.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <set>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "indexing/file_uri.h"
#include "indexing/import_resolve.h"
#include "indexing/syntax_language.h"
#if QF_HAVE_TREE_SITTER
#include "indexing/syntax_tree.h"
#endif

namespace qf::index {

using steady = std::chrono::steady_clock;

struct workspace_index::parser_cache {
#if QF_HAVE_TREE_SITTER
  std::unordered_map<const syntax_language*, std::unique_ptr<syntax_document>> by_language;
#endif
};

namespace {

bool is_regular_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

workspace_index::workspace_index(workspace_options opts)
    : opts_(std::move(opts)), parsers_(std::make_unique<parser_cache>()) {
  thread_ = std::thread([this] { run(); });
}

workspace_index::~workspace_index() { stop(); }

void workspace_index::stop() {
  {
    std::lock_guard lock(mu_);
    if (stop_ && !thread_.joinable()) return;
    stop_ = true;
  }
  cancel_ = true;
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void workspace_index::set_roots(std::vector<std::string> roots) {
  for (auto& r : roots)
    while (r.size() > 1 && r.back() == '/') r.pop_back();
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  {
    std::lock_guard lock(mu_);
    roots_ = std::move(roots);
    rewalk_ = true;
  }
  wake_.notify_all();
}

void workspace_index::set_exclude(exclude_fn excluded) {
  {
    std::lock_guard lock(mu_);
    excluded_ = excluded ? std::make_shared<const exclude_fn>(std::move(excluded)) : nullptr;
    rewalk_ = !roots_.empty();
  }
  wake_.notify_all();
}

bool workspace_index::is_excluded(const std::string& path, std::string_view language_id) const {
  std::shared_ptr<const exclude_fn> f;
  {
    std::lock_guard lock(mu_);
    f = excluded_;
  }
  return f && (*f)(path, language_id);
}

namespace {

// The language id of a file on disk, from its grammar ("" without one).
std::string_view disk_language_id(const std::string& path) {
  const syntax_language* lang = find_syntax_language("", path);
  if (!lang) return {};
  return lang->name == "tsx" ? std::string_view("typescriptreact") : lang->name;
}

}  // namespace

void workspace_index::files_changed(std::vector<file_change> changes) {
  {
    std::lock_guard lock(mu_);
    for (auto& c : changes) changes_.push_back(std::move(c));
  }
  wake_.notify_all();
}

void workspace_index::document_updated(std::shared_ptr<const document> doc) {
  if (!doc) return;
  {
    std::lock_guard lock(mu_);
    const std::string uri = doc->uri;
    docs_[uri] = pending_doc{std::move(doc), steady::now() + opts_.debounce};
  }
  wake_.notify_all();
}

void workspace_index::document_closed(const std::string& uri) {
  {
    std::lock_guard lock(mu_);
    docs_[uri] = pending_doc{nullptr, steady::now()};
  }
  wake_.notify_all();
}

std::vector<definition> workspace_index::lookup(std::string_view name, std::size_t max) const {
  return store_.lookup(name, max);
}

std::vector<import_ref> workspace_index::imports_of(std::string_view uri) const { return store_.imports_of(uri); }

std::string workspace_index::resolve_import(std::string_view from_uri, const import_ref& imp) const {
  const std::string from = file_uri_to_path(from_uri);
  if (from.empty()) return {};
  resolve_context ctx;
  ctx.roots = roots();
  ctx.exists = [this](const std::string& p) { return store_.contains(path_to_file_uri(p)) || is_regular_file(p); };
  ctx.with_suffix = [this](const std::string& suffix) {
    std::vector<std::string> out;
    for (const auto& u : store_.uris_ending_with(suffix, 8)) out.push_back(file_uri_to_path(u));
    return out;
  };
  ctx.list_dir = [](const std::string& dir) {
    std::vector<std::string> out;
    if (DIR* d = ::opendir(dir.c_str())) {
      while (dirent* e = ::readdir(d))
        if (e->d_name[0] != '.') out.emplace_back(e->d_name);
      ::closedir(d);
    }
    return out;
  };
  const std::string path = resolve_import_path(from, imp, ctx);
  return path.empty() ? std::string() : path_to_file_uri(path);
}

std::vector<std::string> workspace_index::roots() const {
  std::lock_guard lock(mu_);
  return roots_;
}

workspace_stats workspace_index::stats() const {
  workspace_stats s;
  {
    std::lock_guard lock(mu_);
    s = stats_;
  }
  s.files = store_.file_count();
  s.definitions = store_.definition_count();
  return s;
}

std::string workspace_index::cache_path() const {
  std::lock_guard lock(mu_);
  return cache_path_;
}

bool workspace_index::wait_idle(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  waive_debounce_ = true;
  wake_.notify_all();
  const bool idle = idle_cv_.wait_for(lock, timeout, [&] {
    return stop_ || (!busy_ && !rewalk_ && changes_.empty() && docs_.empty());
  });
  waive_debounce_ = false;
  return idle;
}

void workspace_index::set_priority() {
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  if (::setpriority(PRIO_PROCESS, tid, 19) != 0) spdlog::debug("workspace index: setpriority failed");
  if (opts_.idle_priority) {
    sched_param p{};
    if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &p) != 0) spdlog::debug("workspace index: SCHED_IDLE refused");
  }
}

void workspace_index::run() {
  set_priority();
  for (;;) {
    std::unique_lock lock(mu_);
    busy_ = false;
    // What is due now; otherwise sleep until the next debounced document.
    auto next_due = steady::time_point::max();
    bool doc_due = false;
    const auto now = steady::now();
    for (const auto& [uri, p] : docs_) {
      if (waive_debounce_ || p.due <= now) doc_due = true;
      next_due = std::min(next_due, p.due);
    }
    if (stop_) break;
    if (!rewalk_ && changes_.empty() && !doc_due) {
      idle_cv_.notify_all();
      if (cache_dirty_ && !cache_path_.empty() && now - last_save_ >= opts_.cache_interval) {
        lock.unlock();
        save_cache();
        continue;
      }
      if (next_due == steady::time_point::max())
        wake_.wait_for(lock, cache_dirty_ ? opts_.cache_interval : std::chrono::hours(1));
      else
        wake_.wait_until(lock, next_due);
      continue;
    }
    busy_ = true;
    if (rewalk_) {
      rewalk_ = false;
      const std::vector<std::string> roots = roots_;
      lock.unlock();
      walk_roots(roots, true);
      continue;
    }
    std::deque<file_change> changes;
    changes.swap(changes_);
    std::vector<std::pair<std::string, std::shared_ptr<const document>>> due;  // null: closed
    for (auto it = docs_.begin(); it != docs_.end();) {
      if (waive_debounce_ || it->second.due <= now) {
        due.emplace_back(it->first, std::move(it->second.doc));
        it = docs_.erase(it);
      } else {
        ++it;
      }
    }
    const std::vector<std::string> roots = roots_;
    lock.unlock();
    for (const file_change& c : changes) {
      if (cancel_) break;
      const std::string uri = path_to_file_uri(c.path);
      const auto base = c.path.substr(c.path.rfind('/') + 1);
      if (base == ".gitignore" || base == "exclude") {
        std::lock_guard relock(mu_);
        rewalk_ = true;  // what is ignored may have changed
        continue;
      }
      if (c.kind == file_change_kind::deleted) {
        auto info = store_.info(uri);
        if (info && !info->from_document) store_.remove(uri);
        for (const auto& u : store_.uris())  // a deleted folder takes its files along
          if (u.size() > uri.size() && u.starts_with(uri) && u[uri.size()] == '/') {
            auto i = store_.info(u);
            if (i && !i->from_document) store_.remove(u);
          }
        cache_dirty_ = true;
      } else if (is_indexable_path(roots, c.path) && !is_excluded(c.path, disk_language_id(c.path))) {
        index_disk_file(c.path);
      } else if (auto info = store_.info(uri); info && !info->from_document) {
        store_.remove(uri);
      }
      std::this_thread::yield();
    }
    for (const auto& [uri, doc] : due) {
      if (cancel_) break;
      if (!doc) {
        // Closed: the disk version (if any) comes back.
        auto info = store_.info(uri);
        if (info && info->from_document) store_.remove(uri);
        const std::string path = file_uri_to_path(uri);
        if (!path.empty() && is_indexable_path(roots, path) && !is_excluded(path, disk_language_id(path)))
          index_disk_file(path);
      } else {
        index_document(doc);
      }
      std::this_thread::yield();
    }
  }
  {
    std::lock_guard lock(mu_);
    busy_ = false;
  }
  idle_cv_.notify_all();
  if (cache_dirty_) save_cache();
}

void workspace_index::walk_roots(const std::vector<std::string>& roots, bool report) {
  const std::string dir = opts_.cache_dir == "default" ? default_cache_dir() : opts_.cache_dir;
  const std::string path = dir.empty() || roots.empty() ? std::string() : cache_file_for(dir, roots);
  if (path != cache_path_) {
    if (cache_dirty_) save_cache();
    {
      std::lock_guard lock(mu_);
      cache_path_ = path;
    }
    disk_cache_.clear();
    if (!path.empty()) {
      std::string error;
      disk_cache_ = load_definition_cache(path, &error);
      if (!error.empty())
        spdlog::warn("workspace index: ignoring the cache {}: {}", path, error);
      else if (!disk_cache_.empty())
        spdlog::info("workspace index: {} cached files from {}", disk_cache_.size(), path);
    }
  }
  const auto started = steady::now();
  walk_result walked = walk_workspace(roots, opts_.walk, &cancel_);
  std::erase_if(walked.files, [&](const walked_file& f) { return is_excluded(f.path, disk_language_id(f.path)); });
  {
    std::lock_guard lock(mu_);
    stats_.truncated = walked.truncated;
  }
  // Files no longer found (a removed root, a new ignore rule) go.
  std::set<std::string> found;
  for (const auto& f : walked.files) found.insert(path_to_file_uri(f.path));
  for (const auto& u : store_.uris()) {
    if (found.count(u) || !u.starts_with("file://")) continue;
    auto info = store_.info(u);
    if (info && !info->from_document) store_.remove(u);
  }
  const std::size_t total = walked.files.size();
  auto last_report = steady::now();
  if (report && opts_.on_progress) opts_.on_progress(0, total, false);
  for (std::size_t i = 0; i < total && !cancel_; ++i) {
    index_disk_file(walked.files[i].path);
    if (report && opts_.on_progress && steady::now() - last_report >= std::chrono::milliseconds(200)) {
      last_report = steady::now();
      opts_.on_progress(i + 1, total, false);
    }
    // Open documents typed into while the walk runs are not kept waiting for it.
    std::vector<std::shared_ptr<const document>> due;
    {
      std::lock_guard lock(mu_);
      const auto now = steady::now();
      for (auto it = docs_.begin(); it != docs_.end();) {
        if (it->second.doc && it->second.due <= now) {
          due.push_back(std::move(it->second.doc));
          it = docs_.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (const auto& d : due) index_document(d);
    std::this_thread::yield();
  }
  disk_cache_.clear();
  disk_cache_.rehash(0);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - started).count();
  workspace_stats s = stats();
  spdlog::info("workspace index: {} files, {} definitions in {} ms ({} parsed, {} from the cache; skipped: {} ignored, "
               "{} over the size cap, {} without a grammar, {} binary, {} unreadable{})",
               s.files, s.definitions, ms, s.parses, s.cache_hits, walked.ignored, walked.too_large + s.too_large,
               walked.no_grammar, s.binary, s.unreadable, walked.truncated ? "; stopped at the file cap" : "");
  if (cache_dirty_ && !cancel_) save_cache();
  {
    std::lock_guard lock(mu_);
    stats_.first_walk_done = true;
  }
  if (report && opts_.on_progress) opts_.on_progress(total, total, true);
}

void workspace_index::index_disk_file(const std::string& path) {
  const std::string uri = path_to_file_uri(path);
  const auto info = store_.info(uri);
  if (info && info->from_document) return;  // the open document's text wins
  std::string text;
  const read_status st = read_source_file(path, opts_.walk.max_file_bytes, &text);
  const syntax_language* lang = find_syntax_language("", path);
  if (st != read_status::ok || !lang) {
    {
      std::lock_guard lock(mu_);
      if (st == read_status::unreadable) ++stats_.unreadable;
      if (st == read_status::binary) ++stats_.binary;
      if (st == read_status::too_large) ++stats_.too_large;
    }
    if (st == read_status::unreadable) spdlog::debug("workspace index: cannot read {}", path);
    if (info) {
      store_.remove(uri);
      cache_dirty_ = true;
    }
    return;
  }
  const std::uint64_t key = content_key(text, lang->name);
  if (info && info->content_hash == key) return;  // unchanged
  file_definitions defs;
  if (auto it = disk_cache_.find(key); it != disk_cache_.end()) {
    defs = it->second;
    std::lock_guard lock(mu_);
    ++stats_.cache_hits;
  } else {
    extract(std::string(lang->name), uri, text, &defs);
  }
  store_.put(definition_store::pack(uri, defs, key, false));
  cache_dirty_ = true;
}

void workspace_index::index_document(const std::shared_ptr<const document>& doc) {
  const std::string path = file_uri_to_path(doc->uri);
  if (is_excluded(path.empty() ? doc->uri : path, doc->language_id)) {
    if (store_.info(doc->uri)) store_.remove(doc->uri);
    return;
  }
  const syntax_language* lang = find_syntax_language(doc->language_id, doc->uri);
  if (!lang) return;
  const std::uint64_t key = content_key(doc->text, lang->name);
  const auto info = store_.info(doc->uri);
  if (info && info->from_document && info->content_hash == key) return;
  file_definitions defs;
  if (doc->text.size() > opts_.walk.max_file_bytes) return;  // as on disk: too large to index
  extract(std::string(lang->name), doc->uri, doc->text, &defs);
  store_.put(definition_store::pack(doc->uri, defs, key, true));
}

bool workspace_index::extract(const std::string& language_name, const std::string& uri, const std::string& text,
                              file_definitions* out) {
#if QF_HAVE_TREE_SITTER
  const syntax_language* lang = syntax_language_named(language_name);
  if (!lang) return false;
  auto& sd = parsers_->by_language[lang];
  try {
    if (!sd) sd = std::make_unique<syntax_document>(*lang);
  } catch (const std::exception& e) {
    spdlog::warn("workspace index: {}", e.what());
    return false;
  }
  sd->reset(std::make_shared<const document>(uri, language_name, 0, text));
  parse_limits limits;
  limits.budget = opts_.parse_budget;
  limits.cancel = &cancel_;
  const parse_status st = sd->parse(limits);
  {
    std::lock_guard lock(mu_);
    ++stats_.parses;
    if (st == parse_status::timed_out) ++stats_.gave_up;
  }
  if (st != parse_status::parsed) {
    if (st == parse_status::timed_out) spdlog::info("workspace index: {} took too long to parse; not indexed", uri);
    sd->drop_tree();
    return false;
  }
  *out = extract_definitions(sd->tree(), *lang, sd->current()->text, opts_.extract);
  sd->drop_tree();
  return true;
#else
  (void)language_name;
  (void)uri;
  (void)text;
  (void)out;
  return false;
#endif
}

void workspace_index::save_cache() {
  last_save_ = steady::now();
  cache_dirty_ = false;
  const std::string path = cache_path();
  if (path.empty()) return;
  cache_entries entries;
  for (const auto& u : store_.uris()) {
    auto info = store_.info(u);
    if (!info || info->from_document) continue;
    if (auto defs = store_.get(u)) entries.emplace(info->content_hash, std::move(*defs));
  }
  std::string error;
  if (!save_definition_cache(path, entries, &error)) spdlog::warn("workspace index: cache not written: {}", error);
}

}  // namespace qf::index
