// Gathering the context items of a layout (see the header).
#include "server/completion/prompt/context_block.h"

#include <algorithm>
#include <unordered_set>

#include "text/lines.h"
#include "indexing/syntax_query.h"
#include "text/utf8.h"

namespace qf::server::completion {
namespace {

constexpr size_t k_max_header_bytes = 200;
constexpr int64_t k_max_scan_lines = 4000;  // the indentation heuristic looks this far up

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (c & 0x80); }
bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

const std::unordered_set<std::string_view>& keywords() {
  static const std::unordered_set<std::string_view> k = {
      "and", "as", "assert", "async", "await", "break", "case", "catch", "class", "const", "continue", "def",
      "default", "del", "delete", "do", "elif", "else", "enum", "except", "export", "extends", "extern", "false",
      "False", "finally", "fn", "for", "from", "func", "function", "global", "go", "if", "impl", "import", "in",
      "interface", "is", "lambda", "let", "match", "mod", "mut", "namespace", "new", "nil", "None", "nonlocal",
      "not", "null", "or", "package", "pass", "private", "protected", "pub", "public", "raise", "return", "self",
      "Self", "static", "struct", "super", "switch", "this", "throw", "trait", "true", "True", "try", "type",
      "typedef", "typeof", "use", "using", "var", "void", "while", "with", "yield", "int", "char", "bool", "float",
      "double", "long", "short", "unsigned", "signed", "auto", "template", "typename", "virtual", "override",
      "final", "inline", "constexpr", "std", "string", "str", "end", "then", "local", "undefined", "where", "loop",
      "elsif", "unless", "until", "begin", "module", "require", "defer", "chan", "map", "range", "select"};
  return k;
}

const std::unordered_set<std::string_view>& definers() {
  static const std::unordered_set<std::string_view> k = {"def",   "class", "function", "fn",   "let",  "const",
                                                          "var",   "struct", "type",   "interface", "enum",
                                                          "func",  "trait", "impl",    "mod",  "local", "typedef"};
  return k;
}

struct line_ref {
  std::string_view content;  // without the line break
  size_t begin = 0;
};

// The line starting at `b`.
line_ref line_from(std::string_view text, size_t b) {
  const text::line_break br = text::find_line_break(text, b);
  return {text.substr(b, (br.len ? br.pos : text.size()) - b), b};
}

size_t indent_of(std::string_view l) {
  size_t i = 0;
  size_t w = 0;
  for (; i < l.size() && (l[i] == ' ' || l[i] == '\t'); ++i) w += l[i] == '\t' ? 4 : 1;
  return i == l.size() ? std::string_view::npos : w;
}

// Lines that only close a bracket or start a branch do not head a scope.
bool heads_scope(std::string_view l) {
  size_t b = l.find_first_not_of(" \t");
  if (b == std::string_view::npos) return false;
  const char c = l[b];
  if (c == '}' || c == ')' || c == ']' || c == '#' || c == '/' || c == '*' || c == '@') return false;
  for (std::string_view w : {"else", "elif", "except", "finally", "catch", "case", "default"})
    if (l.substr(b).starts_with(w)) return false;
  return true;
}

bool is_scope_type(std::string_view t) {
  for (std::string_view bad : {"call", "name", "identifier", "parameter", "body", "argument", "list", "expression",
                               "lambda", "arrow", "program", "translation_unit", "source_file", "declaration_list"})
    if (t.find(bad) != std::string_view::npos) return false;
  if (t == "module") return false;  // the root of a Python file
  for (std::string_view good : {"function", "method", "class", "struct", "impl", "namespace", "trait", "interface",
                                "enum", "mod_item", "type_declaration", "object_declaration", "union"})
    if (t.find(good) != std::string_view::npos) return true;
  return false;
}

std::string header_text(std::string_view line) {
  std::string_view l = text::utf8_prefix(line, k_max_header_bytes);
  while (!l.empty() && (l.back() == ' ' || l.back() == '\t')) l.remove_suffix(1);
  return std::string(l) + "\n";
}

// Appends the identifiers of `line` in order of appearance.
void identifiers_of(std::string_view line, std::vector<std::string_view>& out) {
  for (size_t i = 0; i < line.size();) {
    const char c = line[i];
    if (c == '"' || c == '\'' || c == '`') {  // skip string literals on the line
      size_t j = line.find(c, i + 1);
      i = j == std::string_view::npos ? line.size() : j + 1;
      continue;
    }
    if (is_ident_start(c) && (i == 0 || !is_ident_char(line[i - 1]))) {
      size_t j = i;
      while (j < line.size() && is_ident_char(line[j])) ++j;
      out.push_back(line.substr(i, j - i));
      i = j;
      continue;
    }
    ++i;
  }
}

}  // namespace

size_t prev_line_begin(std::string_view text, size_t begin) {
  if (begin == 0) return 0;
  size_t e = begin - 1;  // the previous line's terminator ends here
  if (e > 0 && text[e] == '\n' && text[e - 1] == '\r') --e;
  while (e > 0 && !text::is_line_break_char(text[e - 1])) --e;
  return e;
}

