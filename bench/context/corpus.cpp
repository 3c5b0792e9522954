// Ground-truth completion points from Python and C sources (see corpus.h).
#include "bench/context/corpus.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string_view>

namespace qf::bench {
namespace {

namespace fs = std::filesystem;

bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t b = 0;
  while (b <= text.size()) {
    size_t e = text.find('\n', b);
    if (e == std::string_view::npos) {
      out.push_back(text.substr(b));
      break;
    }
    out.push_back(text.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string_view rtrim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Byte offset of `word` as a whole identifier in `line` (from `from`), or npos.
size_t find_word(std::string_view line, std::string_view word, size_t from = 0) {
  for (size_t at = line.find(word, from); at != std::string_view::npos; at = line.find(word, at + 1)) {
    const bool left = at == 0 || !is_ident(line[at - 1]);
    const size_t end = at + word.size();
    const bool right = end >= line.size() || !is_ident(line[end]);
    if (left && right) return at;
  }
  return std::string_view::npos;
}

std::vector<source_file> read_tree(const std::vector<std::string>& roots, const std::string& ext) {
  std::vector<source_file> files;
  for (const std::string& root : roots) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      if (!it->is_regular_file(ec) || it->path().extension() != ext) continue;
      if (it->path().string().find("__pycache__") != std::string::npos) continue;
      std::string text = read_all(it->path());
      if (text.find('\0') != std::string::npos) continue;
      files.push_back({fs::absolute(it->path()).lexically_normal().string(), std::move(text)});
    }
  }
  std::sort(files.begin(), files.end(), [](const source_file& a, const source_file& b) { return a.path < b.path; });
  return files;
}

// ---- Python ---------------------------------------------------------------

struct py_import {
  std::string module_file;  // resolved .py file
  std::vector<std::pair<std::string, std::string>> names;  // (defined name, name used in the file)
  size_t last_line = 0;
};

// Top-level `def`/`class` lines of a file by name.
std::map<std::string, std::string> py_definitions(std::string_view text) {
  std::map<std::string, std::string> defs;
  for (std::string_view line : split_lines(text)) {
    std::string_view rest;
    if (line.starts_with("def ")) rest = line.substr(4);
    else if (line.starts_with("async def ")) rest = line.substr(10);
    else if (line.starts_with("class ")) rest = line.substr(6);
    else continue;
    size_t n = 0;
    while (n < rest.size() && is_ident(rest[n])) ++n;
    if (n == 0) continue;
    defs.emplace(std::string(rest.substr(0, n)), std::string(rtrim(line)));
  }
  return defs;
}

std::string module_file(const fs::path& base, const std::vector<std::string>& parts) {
  fs::path p = base;
  for (const std::string& s : parts) p /= s;
  std::error_code ec;
  if (fs::is_regular_file(p.string() + ".py", ec)) return fs::path(p.string() + ".py").lexically_normal().string();
  if (fs::is_regular_file(p / "__init__.py", ec)) return (p / "__init__.py").lexically_normal().string();
  return "";
}

std::vector<std::string> split_dots(std::string_view s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find('.', b);
    if (e == std::string_view::npos) e = s.size();
    if (e > b) out.emplace_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

std::vector<py_import> py_imports(const source_file& f, const fs::path& top, const std::string& top_name) {
  // The file's package: its directory relative to `top`'s parent.
  const fs::path parent = top.parent_path();
  std::vector<std::string> package;
  for (const auto& part : fs::path(f.path).parent_path().lexically_relative(parent)) package.push_back(part.string());
  const std::vector<std::string_view> lines = split_lines(f.text);
  std::vector<py_import> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view l = trim(lines[i]);
    if (!l.starts_with("from ")) continue;
    const size_t imp = l.find(" import ");
    if (imp == std::string_view::npos) continue;
    std::string_view mod = trim(l.substr(5, imp - 5));
    std::string names(l.substr(imp + 8));
    size_t last = i;
    if (names.find('(') != std::string::npos && names.find(')') == std::string::npos) {
      while (last + 1 < lines.size() && names.find(')') == std::string::npos) names.append(" ").append(lines[++last]);
    }
    std::erase_if(names, [](char c) { return c == '(' || c == ')' || c == '\\'; });
    std::vector<std::string> parts;
    if (mod.starts_with(".")) {
      size_t dots = 0;
      while (dots < mod.size() && mod[dots] == '.') ++dots;
      if (dots - 1 > package.size()) continue;
      parts.assign(package.begin(), package.end() - static_cast<std::ptrdiff_t>(dots - 1));
      for (std::string& s : split_dots(mod.substr(dots))) parts.push_back(std::move(s));
    } else {
      parts = split_dots(mod);
      if (parts.empty() || parts[0] != top_name) continue;
    }
    py_import pi;
    pi.module_file = module_file(parent, parts);
    pi.last_line = last;
    if (pi.module_file.empty() || pi.module_file == f.path) continue;
    std::stringstream ss(names);
    std::string item;
    while (std::getline(ss, item, ',')) {
      std::string_view t = trim(item);
      if (size_t c = t.find('#'); c != std::string_view::npos) t = trim(t.substr(0, c));
      if (t.empty() || t == "*") continue;
      std::string_view name = t, used = t;
      if (size_t as = t.find(" as "); as != std::string_view::npos) {
        name = trim(t.substr(0, as));
        used = trim(t.substr(as + 4));
      }
      if (name.empty() || used.empty()) continue;
      pi.names.emplace_back(std::string(name), std::string(used));
    }
    out.push_back(std::move(pi));
    i = last;
  }
  return out;
}

}  // namespace

corpus python_corpus(const std::string& name, const std::vector<std::string>& roots) {
  corpus c;
  c.name = name;
  c.files = read_tree(roots, ".py");
  std::map<std::string, std::map<std::string, std::string>> defs_by_file;
  for (const source_file& f : c.files) defs_by_file[f.path] = py_definitions(f.text);
  for (const std::string& root : roots) {
    const fs::path top = fs::absolute(root).lexically_normal();
    const fs::path top_clean = top.has_filename() ? top : top.parent_path();
    const std::string top_name = top_clean.filename().string();
    for (const source_file& f : c.files) {
      if (!f.path.starts_with(top_clean.string() + "/")) continue;
      const std::vector<std::string_view> lines = split_lines(f.text);
      for (const py_import& imp : py_imports(f, top_clean, top_name)) {
        auto defs = defs_by_file.find(imp.module_file);
        if (defs == defs_by_file.end()) continue;
        for (const auto& [defined, used] : imp.names) {
          auto d = defs->second.find(defined);
          if (d == defs->second.end()) continue;
          for (size_t i = imp.last_line + 1; i < lines.size(); ++i) {
            const std::string_view t = trim(lines[i]);
            if (t.empty() || t.starts_with("#") || t.starts_with("import ") || t.starts_with("from ") ||
                t.starts_with("def ") || t.starts_with("class ") || t.starts_with("async def "))
              continue;
            const size_t at = find_word(lines[i], used);
            if (at == std::string_view::npos) continue;
            c.points.push_back({f.path, static_cast<int64_t>(i), static_cast<int64_t>(at), used, imp.module_file, d->second});
            break;
          }
        }
      }
    }
  }
  return c;
}

// ---- C --------------------------------------------------------------------

namespace {

bool c_keyword(std::string_view w) {
  static const std::set<std::string_view> k = {"if", "for", "while", "switch", "return", "sizeof", "do", "else",
                                               "case", "goto", "typedef", "struct", "union", "enum"};
  return k.count(w) > 0;
}

// The function a line at column 0 defines, with `static` telling whether it is file-local.
struct c_def_line {
  std::string name;
  bool is_static = false;
};

bool c_definition_at(const std::vector<std::string_view>& lines, size_t i, c_def_line& out) {
  std::string_view l = lines[i];
  if (l.empty() || !(is_ident(l[0]) || l[0] == '*')) return false;
  const size_t paren = l.find('(');
  if (paren == std::string_view::npos) return false;
  std::string_view before = rtrim(l.substr(0, paren));
  size_t n = before.size();
  while (n > 0 && is_ident(before[n - 1])) --n;
  const std::string_view name = before.substr(n);
  if (name.empty() || c_keyword(name) || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char ch : before.substr(0, n))
    if (!(is_ident(ch) || ch == ' ' || ch == '*' || ch == '\t')) return false;
  if (rtrim(l).ends_with(";")) return false;
  // The body must open before any ';'.
  bool body = false;
  for (size_t j = i; j < lines.size() && j < i + 12; ++j) {
    std::string_view s = j == i ? l.substr(paren) : lines[j];
    const size_t brace = s.find('{'), semi = s.find(';');
    if (semi != std::string_view::npos && (brace == std::string_view::npos || semi < brace)) return false;
    if (brace != std::string_view::npos) {
      body = true;
      break;
    }
  }
  if (!body) return false;
  out.name = std::string(name);
  std::string_view prefix = before.substr(0, n);
  if (prefix.empty() && i > 0) prefix = lines[i - 1];  // the type on the line above
  out.is_static = find_word(prefix, "static") != std::string_view::npos;
  return true;
}

}  // namespace

corpus c_corpus(const std::string& name, const std::vector<std::string>& roots) {
  corpus c;
  c.name = name;
  c.files = read_tree(roots, ".c");
  struct def_site {
    std::string file, line;
    int files = 0;
    bool is_static = false;
  };
  std::map<std::string, def_site> defs;
  std::map<std::string, std::set<size_t>> def_lines;  // file -> definition line numbers
  for (const source_file& f : c.files) {
    const std::vector<std::string_view> lines = split_lines(f.text);
    std::set<std::string> seen;
    for (size_t i = 0; i < lines.size(); ++i) {
      c_def_line d;
      if (!c_definition_at(lines, i, d)) continue;
      def_lines[f.path].insert(i);
      if (!seen.insert(d.name).second) continue;
      def_site& s = defs[d.name];
      if (s.files++ == 0) {
        s.file = f.path;
        s.line = std::string(rtrim(lines[i]));
      }
      s.is_static = s.is_static || d.is_static;
    }
  }
  for (const source_file& f : c.files) {
    const std::vector<std::string_view> lines = split_lines(f.text);
    std::set<std::string> used;
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string_view t = trim(lines[i]);
      if (t.empty() || t.starts_with("#") || t.starts_with("//") || t.starts_with("*") || t.starts_with("/*")) continue;
      if (def_lines[f.path].count(i)) continue;
      for (size_t k = 0; k < lines[i].size(); ++k) {
        if (lines[i][k] != '(') continue;
        size_t e = k;
        while (e > 0 && lines[i][e - 1] == ' ') --e;
        size_t b = e;
        while (b > 0 && is_ident(lines[i][b - 1])) --b;
        if (b == e) continue;
        const std::string sym(lines[i].substr(b, e - b));
        auto d = defs.find(sym);
        if (d == defs.end() || d->second.files != 1 || d->second.is_static || d->second.file == f.path) continue;
        if (!used.insert(sym).second) continue;
        c.points.push_back({f.path, static_cast<int64_t>(i), static_cast<int64_t>(b), sym, d->second.file, d->second.line});
      }
    }
  }
  return c;
}

}  // namespace qf::bench
