// `quickfill demo`: its command line and the sample it types (see demo.h).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "text/utf8.h"
#include "server/cli/demo.h"
#include "server/core/model_locator.h"

namespace qf::cli::demo {

namespace fs = std::filesystem;

const char* const usage =
    "usage: quickfill demo [--model PATH] [--chars N] [--interval-ms N] [--inline] [--log-file PATH] [FILE]\n"
    "  Types the first N characters (default 300) of FILE (default: a sample from examples/)\n"
    "  into the real server, one keystroke every --interval-ms (default 150), with a\n"
    "  completion request per keystroke, and prints the answers and their latency.\n";

bool parse_args(std::span<char*> args, options& o) {
  for (std::size_t i = 1; i < args.size(); ++i) {
    std::string a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw std::runtime_error(a + " needs a value");
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      std::fputs(usage, stdout);
      return false;
    } else if (a == "--model") {
      o.model = value();
    } else if (a == "--chars") {
      o.chars = std::stoul(value());
    } else if (a == "--interval-ms") {
      o.interval_ms = std::stoi(value());
    } else if (a == "--log-file") {
      o.log_file = value();
    } else if (a == "--inline") {
      o.inline_mode = true;
    } else if (!a.empty() && a[0] == '-') {
      throw std::runtime_error("unknown option " + a);
    } else {
      o.file = a;
    }
  }
  return true;
}

namespace {

std::string find_sample() {
  std::vector<fs::path> dirs;
  const std::string exe_dir = server::executable_dir();
  if (!exe_dir.empty()) dirs.push_back(fs::path(exe_dir) / ".." / "share" / "quickfill" / "examples");
#ifdef QUICKFILL_SOURCE_DIR
  dirs.push_back(fs::path(QUICKFILL_SOURCE_DIR) / "examples");
#endif
  for (const auto& d : dirs) {
    std::error_code ec;
    fs::path p = (d / "sample.py").lexically_normal();
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return {};
}

}  // namespace

bool load_sample(options& o, sample& s) {
  if (o.file.empty()) o.file = find_sample();
  if (o.file.empty()) {
    std::fprintf(stderr, "quickfill demo: no sample file found; pass FILE\n");
    return false;
  }
  std::ifstream in(o.file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "quickfill demo: cannot read %s\n", o.file.c_str());
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  s.content = ss.str();
  // Type whole UTF-8 characters: cut at a character boundary.
  s.typed_bytes = 0;
  s.typed_chars = 0;
  while (s.typed_bytes < s.content.size() && s.typed_chars < o.chars) {
    s.typed_bytes += utf8_len(static_cast<unsigned char>(s.content[s.typed_bytes]));
    ++s.typed_chars;
  }
  s.typed_bytes = std::min(s.typed_bytes, s.content.size());
  return true;
}

std::string language_of(const std::string& path) {
  static const std::map<std::string, std::string> ids = {
      {".py", "python"}, {".c", "c"}, {".h", "c"}, {".cpp", "cpp"}, {".cc", "cpp"}, {".hpp", "cpp"},
      {".rs", "rust"}, {".go", "go"}, {".js", "javascript"}, {".ts", "typescript"}, {".lua", "lua"},
      {".java", "java"}, {".sh", "shellscript"}};
  auto it = ids.find(fs::path(path).extension().string());
  return it == ids.end() ? "plaintext" : it->second;
}

std::size_t utf8_len(unsigned char c) {
  if (c >= 0xF0) return 4;
  if (c >= 0xE0) return 3;
  if (c >= 0xC0) return 2;
  return 1;
}

std::string printable(std::string s, std::size_t max) {
  std::string out;
  for (char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else out += c;
  }
  return out.size() > max ? text::utf8_shorten(out, max) : out;
}

}  // namespace qf::cli::demo
