// The workspace index: definitions and imports of every source file under
// the workspace roots, kept current in the background; the definition_source
// the prompt's context layer reads.
//
// One thread at the lowest priority (nice 19, and SCHED_IDLE unless turned
// off) does all the work and yields between files: it loads the disk cache,
// walks the roots (workspace_walk.h), reads each file, looks its content key
// up in the cache or parses it (tree-sitter, bounded by a CPU budget) and
// extracts its definitions, then serves events: file changes (created,
// changed, deleted paths), root changes, and open documents, whose text
// overrides the disk version (debounced, so a burst of typing costs one
// parse; on close the disk version comes back). The cache is written after
// the first walk and then at most every `cache_interval` while something
// changed, and at stop().
//
// Reads (lookup, imports_of, resolve_import) go to the definition_store,
// which the thread updates with one short exclusive lock per file: they never
// wait for a parse or for I/O.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "indexing/definition_extract.h"
#include "indexing/definition_cache.h"
#include "indexing/definition_store.h"
#include "indexing/definitions.h"
#include "indexing/document.h"
#include "indexing/workspace_walk.h"

namespace qf::index {

struct workspace_options {
  walk_options walk;                                   // file count and size caps
  extract_limits extract;                              // per-file caps
  std::string cache_dir = "default";                   // "default": default_cache_dir(); "": no disk cache
  std::chrono::milliseconds debounce{300};             // open-document text settles this long before a parse
  std::chrono::milliseconds parse_budget{1000};        // CPU time per file
  std::chrono::seconds cache_interval{30};
  bool idle_priority = true;                           // SCHED_IDLE for the thread (nice 19 always)
  // Progress of the first walk of each set of roots: (files done, files found, finished). On the index thread.
  std::function<void(std::size_t, std::size_t, bool)> on_progress;
};

struct workspace_stats {
  std::size_t files = 0;        // files with a record in the store
  std::size_t definitions = 0;
  std::size_t parses = 0;       // tree-sitter parses (disk files and open documents)
  std::size_t cache_hits = 0;   // files taken from the disk cache
  std::size_t unreadable = 0;   // vanished or unreadable when read
  std::size_t binary = 0;
  std::size_t too_large = 0;
  std::size_t gave_up = 0;      // parse over budget
  bool truncated = false;       // the walk hit the file cap
  bool first_walk_done = false;
};

enum class file_change_kind { created, changed, deleted };
struct file_change {
  std::string path;  // absolute
  file_change_kind kind = file_change_kind::changed;
};

class workspace_index final : public definition_source {
 public:
  explicit workspace_index(workspace_options opts = {});
  ~workspace_index() override;
  workspace_index(const workspace_index&) = delete;
  workspace_index& operator=(const workspace_index&) = delete;

  // Sets the roots (absolute folders) and starts the thread on the first call;
  // later calls re-walk: files under new roots are added, files no longer
  // under any root dropped.
  void set_roots(std::vector<std::string> roots);
  void files_changed(std::vector<file_change> changes);
  // Files kept out of the index (the server's privacy filter): called on the
  // index thread with an absolute path and the language id ("" when unknown;
  // for a file on disk, its grammar's name, "typescriptreact" for tsx). Setting
  // it re-walks, so files it now keeps out leave the index.
  using exclude_fn = std::function<bool(const std::string& path, std::string_view language_id)>;
  void set_exclude(exclude_fn excluded);
  // Open documents (any URI scheme; a file:// one overrides that file).
  void document_updated(std::shared_ptr<const document> doc);
  void document_closed(const std::string& uri);
  // Ends the thread (writes the cache when something changed). Idempotent.
  void stop();

  // definition_source
  std::vector<definition> lookup(std::string_view name, std::size_t max) const override;
  std::vector<import_ref> imports_of(std::string_view uri) const override;
  std::string resolve_import(std::string_view from_uri, const import_ref& imp) const override;

  std::vector<std::string> roots() const;
  workspace_stats stats() const;
  // Blocks until everything queued so far is done (debounced documents
  // included, their delay waived) or `timeout` passes; true when idle.
  bool wait_idle(std::chrono::milliseconds timeout = std::chrono::seconds(60));
  std::string cache_path() const;

 private:
  struct pending_doc {
    std::shared_ptr<const document> doc;  // null: closed
    std::chrono::steady_clock::time_point due;
  };
  struct parser_cache;

  void run();
  void walk_roots(const std::vector<std::string>& roots, bool report);
  void index_disk_file(const std::string& path);
  void index_document(const std::shared_ptr<const document>& doc);
  bool extract(const std::string& language_id, const std::string& uri, const std::string& text,
               file_definitions* out);
  void save_cache();
  void set_priority();
  bool is_excluded(const std::string& path, std::string_view language_id) const;

  workspace_options opts_;
  definition_store store_;

  mutable std::mutex mu_;  // everything below up to the thread's own state
  std::condition_variable wake_;
  std::condition_variable idle_cv_;
  std::vector<std::string> roots_;
  bool rewalk_ = false;
  std::deque<file_change> changes_;
  std::map<std::string, pending_doc> docs_;
  bool stop_ = false;
  bool busy_ = false;
  bool waive_debounce_ = false;
  std::shared_ptr<const exclude_fn> excluded_;  // null: nothing kept out
  workspace_stats stats_;
  std::thread thread_;
  std::atomic<bool> cancel_{false};

  // The thread's own state.
  std::unique_ptr<parser_cache> parsers_;
  cache_entries disk_cache_;  // loaded at start, dropped after the first walk
  std::string cache_path_;
  bool cache_dirty_ = false;
  std::chrono::steady_clock::time_point last_save_;
};

}  // namespace qf::index
