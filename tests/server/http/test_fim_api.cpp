// The endpoint's pure parts: which buffer a request continues (one client
// typing on keeps its buffer, two clients in one file at different places do
// not share, keys scope buffers, the least recently used is reused when all
// are taken), the stop strings and n_indent, and response_fields.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "server/http/fim_api.h"
#include "server/http/fim_mapping.h"

using namespace qf::http;

namespace {

const std::string file =
    "import os\n\n\ndef first(a):\n    return a + 1\n\n\n"
    "def middle(values):\n    total = 0\n    for v in values:\n        total += v * v\n    return total\n\n\n"
    "def second(b):\n    return b * 2\n";

// The file while typing at byte `pos`: the rest of that line not there yet.
std::string typed_at(std::size_t pos) {
  const std::size_t eol = file.find('\n', pos);
  return file.substr(0, pos) + file.substr(eol);
}

}  // namespace

TEST(BufferPool, TypingOnKeepsTheBuffer) {
  buffer_pool pool(4);
  const std::size_t at = file.find("a + 1");
  const std::string k = pool.choose("k0", typed_at(at), at);
  for (std::size_t i = 1; i <= 5; ++i) EXPECT_EQ(pool.choose("k0", typed_at(at + i), at + i), k) << i;
  EXPECT_EQ(pool.size(), 1u);
}

TEST(BufferPool, TwoClientsInOneFileKeepTheirOwn) {
  buffer_pool pool(4);
  const std::size_t a = file.find("a + 1"), b = file.find("b * 2");
  const std::string ka = pool.choose("k0", typed_at(a), a);
  const std::string kb = pool.choose("k0", typed_at(b), b);
  EXPECT_NE(ka, kb);
  // One finishing its line makes its text the other's plus that line's end:
  // one short edit, but far from its cursor, so not the other's buffer.
  const std::size_t eol = file.find('\n', b);
  EXPECT_NE(pool.choose("k0", file, eol), ka);
  // Both type on, interleaved: each stays with its own buffer.
  for (std::size_t i = 1; i <= 3; ++i) {
    EXPECT_EQ(pool.choose("k0", typed_at(a + i), a + i), ka) << i;
    EXPECT_EQ(pool.choose("k0", typed_at(b + i), b + i), kb) << i;
  }
}

TEST(BufferPool, KeysScopeBuffersAndTheOldestIsReused) {
  buffer_pool pool(2);
  const std::string k0 = pool.choose("k0", file, 10);
  const std::string k1 = pool.choose("k1", file, 10);
  EXPECT_NE(k0, k1) << "another key's client never shares a buffer";
  EXPECT_EQ(pool.choose("k0", file, 10), k0);
  const std::string k2 = pool.choose("k0", std::string(2000, 'x'), 10);
  EXPECT_NE(k2, k0);
  EXPECT_NE(k2, k1);
  EXPECT_EQ(pool.size(), 2u);
  // k1's buffer was the least recently used: k2 took it; k0's is still there.
  EXPECT_EQ(pool.choose("k0", file, 10), k0);
  const std::string k1_again = pool.choose("k1", file, 10);
  EXPECT_NE(k1_again, k1) << "k1's buffer was given away";
  EXPECT_EQ(pool.size(), 2u) << "the pool never grows past its capacity";
}

TEST(FimApi, StopsAndIndent) {
  fim_request q;
  q.stop = {"\n\n"};
  fim_answer a;
  a.content = "x = 1\n\ny = 2";
  apply_stops(q, a);
  EXPECT_EQ(a.content, "x = 1");
  EXPECT_EQ(a.stop_type, "word");
  EXPECT_EQ(a.stopping_word, "\n\n");

  fim_request q2;
  q2.n_indent = 4;
  fim_answer b;
  b.content = "total += x\n        more()\n\n    done()\nback_at_zero()";
  apply_stops(q2, b);
  EXPECT_EQ(b.content, "total += x\n        more()\n\n    done()") << "a line indented less than n_indent ends it";
}

TEST(FimApi, ResponseFieldsByPath) {
  std::string err;
  auto q = parse_infill(R"({"input_prefix": "a", "response_fields": ["content", "timings/prompt_n", "nope/x"]})", &err);
  ASSERT_TRUE(q) << err;
  fim_answer a;
  a.content = "b";
  a.prompt_n = 7;
  const boost::json::object o = infill_answer_json(*q, a);
  EXPECT_EQ(o.size(), 2u) << boost::json::serialize(o);
  EXPECT_EQ(o.at("content").as_string(), "b");
  EXPECT_EQ(o.at("timings/prompt_n").to_number<int>(), 7);
}

TEST(FimApi, OpenAIPromptArrayAndN) {
  std::string err;
  auto q = parse_openai_completion(R"({"prompt": ["def f("], "suffix": ")\n", "max_tokens": 5, "n": 1})", &err);
  ASSERT_TRUE(q) << err;
  EXPECT_EQ(q->prefix, "def f(");
  EXPECT_EQ(q->suffix, ")\n");
  EXPECT_EQ(q->n_predict, 5);
  EXPECT_FALSE(parse_openai_completion(R"({"prompt": ["a", "b"]})", &err));
  EXPECT_NE(err.find("more than 1"), std::string::npos) << err;
}
