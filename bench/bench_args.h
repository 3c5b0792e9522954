// The command line of the benchmark drivers: "--name value" options read in
// order by the driver's own if/else chain, with the value of each read,
// checked and converted here. A missing or malformed value is a clear error
// naming the option (exit status 2); an argument no option matches ends the
// chain with the driver's usage, and status 0 when it was --help or -h.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace qf::bench {

// The non-empty items of a comma-separated list ("a,b,,c": a, b, c).
inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

//   qf::bench::arg_reader args("soak", argc, argv);
//   while (args.next()) {
//     if (args.is("--minutes")) o.minutes = args.double_value();
//     else if (args.is("--log")) o.log = args.value();
//     else return usage(), args.usage_status();
//   }
class arg_reader {
 public:
  arg_reader(const char* prog, int argc, char** argv) : prog_(prog), argc_(argc), argv_(argv) {}

  // Moves to the next argument; false after the last.
  bool next() {
    if (i_ + 1 >= argc_) return false;
    name_ = argv_[++i_];
    return true;
  }
  const std::string& name() const { return name_; }
  bool is(const char* option) const { return name_ == option; }

  // The current option's value: the argument after it, consumed.
  std::string value() {
    if (i_ + 1 >= argc_) fail("needs a value");
    return argv_[++i_];
  }
  int int_value() {
    const std::string v = value();
    int out = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc() || end != v.data() + v.size() || v.empty()) fail("'" + v + "' is not a whole number");
    return out;
  }
  unsigned unsigned_value() {
    const int v = int_value();
    if (v < 0) fail("must not be negative");
    return static_cast<unsigned>(v);
  }
  double double_value() {
    const std::string v = value();
    char* end = nullptr;
    const double out = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(out)) fail("'" + v + "' is not a finite number");
    return out;
  }
  std::vector<std::string> list_value() { return split_list(value()); }  // a,b,c
  std::vector<int> int_list_value() {                                    // 1,2,4
    std::vector<int> out;
    for (const std::string& item : list_value()) {
      int v = 0;
      const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
      if (ec != std::errc() || end != item.data() + item.size()) fail("'" + item + "' is not a whole number");
      out.push_back(v);
    }
    return out;
  }

  // What main returns after printing its usage for an argument no option
  // matched: 0 when it was asked for (--help, -h), else 2.
  int usage_status() const { return is("--help") || is("-h") ? 0 : 2; }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    std::fprintf(stderr, "%s: %s %s\n", prog_, name_.c_str(), why.c_str());
    std::exit(2);
  }

  const char* prog_;
  int argc_;
  char** argv_;
  int i_ = 0;
  std::string name_;
};

}  // namespace qf::bench
