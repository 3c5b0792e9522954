// The workspace walk (see workspace_walk.h).
#include "indexing/workspace_walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <climits>
#include <cstdlib>
#include <memory>
#include <set>
#include <utility>

#include <spdlog/spdlog.h>

#include "indexing/fd_read.h"
#include "indexing/gitignore.h"
#include "indexing/syntax_language.h"

namespace qf::index {

namespace {

constexpr std::string_view skipped_names[] = {
    ".git", ".hg",         ".svn",          "node_modules", "bower_components", "build",
    "vendor",                 "target",      "dist",          "out",          "__pycache__",      ".venv",
    "venv",                   ".tox",        ".mypy_cache",   ".pytest_cache", ".ruff_cache",     ".cache",
    ".gradle",                ".idea",       ".next",         ".nuxt",        "site-packages",    ".eggs",
};

std::string read_small_file(const std::string& path, std::size_t limit = 1u << 20) {
  std::string out;
  if (read_source_file(path, limit, &out) != read_status::ok) return {};
  return out;
}

std::string join(const std::string& dir, std::string_view name) {
  std::string p = dir;
  if (p.empty() || p.back() != '/') p += '/';
  p += name;
  return p;
}

std::string strip_slash(std::string root) {
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  return root;
}

struct dir_frame {
  std::string path;  // absolute
  std::string rel;   // relative to the root, "" for the root
  std::vector<std::shared_ptr<const ignore_file>> ignores;  // outer first
};

std::vector<const ignore_file*> raw(const std::vector<std::shared_ptr<const ignore_file>>& v) {
  std::vector<const ignore_file*> out;
  out.reserve(v.size());
  for (const auto& f : v) out.push_back(f.get());
  return out;
}

bool has_grammar(std::string_view path) { return find_syntax_language("", path) != nullptr; }

// The roots with every symbolic link resolved ("" for a root that does not resolve).
std::vector<std::string> real_roots(const std::vector<std::string>& roots) {
  std::vector<std::string> out;
  for (const std::string& r : roots) {
    char buf[PATH_MAX];
    out.push_back(::realpath(strip_slash(r).c_str(), buf) ? std::string(buf) : std::string());
  }
  return out;
}

// Whether `path`, with its links resolved, lies in one of the (resolved) roots.
bool resolves_inside(const std::string& path, const std::vector<std::string>& reals) {
  char buf[PATH_MAX];
  if (!::realpath(path.c_str(), buf)) return false;
  const std::string_view p = buf;
  for (const std::string& r : reals) {
    if (r.empty()) continue;
    if (p == r || (p.size() > r.size() && p.starts_with(r) && (r == "/" || p[r.size()] == '/'))) return true;
  }
  return false;
}

}  // namespace

bool is_skipped_directory(std::string_view name) {
  for (auto s : skipped_names)
    if (s == name) return true;
  return name.starts_with("cmake-build-");
}

const char* read_status_name(read_status s) {
  switch (s) {
    case read_status::ok: return "ok";
    case read_status::unreadable: return "unreadable";
    case read_status::too_large: return "too large";
    case read_status::binary: return "binary";
  }
  return "?";
}

read_status read_source_file(const std::string& path, std::uint64_t max_bytes, std::string* out, bool reject_binary) {
  out->clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return read_status::unreadable;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return read_status::unreadable;
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return read_status::too_large;
  }
  const bool ok = read_fd(fd, static_cast<std::size_t>(st.st_size), out);
  ::close(fd);
  if (!ok) return read_status::unreadable;
  if (reject_binary && out->find('\0') < std::min<std::size_t>(out->size(), 8192)) {
    out->clear();
    return read_status::binary;
  }
  return read_status::ok;
}