size_t next_line_begin(std::string_view text, size_t pos) {
  const text::line_break br = text::find_line_break(text, pos);
  return br.len ? br.pos + br.len : text.size();
}

std::string_view line_comment_of(std::string_view language_id, std::string_view uri) {
  std::string_view ext = uri.substr(std::min(uri.size(), uri.find_last_of('.') == std::string_view::npos
                                                             ? uri.size()
                                                             : uri.find_last_of('.') + 1));
  auto any = [](std::string_view x, std::initializer_list<std::string_view> l) {
    return std::find(l.begin(), l.end(), x) != l.end();
  };
  if (any(language_id, {"python", "shellscript", "ruby", "perl", "r", "yaml", "toml", "makefile", "cmake",
                        "dockerfile", "elixir", "julia", "nim", "powershell"}) ||
      any(ext, {"py", "pyi", "sh", "bash", "zsh", "rb", "pl", "r", "yaml", "yml", "toml", "cmake", "ex", "exs", "jl",
                "nim", "ps1", "mk"}))
    return "#";
  if (any(language_id, {"lua", "sql", "haskell", "ada", "elm"}) || any(ext, {"lua", "sql", "hs", "adb", "ads", "elm"}))
    return "--";
  if (any(language_id, {"lisp", "clojure", "scheme", "elisp"}) || any(ext, {"el", "lisp", "clj", "scm", "cljs"}))
    return ";";
  return "//";
}

std::string display_path(std::string_view uri, std::string_view current_uri) {
  auto strip = [](std::string_view u) {
    if (u.starts_with("file://")) u.remove_prefix(7);
    return u;
  };
  std::string_view p = strip(uri), cur = strip(current_uri);
  const size_t slash = cur.find_last_of('/');
  if (slash != std::string_view::npos && p.starts_with(cur.substr(0, slash + 1))) return std::string(p.substr(slash + 1));
  while (p.starts_with("/")) p.remove_prefix(1);
  return std::string(p);
}

