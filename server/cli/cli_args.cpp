// Implementation of the tool subcommands' option parser (see cli_args.h).
#include "server/cli/cli_args.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace qf::cli {

bool parse_int(const std::string& s, int64_t& out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) return false;
  out = v;
  return true;
}

bool parse_float(const std::string& s, float& out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  float v = std::strtof(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size() || !std::isfinite(v)) return false;
  out = v;
  return true;
}

arg_parser::arg_parser(std::string command, std::string summary)
    : command_(std::move(command)), summary_(std::move(summary)) {}

void arg_parser::add_string(std::vector<std::string> names, std::string* out, std::string help, bool hidden) {
  options_.push_back({std::move(names), std::move(help), hidden, true, [out](const std::string& v) {
                        *out = v;
                        return true;
                      }});
}

void arg_parser::add_strings(std::vector<std::string> names, std::vector<std::string>* out, std::string help) {
  options_.push_back({std::move(names), std::move(help), false, true, [out](const std::string& v) {
                        out->push_back(v);
                        return true;
                      }});
}

void arg_parser::add_int(std::vector<std::string> names, int64_t* out, std::string help, bool hidden) {
  options_.push_back({std::move(names), std::move(help), hidden, true,
                      [out](const std::string& v) { return parse_int(v, *out); }});
}

void arg_parser::add_int(std::vector<std::string> names, int* out, std::string help, bool hidden) {
  options_.push_back({std::move(names), std::move(help), hidden, true, [out](const std::string& v) {
                        int64_t x = 0;
                        if (!parse_int(v, x) || x < std::numeric_limits<int>::min() ||
                            x > std::numeric_limits<int>::max())
                          return false;
                        *out = static_cast<int>(x);
                        return true;
                      }});
}

void arg_parser::add_u64(std::vector<std::string> names, uint64_t* out, std::string help, bool hidden) {
  options_.push_back({std::move(names), std::move(help), hidden, true, [out](const std::string& v) {
                        if (v.empty() || v[0] == '-') return false;
                        errno = 0;
                        char* end = nullptr;
                        unsigned long long x = std::strtoull(v.c_str(), &end, 10);
                        if (errno != 0 || end != v.c_str() + v.size()) return false;
                        *out = x;
                        return true;
                      }});
}

void arg_parser::add_float(std::vector<std::string> names, float* out, std::string help, bool hidden) {
  options_.push_back({std::move(names), std::move(help), hidden, true,
                      [out](const std::string& v) { return parse_float(v, *out); }});
}

void arg_parser::add_flag(std::vector<std::string> names, bool* out, std::string help, bool hidden) {
  options_.push_back({std::move(names), std::move(help), hidden, false, [out](const std::string&) {
                        *out = true;
                        return true;
                      }});
}

void arg_parser::add_positional(std::string name, std::string* out, std::string help, bool required) {
  positionals_.push_back({std::move(name), std::move(help), out, required});
}

const arg_parser::option* arg_parser::find(const std::string& name) const {
  for (const auto& o : options_)
    for (const auto& n : o.names)
      if (n == name) return &o;
  return nullptr;
}

bool arg_parser::fail(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n(see '%s --help')\n", command_.c_str(), message.c_str(), command_.c_str());
  exit_code_ = 2;
  return false;
}

std::string arg_parser::usage() const {
  std::string u = "usage: " + command_;
  for (const auto& p : positionals_) u += p.required ? " " + p.name : " [" + p.name + "]";
  if (!options_.empty()) u += " [options]";
  u += "\n" + summary_ + "\n";
  for (const auto& p : positionals_) u += "  " + p.name + "\n      " + p.help + "\n";
  for (const auto& o : options_) {
    if (o.hidden) continue;
    std::string names;
    for (const auto& n : o.names) names += (names.empty() ? "" : ", ") + n;
    u += "  " + names + (o.takes_value ? " VALUE" : "") + "\n      " + o.help + "\n";
  }
  return u;
}

bool arg_parser::parse(std::span<char*> args) {
  size_t next_positional = 0;
  bool only_positionals = false;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string a = args[i] ? args[i] : "";
    if (!only_positionals && a == "--") {
      only_positionals = true;
      continue;
    }
    if (!only_positionals && (a == "-h" || a == "--help")) {
      std::fputs(usage().c_str(), stdout);
      exit_code_ = 0;
      return false;
    }
    // "-" alone and negative numbers are values, not options.
    bool looks_like_option = !only_positionals && a.size() > 1 && a[0] == '-' &&
                             !(a[1] >= '0' && a[1] <= '9') && a[1] != '.';
    if (looks_like_option) {
      std::string name = a, value;
      bool inline_value = false;
      if (a.rfind("--", 0) == 0) {
        auto eq = a.find('=');
        if (eq != std::string::npos) {
          name = a.substr(0, eq);
          value = a.substr(eq + 1);
          inline_value = true;
        }
      }
      const option* o = find(name);
      if (!o) return fail("unknown option '" + name + "'");
      if (o->takes_value) {
        if (!inline_value) {
          if (i + 1 >= args.size()) return fail("option '" + name + "' needs a value");
          value = args[++i];
        }
      } else if (inline_value) {
        return fail("option '" + name + "' takes no value");
      }
      if (!o->set(value)) return fail("bad value '" + value + "' for option '" + name + "'");
      continue;
    }
    if (next_positional >= positionals_.size()) return fail("unexpected argument '" + a + "'");
    *positionals_[next_positional++].out = a;
  }
  for (size_t p = next_positional; p < positionals_.size(); ++p)
    if (positionals_[p].required) return fail("missing argument " + positionals_[p].name);
  return true;
}

int run_subcommand(std::span<char*> args, const char* command, const char* usage,
                   std::span<const subcommand> subcommands) {
  if (args.size() < 2 || std::strcmp(args[1], "-h") == 0 || std::strcmp(args[1], "--help") == 0) {
    std::fputs(usage, args.size() < 2 ? stderr : stdout);
    return args.size() < 2 ? 2 : 0;
  }
  auto sub = args.subspan(1);
  for (const subcommand& c : subcommands)
    if (std::strcmp(sub[0], c.name) == 0) return c.run(sub);
  std::fprintf(stderr, "%s: unknown subcommand '%s'\n%s", command, sub[0], usage);
  return 2;
}

}  // namespace qf::cli
