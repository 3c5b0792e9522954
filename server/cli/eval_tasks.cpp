// HumanEval-infilling tasks (see the header).
#include "server/cli/eval_tasks.h"

#include <sys/wait.h>

#include <cctype>
#include <cstdio>
#include <filesystem>

#include <boost/json.hpp>

namespace qf::cli {
namespace {

namespace json = boost::json;

// The string member `key` of `o`; false when it is absent or not a string.
bool member(const json::object& o, const char* key, std::string& out) {
  const json::value* v = o.if_contains(key);
  if (!v || !v->is_string()) return false;
  out = std::string(v->get_string());
  return true;
}

// "SingleLineInfilling/HumanEval/0/L0" -> "HumanEval_0_L0": a file name for the document.
std::string file_stem(const std::string& id) {
  std::string s = id;
  if (const size_t slash = s.find('/'); slash != std::string::npos) s = s.substr(slash + 1);
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

}  // namespace

std::string humaneval_file(const std::string& benchmark) {
  if (benchmark == "humaneval-single") return "HumanEval-SingleLineInfilling.jsonl.gz";
  if (benchmark == "humaneval-multi") return "HumanEval-MultiLineInfilling.jsonl.gz";
  if (benchmark == "humaneval-span") return "HumanEval-RandomSpanInfillingLight.jsonl.gz";
  return "";
}

hole_position hole_of(const eval_task& t) {
  hole_position h;
  size_t line_start = 0;
  for (size_t i = 0; i < t.prompt.size(); ++i)
    if (t.prompt[i] == '\n') {
      ++h.line;
      line_start = i + 1;
    }
  h.col = static_cast<int64_t>(t.prompt.size() - line_start);
  return h;
}

bool load_humaneval(const std::string& path, const std::string& benchmark, int limit, std::vector<eval_task>& out,
                    std::string* error) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    *error = "no such file: " + path;
    return false;
  }
  std::string quoted = "'";
  for (char c : path) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  FILE* p = ::popen(("gzip -dc " + quoted + " 2>/dev/null").c_str(), "r");
  if (!p) {
    *error = "cannot run gzip to read " + path;
    return false;
  }
  std::string line;
  char buf[65536];
  size_t line_no = 0;
  bool ok = true;
  auto take = [&] {
    if (line.empty() || !ok) return;
    ++line_no;
    json::error_code jec;
    json::value v = json::parse(line, jec);
    line.clear();
    eval_task t;
    const json::object* o = !jec && v.is_object() ? &v.get_object() : nullptr;
    if (!o || !member(*o, "task_id", t.id) || !member(*o, "prompt", t.prompt) || !member(*o, "suffix", t.suffix) ||
        !member(*o, "canonical_solution", t.middle) || !member(*o, "test", t.test) ||
        !member(*o, "entry_point", t.entry_point)) {
      *error = path + ": line " + std::to_string(line_no) +
               " is not a HumanEval-infilling task (task_id, prompt, suffix, canonical_solution, test, entry_point)";
      ok = false;
      return;
    }
    t.uri = "file:///humaneval/" + file_stem(t.id) + ".py";
    t.language = "python";
    t.kind = benchmark;
    out.push_back(std::move(t));
  };
  while (ok && std::fgets(buf, sizeof buf, p)) {
    line += buf;
    if (!line.empty() && line.back() == '\n') take();
    if (limit > 0 && static_cast<int>(out.size()) >= limit) break;
  }
  take();
  const int status = ::pclose(p);
  if (!ok) return false;
  if (out.empty()) {
    *error = "no tasks read from " + path +
             (WIFEXITED(status) && WEXITSTATUS(status) != 0 ? " (gzip failed: not a gzip file?)" : "");
    return false;
  }
  return true;
}

}  // namespace qf::cli
