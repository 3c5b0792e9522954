// Shared by the HTTP endpoint's tests: a real curl as the HTTP client (what
// llama.vim itself runs), the started `quickfill serve`, and bodies shaped
// like llama.vim's requests (autoload/llama.vim, llama#fim and the ring
// warm-up).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "tests/quickfill_serve.h"

namespace qf::http::testing {

struct reply {
  int status = 0;
  std::string body;
  std::string headers;
  boost::json::value json() const {
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(body, ec);
    return ec ? boost::json::value(nullptr) : v;
  }
};

inline std::string test_dir(const std::string& tag) {
  const auto d = std::filesystem::temp_directory_path() /
                 ("qf_http_" + tag + "_" + std::to_string(::getpid()) + "_" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d.string();
}

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// curl `url` (POST `body` when `post`), with extra request headers.
inline reply curl(const std::string& dir, const std::string& url, bool post = false, const std::string& body = "",
                  const std::vector<std::string>& headers = {}) {
  const std::string in = dir + "/curl_in", out = dir + "/curl_out", hdr = dir + "/curl_headers";
  std::filesystem::remove(out);
  std::filesystem::remove(hdr);
  std::string cmd = "curl -sS --max-time 120 -o " + shell_quote(out) + " -D " + shell_quote(hdr) + " -w '%{http_code}'";
  if (post) {
    std::ofstream(in, std::ios::binary) << body;
    // Appended piece by piece: GCC 12 warns, falsely, about `"literal" + std::string` (-Wrestrict).
    cmd.append(" -X POST -H 'Content-Type: application/json' --data-binary @").append(shell_quote(in));
  }
  for (const auto& h : headers) cmd.append(" -H ").append(shell_quote(h));
  cmd.append(" ").append(shell_quote(url)).append(" 2>&1");
  reply r;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[256];
    std::string printed;
    while (std::fgets(buf, sizeof buf, p)) printed += buf;
    ::pclose(p);
    r.status = std::atoi(printed.c_str());
  }
  r.body = qf::test::file_text(out);
  r.headers = qf::test::file_text(hdr);
  return r;
}

// A request as llama#fim builds it (its fields and values, the text ours).
inline boost::json::object llama_vim_fim(const std::string& prefix, const std::string& middle, const std::string& suffix,
                                         int n_predict = 16) {
  namespace json = boost::json;
  return json::object{
      {"id_slot", 0},
      {"input_prefix", prefix},
      {"input_suffix", suffix},
      {"input_extra", json::array{json::object{{"text", "def helper(x):\n    return x * 2\n"}, {"time", 0}, {"filename", "util.py"}}}},
      {"prompt", middle},
      {"n_predict", n_predict},
      {"stop", json::array{}},
      {"n_indent", 4},
      {"top_k", 40},
      {"top_p", 0.90},
      {"samplers", json::array{"top_k", "top_p", "infill"}},
      {"stream", false},
      {"cache_prompt", true},
      {"t_max_prompt_ms", 500},
      {"t_max_predict_ms", 1000},
      {"response_fields", json::array{"content", "timings/prompt_n", "timings/prompt_ms", "timings/prompt_per_token_ms",
                                      "timings/prompt_per_second", "timings/predicted_n", "timings/predicted_ms",
                                      "timings/predicted_per_token_ms", "timings/predicted_per_second", "truncated",
                                      "tokens_cached"}}};
}

}  // namespace qf::http::testing