std::vector<context_item> scope_items(const context_view& v, const context_sources& src) {
  std::vector<context_item> out;  // innermost first while gathering
  std::unordered_set<size_t> seen_lines;
  auto add = [&](std::string_view line_text, int64_t line) {
    if (line >= v.window_first_line || !seen_lines.insert(static_cast<size_t>(line)).second) return;
    out.push_back({"scope", std::string(v.uri) + ":" + std::to_string(line + 1), "", header_text(line_text)});
  };
  if (src.tree && !src.tree->doc().text.empty()) {
    const std::string_view t = src.tree->doc().text;
    // The tree's text may be a few edits old: the cursor is placed by line
    // there, and lines are counted from the cursor line (no scan from the start).
    const size_t off = text::offset_of_line_col(t, v.cursor_line, v.cursor_col);
    const size_t cur_begin = text::line_start_offset(t, v.cursor_line);
    for (const index::syntax_node& n : index::enclosing_nodes(*src.tree, off, 64)) {
      if (!is_scope_type(n.type) || (n.start_byte == 0 && n.end_byte >= t.size()) || n.start_byte > cur_begin) continue;
      size_t b = n.start_byte;
      while (b > 0 && !text::is_line_break_char(t[b - 1])) --b;
      const int64_t lines_up = text::line_col_of_offset(t.substr(b, cur_begin - b), cur_begin - b).line;
      add(line_from(t, b).content, v.cursor_line - lines_up);
    }
  } else {
    // Indentation: each line above the cursor indented less than everything
    // below it up to the cursor heads an enclosing scope.
    size_t b = v.cursor_line_begin;
    int64_t n = v.cursor_line;
    size_t level = indent_of(line_from(v.text, b).content);
    // On a blank cursor line, the scope is that of the nearest line above.
    while (level == std::string_view::npos && n > 0 && v.cursor_line - n < k_max_scan_lines) {
      b = prev_line_begin(v.text, b);
      --n;
      level = indent_of(line_from(v.text, b).content);
      if (level != std::string_view::npos) ++level;  // a line at the same indentation may head it
    }
    while (n > 0 && level > 0 && level != std::string_view::npos && v.cursor_line - n < k_max_scan_lines) {
      b = prev_line_begin(v.text, b);
      --n;
      const std::string_view c = line_from(v.text, b).content;
      const size_t ind = indent_of(c);
      if (ind == std::string_view::npos || ind >= level || !heads_scope(c)) continue;
      level = ind;
      add(c, n);
    }
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<std::string> identifiers_near_cursor(const context_view& v, int radius) {
  // Names the window defines.
  std::unordered_set<std::string_view> defined;
  const size_t wb = v.window_begin, we = v.window_end;
  for (size_t pos = wb; pos < we && pos < v.text.size();) {
    const text::line_break br = text::find_line_break(v.text, pos);
    const std::string_view line = v.text.substr(pos, (br.len ? br.pos : v.text.size()) - pos);
    std::vector<std::string_view> ids;
    identifiers_of(line, ids);
    for (size_t i = 0; i + 1 < ids.size(); ++i)
      if (definers().contains(ids[i])) defined.insert(ids[i + 1]);
    // `name =` (not `==`) at the start of a line: an assignment target.
    size_t b = line.find_first_not_of(" \t");
    if (!ids.empty() && b != std::string_view::npos && line.substr(b).starts_with(ids[0])) {
      std::string_view rest = line.substr(b + ids[0].size());
      size_t r = rest.find_first_not_of(" \t");
      if (r != std::string_view::npos && (rest.substr(r).starts_with(":=") ||
                                          (rest[r] == '=' && !rest.substr(r).starts_with("=="))))
        defined.insert(ids[0]);
    }
    if (!br.len) break;
    pos = br.pos + br.len;
  }
  // Lines around the cursor, nearest first: the cursor line, then alternately above and below.
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  auto take = [&](size_t begin) {
    std::vector<std::string_view> ids;
    identifiers_of(line_from(v.text, begin).content, ids);
    for (std::string_view id : ids) {
      if (id.size() < 2 || keywords().contains(id) || defined.contains(id)) continue;
      if (seen.insert(std::string(id)).second) out.emplace_back(id);
    }
  };
  take(v.cursor_line_begin);
  size_t up = v.cursor_line_begin, down = v.cursor_line_begin;
  for (int d = 1; d <= radius; ++d) {
    if (up > 0) take(up = prev_line_begin(v.text, up));
    if ((down = next_line_begin(v.text, down)) < v.text.size()) take(down);
  }
  return out;
}

std::vector<context_item> definition_items(const context_view& v, const context_sources& src, size_t max_items) {
  std::vector<context_item> out;
  if (!src.definitions) return out;
  // Files the current file imports.
  std::unordered_set<std::string> imported;
  for (const index::import_ref& imp : src.definitions->imports_of(v.uri)) {
    std::string f = src.definitions->resolve_import(v.uri, imp);
    if (!f.empty()) imported.insert(std::move(f));
  }
  std::unordered_set<std::string> keys;
  const std::string_view comment = line_comment_of(src.language_id, v.uri);
  for (const std::string& name : identifiers_near_cursor(v)) {
    if (out.size() >= max_items) break;
    std::vector<index::definition> defs = src.definitions->lookup(name, 8);
    std::stable_partition(defs.begin(), defs.end(), [&](const index::definition& d) { return imported.contains(d.uri); });
    for (const index::definition& d : defs) {
      // Visible already: in the window of this file.
      if (d.uri == v.uri && static_cast<int64_t>(d.line) >= v.window_first_line &&
          static_cast<int64_t>(d.line) < v.window_end_line)
        continue;
      if (d.signature.empty()) continue;
      context_item it{"definition", d.uri + ":" + std::to_string(d.line + 1), display_path(d.uri, v.uri), ""};
      if (!keys.insert(it.origin).second) continue;
      if (!d.doc.empty()) it.body.append(comment).append(" ").append(text::utf8_prefix(d.doc, 200)).append("\n");
      it.body.append(d.signature);
      if (!text::ends_with_line_break(it.body)) it.body.append("\n");
      out.push_back(std::move(it));
      break;  // the best definition of each name
    }
  }
  return out;
}

std::vector<context_item> recent_items(const context_view& v, const context_sources& src, size_t max_items) {
  std::vector<context_item> out;
  if (!src.recent) return out;
  for (const index::text_chunk& c : src.recent->recent()) {
    if (out.size() >= max_items) break;
    const int64_t first = c.first_line;
    const int64_t end = first + static_cast<int64_t>(text::split_lines(c.text).size());
    if (c.uri == v.uri && first < v.window_end_line && end > v.window_first_line) continue;  // in view
    out.push_back({"recent", c.uri + ":" + std::to_string(first + 1), display_path(c.uri, v.uri), c.text});
  }
  return out;
}

std::vector<context_item> edit_items(const context_view& v, const context_sources& src, size_t max_hunks) {
  std::vector<context_item> out;
  if (!src.edits) return out;
  std::vector<index::edit_hunk> hunks = src.edits->recent({}, max_hunks);
  std::erase_if(hunks, [&](const index::edit_hunk& h) {
    const int64_t first = h.line, end = h.line + static_cast<int64_t>(h.new_lines.size()) + 1;
    return h.uri == v.uri && first < v.window_end_line && end > v.window_first_line;  // the window shows it
  });
  // One item per file, files in order of their newest hunk, hunks by line.
  std::vector<std::string> files;
  for (const index::edit_hunk& h : hunks)
    if (std::find(files.begin(), files.end(), h.uri) == files.end()) files.push_back(h.uri);
  for (const std::string& f : files) {
    std::vector<index::edit_hunk> mine;
    for (const index::edit_hunk& h : hunks)
      if (h.uri == f) mine.push_back(h);
    std::sort(mine.begin(), mine.end(), [](const auto& a, const auto& b) { return a.line < b.line; });
    out.push_back({"edits", f, display_path(f, v.uri) + ".diff", index::render_unified_diff(mine)});
  }
  return out;
}

}  // namespace qf::server::completion