walk_result walk_workspace(const std::vector<std::string>& roots_in, const walk_options& opts,
                           const std::atomic<bool>* cancel) {
  walk_result r;
  std::set<std::pair<dev_t, ino_t>> seen_dirs;
  std::set<std::pair<dev_t, ino_t>> seen_files;  // a file reached twice through links is indexed once
  const std::vector<std::string> reals = real_roots(roots_in);
  for (const std::string& root_in : roots_in) {
    const std::string root = strip_slash(root_in);
    struct stat rst {};
    if (::stat(root.c_str(), &rst) != 0 || !S_ISDIR(rst.st_mode)) {
      spdlog::warn("workspace: root {} is not a directory; skipped", root);
      continue;
    }
    if (!seen_dirs.insert({rst.st_dev, rst.st_ino}).second) continue;  // the same root twice, or nested roots
    std::vector<dir_frame> stack;
    dir_frame top{root, "", {}};
    const std::string exclude = read_small_file(root + "/.git/info/exclude");
    if (!exclude.empty()) top.ignores.push_back(std::make_shared<const ignore_file>("", exclude));
    stack.push_back(std::move(top));
    while (!stack.empty()) {
      if (cancel && cancel->load(std::memory_order_relaxed)) return r;
      dir_frame frame = std::move(stack.back());
      stack.pop_back();
      const std::string gi = read_small_file(frame.path + "/.gitignore");
      if (!gi.empty()) {
        auto f = std::make_shared<const ignore_file>(frame.rel, gi);
        if (!f->empty()) frame.ignores.push_back(std::move(f));
      }
      const std::vector<const ignore_file*> ignores = raw(frame.ignores);
      DIR* d = ::opendir(frame.path.c_str());
      if (!d) continue;
      std::vector<std::string> subdirs;
      while (dirent* e = ::readdir(d)) {
        const std::string_view name = e->d_name;
        if (name == "." || name == "..") continue;
        const std::string path = join(frame.path, name);
        const std::string rel = frame.rel.empty() ? std::string(name) : frame.rel + "/" + std::string(name);
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0) continue;  // gone
        if (S_ISLNK(st.st_mode)) {
          // A link is followed only when it ends inside a root: one to
          // ~/.ssh or /etc, planted in a repository, is never read.
          if (!resolves_inside(path, reals)) {
            ++r.outside;
            continue;
          }
          if (::stat(path.c_str(), &st) != 0) continue;  // dangling
        }
        const bool is_dir = S_ISDIR(st.st_mode);
        if (is_dir) {
          if (is_skipped_directory(name) || is_ignored(ignores, rel, true)) {
            ++r.ignored;
            continue;
          }
          if (!seen_dirs.insert({st.st_dev, st.st_ino}).second) {
            ++r.loops;
            continue;
          }
          subdirs.push_back(std::string(name));
          continue;
        }
        if (!S_ISREG(st.st_mode)) continue;
        if (!has_grammar(name)) {
          ++r.no_grammar;
          continue;
        }
        if (is_ignored(ignores, rel, false)) {
          ++r.ignored;
          continue;
        }
        if (static_cast<std::uint64_t>(st.st_size) > opts.max_file_bytes) {
          ++r.too_large;
          continue;
        }
        if (!seen_files.insert({st.st_dev, st.st_ino}).second) continue;
        if (r.files.size() >= opts.max_files) {
          r.truncated = true;
          ::closedir(d);
          spdlog::warn("workspace: stopped at {} files (the limit); the rest of the workspace is not indexed",
                       opts.max_files);
          return r;
        }
        r.files.push_back({path, static_cast<std::uint64_t>(st.st_size)});
      }
      ::closedir(d);
      // Reverse so that the stack pops them in directory order.
      for (auto it = subdirs.rbegin(); it != subdirs.rend(); ++it) {
        const std::string& name = *it;
        stack.push_back(dir_frame{join(frame.path, name), frame.rel.empty() ? name : frame.rel + "/" + name,
                                  frame.ignores});
      }
    }
  }
  return r;
}

bool is_indexable_path(const std::vector<std::string>& roots, const std::string& path) {
  if (!has_grammar(path)) return false;
  // Through links, the file must still be inside a root (a missing file is
  // judged by its path: a deletion).
  if (struct stat st {}; ::lstat(path.c_str(), &st) == 0 && !resolves_inside(path, real_roots(roots))) return false;
  for (const std::string& root_in : roots) {
    const std::string root = strip_slash(root_in);
    if (!(path.size() > root.size() && path.starts_with(root) && path[root.size()] == '/')) continue;
    const std::string rel = path.substr(root.size() + 1);
    std::vector<std::shared_ptr<const ignore_file>> ignores;
    const std::string exclude = read_small_file(root + "/.git/info/exclude");
    if (!exclude.empty()) ignores.push_back(std::make_shared<const ignore_file>("", exclude));
    std::string dir_rel;
    std::size_t start = 0;
    bool ok = true;
    for (;;) {
      const std::string gi = read_small_file(root + (dir_rel.empty() ? "" : "/" + dir_rel) + "/.gitignore");
      if (!gi.empty()) ignores.push_back(std::make_shared<const ignore_file>(dir_rel, gi));
      const std::size_t slash = rel.find('/', start);
      if (slash == std::string::npos) break;
      const std::string name = rel.substr(start, slash - start);
      dir_rel = rel.substr(0, slash);
      if (is_skipped_directory(name) || is_ignored(raw(ignores), dir_rel, true)) {
        ok = false;
        break;
      }
      start = slash + 1;
    }
    if (ok && !is_ignored(raw(ignores), rel, false)) return true;
  }
  return false;
}

}  // namespace qf::index
