// Import resolution (see import_resolve.h).
#include "indexing/import_resolve.h"

#include <algorithm>
#include <filesystem>

#include "indexing/syntax_language.h"
#include "indexing/workspace_walk.h"

namespace qf::index {

namespace {

namespace fs = std::filesystem;

std::string parent_of(const std::string& p) {
  const std::size_t s = p.rfind('/');
  return s == std::string::npos || s == 0 ? std::string("/") : p.substr(0, s);
}

std::string normal(const std::string& p) { return fs::path(p).lexically_normal().string(); }

std::string first_existing(const std::vector<std::string>& candidates, const resolve_context& ctx) {
  for (const auto& c : candidates) {
    const std::string n = normal(c);
    if (ctx.exists(n)) return n;
  }
  return {};
}

// Built by appending (GCC 12 warns, falsely, about std::string::replace here: -Wrestrict).
std::string replace_all(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  std::size_t start = 0;
  for (std::size_t pos; (pos = s.find(from, start)) != std::string_view::npos; start = pos + from.size())
    out.append(s.substr(start, pos - start)).append(to);
  return out.append(s.substr(start));
}

std::string python(const std::string& from, const import_ref& imp, const resolve_context& ctx) {
  std::string mod = imp.module;
  std::size_t dots = 0;
  while (dots < mod.size() && mod[dots] == '.') ++dots;
  const std::string rest = replace_all(mod.substr(dots), ".", "/");
  std::vector<std::string> bases;
  if (dots > 0) {
    std::string base = parent_of(from);
    for (std::size_t i = 1; i < dots; ++i) base = parent_of(base);
    bases.push_back(base);
  } else {
    for (const auto& r : ctx.roots) {
      bases.push_back(r);
      bases.push_back(r + "/src");
    }
    // The file's own folder and its ancestors up to its root (a package root may sit anywhere below it).
    std::string d = parent_of(from);
    for (int guard = 0; guard < 64 && d.size() > 1; ++guard, d = parent_of(d)) {
      bases.push_back(d);
      if (std::find(ctx.roots.begin(), ctx.roots.end(), d) != ctx.roots.end()) break;
    }
  }
  for (const auto& base : bases) {
    const std::string p = rest.empty() ? base : base + "/" + rest;
    std::vector<std::string> c;
    if (!imp.names.empty()) c.push_back(p + "/" + imp.names.front() + ".py");  // from pkg import module
    if (!rest.empty()) c.push_back(p + ".py");
    c.push_back(p + "/__init__.py");
    if (!imp.names.empty()) c.push_back(p + "/" + imp.names.front() + "/__init__.py");
    // "from pkg import name": the package's own file wins over a same-named module only when no module exists.
    if (std::string hit = first_existing(c, ctx); !hit.empty()) return hit;
  }
  return {};
}

std::string js(const std::string& from, const import_ref& imp, const resolve_context& ctx) {
  const std::string& m = imp.module;
  if (!(m.starts_with("./") || m.starts_with("../") || m == "." || m == "..")) return {};
  const std::string p = parent_of(from) + "/" + m;
  static const char* exts[] = {".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs"};
  std::vector<std::string> c{p};
  for (const char* e : exts) c.push_back(p + e);
  for (const char* e : exts) c.push_back(p + "/index" + e);
  for (const char* js_ext : {".js", ".jsx", ".mjs", ".cjs"}) {
    if (m.ends_with(js_ext)) {
      const std::string stem = p.substr(0, p.size() - std::string_view(js_ext).size());
      c.push_back(stem + ".ts");
      c.push_back(stem + ".tsx");
    }
  }
  return first_existing(c, ctx);
}

std::string c_include(const std::string& from, const import_ref& imp, const resolve_context& ctx) {
  std::vector<std::string> c{parent_of(from) + "/" + imp.module};
  for (const auto& r : ctx.roots)
    for (const char* sub : {"", "/include", "/src"}) c.push_back(r + sub + "/" + imp.module);
  if (std::string hit = first_existing(c, ctx); !hit.empty()) return hit;
  if (ctx.with_suffix) {
    const auto any = ctx.with_suffix(imp.module);
    if (!any.empty()) return any.front();
  }
  return {};
}

std::string go(const std::string& from, const import_ref& imp, const resolve_context& ctx) {
  for (std::string d = parent_of(from); d.size() > 1; d = parent_of(d)) {
    std::string gomod;
    if (read_source_file(d + "/go.mod", 1 << 20, &gomod) != read_status::ok) continue;
    std::string module;
    std::size_t pos = 0;
    while (pos < gomod.size()) {
      std::size_t nl = gomod.find('\n', pos);
      if (nl == std::string::npos) nl = gomod.size();
      std::string_view line(gomod.data() + pos, nl - pos);
      pos = nl + 1;
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
      if (line.starts_with("module ")) {
        line.remove_prefix(7);
        while (!line.empty() && (line.back() == ' ' || line.back() == '\r' || line.back() == '"')) line.remove_suffix(1);
        while (!line.empty() && (line.front() == ' ' || line.front() == '"')) line.remove_prefix(1);
        module = std::string(line);
        break;
      }
    }
    if (module.empty()) return {};
    std::string dir;
    if (imp.module == module) dir = d;
    else if (imp.module.starts_with(module + "/")) dir = d + imp.module.substr(module.size());
    else return {};
    if (!ctx.list_dir) return {};
    std::vector<std::string> names = ctx.list_dir(dir);
    std::sort(names.begin(), names.end());
    for (const auto& n : names)
      if (n.ends_with(".go") && !n.ends_with("_test.go") && ctx.exists(dir + "/" + n)) return dir + "/" + n;
    return {};
  }
  return {};
}

std::string rust(const std::string& from, const import_ref& imp, const resolve_context& ctx) {
  const std::string dir = parent_of(from);
  const std::string file = from.substr(dir.size() + 1);
  const bool owns_dir = file == "lib.rs" || file == "main.rs" || file == "mod.rs";
  const std::string mod_dir = owns_dir ? dir : dir + "/" + file.substr(0, file.size() - 3);
  if (imp.module.find("::") == std::string::npos && imp.module != "crate" && imp.module != "self" &&
      imp.module != "super") {
    // `mod x;`, or `use x::...` of a sibling module
    if (std::string hit = first_existing({mod_dir + "/" + imp.module + ".rs", mod_dir + "/" + imp.module + "/mod.rs"}, ctx);
        !hit.empty())
      return hit;
  }
  std::vector<std::string> segs;
  std::size_t pos = 0;
  while (pos <= imp.module.size()) {
    std::size_t next = imp.module.find("::", pos);
    if (next == std::string::npos) next = imp.module.size();
    segs.push_back(imp.module.substr(pos, next - pos));
    pos = next + 2;
  }
  for (const auto& n : imp.names) segs.push_back(n);
  std::string base;
  std::size_t first = 1;
  if (segs.front() == "crate") {
    for (std::string d = dir; d.size() > 1; d = parent_of(d))
      if (fs::exists(d + "/Cargo.toml")) {
        base = d + "/src";
        break;
      }
  } else if (segs.front() == "self") {
    base = mod_dir;
  } else if (segs.front() == "super") {
    base = owns_dir ? parent_of(dir) : dir;
  } else {
    return {};
  }
  if (base.empty()) return {};
  std::string found;
  std::string p = base;
  for (std::size_t i = first; i < segs.size(); ++i) {
    p += "/" + segs[i];
    std::string hit = first_existing({p + ".rs", p + "/mod.rs"}, ctx);
    if (hit.empty()) break;
    found = hit;
  }
  if (found.empty() && segs.front() == "crate") found = first_existing({base + "/lib.rs", base + "/main.rs"}, ctx);
  return found;
}

std::string java(const std::string&, const import_ref& imp, const resolve_context& ctx) {
  const std::string rel = replace_all(imp.module, ".", "/") + ".java";
  std::vector<std::string> c;
  for (const auto& r : ctx.roots)
    for (const char* sub : {"", "/src/main/java", "/src"}) c.push_back(r + sub + "/" + rel);
  if (std::string hit = first_existing(c, ctx); !hit.empty()) return hit;
  if (ctx.with_suffix) {
    const auto any = ctx.with_suffix(rel);
    if (!any.empty()) return any.front();
  }
  return {};
}

}  // namespace

std::string resolve_import_path(const std::string& from_path, const import_ref& imp, const resolve_context& ctx) {
  if (imp.module.empty() || from_path.empty() || from_path.front() != '/') return {};
  const syntax_language* lang = find_syntax_language("", from_path);
  // Without the grammar table (no tree-sitter) fall back on the extension alone.
  std::string_view name = lang ? lang->name : std::string_view{};
  const std::string ext = from_path.substr(from_path.rfind('.') + 1);
  if (name.empty()) {
    if (ext == "py") name = "python";
    else if (ext == "ts" || ext == "tsx" || ext == "js" || ext == "jsx" || ext == "mjs") name = "javascript";
    else if (ext == "c" || ext == "h" || ext == "cpp" || ext == "hpp" || ext == "cc") name = "cpp";
    else if (ext == "go") name = "go";
    else if (ext == "rs") name = "rust";
    else if (ext == "java") name = "java";
  }
  if (name == "python") return python(from_path, imp, ctx);
  if (name == "javascript" || name == "typescript" || name == "tsx") return js(from_path, imp, ctx);
  if (name == "c" || name == "cpp") return c_include(from_path, imp, ctx);
  if (name == "go") return go(from_path, imp, ctx);
  if (name == "rust") return rust(from_path, imp, ctx);
  if (name == "java") return java(from_path, imp, ctx);
  return {};
}

}  // namespace qf::index
