// A small command-line option parser shared by the tool subcommands (run,
// perplexity, bench, gguf ...).
//
// Options are registered with a pointer to the variable they fill; parse()
// walks argv once, accepts "-x VALUE", "--long VALUE" and "--long=VALUE", fills
// positionals in order and reports the first problem (unknown option, missing
// or malformed value, missing positional) as a one-line message. "-h/--help"
// prints the generated usage. Hidden options (test hooks) are accepted but not
// listed in the usage.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace qf::cli {

class arg_parser {
 public:
  // `command` is shown in messages ("quickfill run"), `summary` under the usage line.
  arg_parser(std::string command, std::string summary);

  void add_string(std::vector<std::string> names, std::string* out, std::string help, bool hidden = false);
  // Repeatable: each use appends its value.
  void add_strings(std::vector<std::string> names, std::vector<std::string>* out, std::string help);
  void add_int(std::vector<std::string> names, int64_t* out, std::string help, bool hidden = false);
  void add_int(std::vector<std::string> names, int* out, std::string help, bool hidden = false);
  void add_u64(std::vector<std::string> names, uint64_t* out, std::string help, bool hidden = false);
  void add_float(std::vector<std::string> names, float* out, std::string help, bool hidden = false);
  void add_flag(std::vector<std::string> names, bool* out, std::string help, bool hidden = false);
  // Positionals are filled in registration order; optional ones must come last.
  void add_positional(std::string name, std::string* out, std::string help, bool required = true);

  // args[0] is the subcommand name and is skipped. Returns true when the
  // command should proceed; otherwise exit_code() is 0 (help was printed) or 2
  // (an error was printed to stderr).
  bool parse(std::span<char*> args);
  int exit_code() const { return exit_code_; }
  std::string usage() const;

 private:
  struct option {
    std::vector<std::string> names;
    std::string help;
    bool hidden = false;
    bool takes_value = true;
    std::function<bool(const std::string&)> set;  // false: malformed value
  };
  struct positional {
    std::string name, help;
    std::string* out = nullptr;
    bool required = true;
  };
  const option* find(const std::string& name) const;
  bool fail(const std::string& message);

  std::string command_, summary_;
  std::vector<option> options_;
  std::vector<positional> positionals_;
  int exit_code_ = 0;
};

// A subcommand of a command group (`quickfill gguf info ...`): its name and
// the function that runs it with the arguments from its name on.
struct subcommand {
  const char* name;
  int (*run)(std::span<char*> args);
};
// Runs the subcommand args[1] names; without one, -h/--help prints `usage`
// (stdout, 0; nothing at all: stderr, 2); an unknown one is an error naming
// it, then `usage` (2). `command` is shown in messages ("quickfill gguf").
int run_subcommand(std::span<char*> args, const char* command, const char* usage,
                   std::span<const subcommand> subcommands);

// Parses a whole string as a number; false on trailing garbage or overflow.
bool parse_int(const std::string& s, int64_t& out);
bool parse_float(const std::string& s, float& out);

}  // namespace qf::cli
