// `quickfill settings --markdown [--update FILE]`: the settings reference
// rendered from the schema (server/core/settings.h). Without --update it prints the
// block; with it, FILE's block between the reference markers is replaced
// (written to FILE.tmp, then renamed over FILE). docs/configuration.md is kept
// this way, and a test fails when it differs from the schema.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "server/cli/commands.h"
#include "server/core/settings.h"

namespace qf::cli {

namespace {

constexpr const char* usage =
    "usage: quickfill settings --markdown [--update FILE]\n"
    "  print the settings reference (every key of the quickfill settings object with its\n"
    "  type, default, accepted values and meaning) as markdown; with --update, replace the\n"
    "  reference in FILE (e.g. docs/configuration.md) between its markers instead\n";

int update_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "quickfill settings: cannot read %s\n", path.c_str());
    return 1;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const std::size_t b = text.find(server::settings_doc_begin);
  const std::size_t e = b == std::string::npos ? b : text.find(server::settings_doc_end, b);
  if (e == std::string::npos) {
    std::fprintf(stderr, "quickfill settings: %s has no settings reference markers\n", path.c_str());
    return 1;
  }
  std::size_t end = e + server::settings_doc_end.size();
  if (end < text.size() && text[end] == '\n') ++end;
  const std::string out = text.substr(0, b) + server::render_settings_markdown() + text.substr(end);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
    o << out;
    if (!o.flush()) {
      std::fprintf(stderr, "quickfill settings: cannot write %s\n", tmp.c_str());
      return 1;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::fprintf(stderr, "quickfill settings: cannot replace %s: %s\n", path.c_str(), ec.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int cmd_settings(std::span<char*> args) {
  bool markdown = false;
  std::string update;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (std::strcmp(args[i], "--markdown") == 0) {
      markdown = true;
    } else if (std::strcmp(args[i], "--update") == 0 && i + 1 < args.size()) {
      update = args[++i];
    } else if (std::strcmp(args[i], "-h") == 0 || std::strcmp(args[i], "--help") == 0) {
      std::fputs(usage, stdout);
      return 0;
    } else {
      std::fprintf(stderr, "quickfill settings: unexpected argument '%s'\n%s", args[i], usage);
      return 2;
    }
  }
  if (!markdown) {
    std::fputs(usage, stderr);
    return 2;
  }
  if (!update.empty()) return update_file(update);
  std::fputs(server::render_settings_markdown().c_str(), stdout);
  return 0;
}

}  // namespace qf::cli
