// Repository FIM points (see the header).
#include "server/cli/eval_repo.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <random>

#include "indexing/file_uri.h"
#include "text/utf8.h"
#include "server/core/privacy_filter.h"

namespace qf::cli {
namespace {

namespace fs = std::filesystem;

struct source_file {
  std::string path, rel, language, text;
  std::vector<size_t> starts;  // line starts
};

bool skipped_dir(const std::string& name) {
  return name.empty() || name[0] == '.' || name == "node_modules" || name == "build" || name == "dist" ||
         name == "target" || name == "vendor" || name == "third_party" || name == "__pycache__" || name == "venv";
}

bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

size_t indent_of(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  return i;
}

std::string_view line_at(const source_file& f, size_t i) {
  const size_t b = f.starts[i];
  const size_t e = i + 1 < f.starts.size() ? f.starts[i + 1] - 1 : f.text.size();
  return std::string_view(f.text).substr(b, e - b);
}

bool blank(std::string_view l) { return l.find_first_not_of(" \t\r") == std::string_view::npos; }

eval_task make_point(const source_file& f, size_t b, size_t e, const std::string& kind, size_t line) {
  eval_task t;
  t.id = "repo:" + f.rel + ":" + std::to_string(line + 1) + ":" + kind;
  t.uri = index::path_to_file_uri(f.path);
  t.language = f.language;
  t.prompt = f.text.substr(0, b);
  t.middle = f.text.substr(b, e - b);
  t.suffix = f.text.substr(e);
  t.kind = kind;
  return t;
}

// A line completion point in line i, or false.
bool line_point(const source_file& f, size_t i, std::mt19937_64& rng, eval_task& out) {
  const std::string_view l = line_at(f, i);
  const size_t ind = indent_of(l);
  std::string_view code = l.substr(ind);
  while (!code.empty() && (code.back() == '\r' || code.back() == ' ')) code.remove_suffix(1);
  if (code.size() < 8) return false;
  size_t col = ind;
  if (rng() % 2) {
    std::vector<size_t> cuts;  // token boundaries in the first half
    for (size_t k = 1; k < code.size() / 2; ++k)
      if (!(is_ident(code[k - 1]) && is_ident(code[k]))) cuts.push_back(ind + k);
    if (!cuts.empty()) col = cuts[rng() % cuts.size()];
  }
  const size_t b = f.starts[i] + col, e = f.starts[i] + ind + code.size();
  if (e <= b) return false;
  out = make_point(f, b, e, "line", i);
  return true;
}

bool span_point(const source_file& f, size_t i, std::mt19937_64& rng, eval_task& out) {
  const std::string_view l = line_at(f, i);
  if (blank(l)) return false;
  const size_t ind = indent_of(l);
  const size_t b = f.starts[i] + ind + rng() % std::max<size_t>(1, l.size() - ind);
  size_t e = std::min(f.text.size(), b + 8 + rng() % 153);
  while (e < f.text.size() && (static_cast<unsigned char>(f.text[e]) & 0xC0) == 0x80) ++e;  // whole characters
  if (e <= b || blank(std::string_view(f.text).substr(b, e - b))) return false;
  out = make_point(f, b, e, "span", i);
  return true;
}

bool is_function_header(std::string_view l, const std::string& language) {
  std::string_view s = l;
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  if (s.empty()) return false;
  const std::string_view code = s.substr(indent_of(s));
  if (language == "python") return (code.starts_with("def ") || code.starts_with("async def ")) && s.back() == ':';
  if (s.back() != '{' || s.find('(') == std::string_view::npos) return false;
  for (std::string_view kw : {"if ", "if(", "for ", "for(", "while ", "while(", "switch", "else", "do ", "try", "catch"})
    if (code.starts_with(kw)) return false;
  return !code.starts_with("}");
}

bool body_point(const source_file& f, size_t i, eval_task& out) {
  if (!is_function_header(line_at(f, i), f.language) || i + 1 >= f.starts.size()) return false;
  const size_t ind = indent_of(line_at(f, i));
  size_t j = i + 1;
  for (; j < f.starts.size(); ++j) {
    const std::string_view l = line_at(f, j);
    if (blank(l)) continue;
    if (indent_of(l) <= ind) break;
  }
  size_t last = j;  // one past the body's last line
  while (last > i + 1 && blank(line_at(f, last - 1))) --last;
  const size_t lines = last - (i + 1);
  if (lines < 2 || lines > 30 || j >= f.starts.size() + 1) return false;
  if (f.language != "python" && (j >= f.starts.size() || line_at(f, j).substr(indent_of(line_at(f, j))).rfind("}", 0) != 0))
    return false;  // a brace body ends at a `}` line at the header's indentation
  const size_t b = f.starts[i + 1];
  const size_t e = last < f.starts.size() ? f.starts[last] : f.text.size();
  out = make_point(f, b, e, "body", i + 1);
  return true;
}

}  // namespace

std::string repo_language(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  if (ext == ".py") return "python";
  if (ext == ".js" || ext == ".mjs" || ext == ".cjs") return "javascript";
  if (ext == ".ts") return "typescript";
  if (ext == ".tsx") return "typescriptreact";
  if (ext == ".c" || ext == ".h") return "c";
  if (ext == ".cc" || ext == ".cpp" || ext == ".cxx" || ext == ".hpp" || ext == ".hh") return "cpp";
  if (ext == ".go") return "go";
  if (ext == ".rs") return "rust";
  if (ext == ".java") return "java";
  return "";
}

bool pick_repo_points(const std::string& dir, int points, uint64_t seed, std::vector<eval_task>& out,
                      std::string* error) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    *error = dir + " is not a directory";
    return false;
  }
  const std::string root = fs::absolute(dir).lexically_normal().string();
  const char* home = std::getenv("HOME");
  const server::privacy_filter privacy(server::privacy_settings{}, {root}, home ? home : "");
  std::vector<source_file> files;
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec)) {
      if (skipped_dir(it->path().filename().string())) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec) || it->is_symlink(ec) || it->file_size(ec) > 256 * 1024) continue;
    source_file f;
    f.path = it->path().string();
    f.language = repo_language(f.path);
    if (f.language.empty() || !privacy.why_private_path(f.path, f.language).empty()) continue;
    std::ifstream in(f.path, std::ios::binary);
    f.text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (f.text.empty() || f.text.find('\0') != std::string::npos || !text::is_valid_utf8(f.text)) continue;
    f.rel = fs::path(f.path).lexically_relative(root).string();
    f.starts.push_back(0);
    for (size_t i = 0; i < f.text.size(); ++i)
      if (f.text[i] == '\n' && i + 1 < f.text.size()) f.starts.push_back(i + 1);
    files.push_back(std::move(f));
    if (files.size() >= 20000) break;
  }
  if (files.empty()) {
    *error = "no source files found under " + dir + " (python, javascript, typescript, c, cpp, go, rust, java)";
    return false;
  }
  std::sort(files.begin(), files.end(), [](const source_file& a, const source_file& b) { return a.rel < b.rel; });
  std::mt19937_64 rng(seed);
  const char* kinds[] = {"line", "span", "body"};
  int misses = 0;
  std::vector<std::string> taken;
  while (static_cast<int>(out.size()) < points && misses < points * 200) {
    const source_file& f = files[rng() % files.size()];
    const std::string kind = kinds[(out.size() + misses) % 3];  // in turn; a kind a file lacks passes its turn
    bool found = false;
    eval_task t;
    for (int tries = 0; tries < 40 && !found; ++tries) {
      const size_t i = rng() % f.starts.size();
      found = kind == "line" ? line_point(f, i, rng, t) : kind == "span" ? span_point(f, i, rng, t) : body_point(f, i, t);
      if (found && std::find(taken.begin(), taken.end(), t.id) != taken.end()) found = false;
    }
    if (!found) {
      ++misses;
      continue;
    }
    taken.push_back(t.id);
    out.push_back(std::move(t));
  }
  if (out.empty()) {
    *error = "no completion points found in the source files under " + dir;
    return false;
  }
  return true;
}

}  // namespace qf::cli
