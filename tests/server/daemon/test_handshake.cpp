// The daemon's hello: what a bridge sends decodes back, and the caps on its
// size, members, strings, threads and limits refuse a hello with a message
// naming what is over.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include <boost/json.hpp>

#include "server/daemon/handshake.h"

namespace json = boost::json;
using namespace qf::server::daemon;

namespace {

json::object good_hello() {
  hello h;
  h.version = "1.2.3";
  h.pid = 42;
  h.args.model_path = "/m.gguf";
  h.args.threads = 2;
  return json::parse(encode_hello(h)).as_object();
}

std::string refusal(const json::object& o) {
  std::string error;
  const auto h = decode_hello(json::serialize(o), &error);
  return h ? std::string("accepted") : error;
}

}  // namespace

TEST(Handshake, HelloRoundTrips) {
  std::string error;
  const auto h = decode_hello(json::serialize(good_hello()), &error);
  ASSERT_TRUE(h) << error;
  EXPECT_EQ(h->version, "1.2.3");
  EXPECT_EQ(h->pid, 42);
  EXPECT_EQ(h->args.model_path, "/m.gguf");
  EXPECT_EQ(h->args.threads, 2);
}

TEST(Handshake, HelloOverACapIsRefusedNamingIt) {
  json::object o = good_hello();
  o["threads"] = 100000;
  EXPECT_NE(refusal(o).find("threads 100000 is over the daemon's cap of 256"), std::string::npos) << refusal(o);
  o = good_hello();
  o["threads"] = std::uint64_t{1} << 32 | 1;  // must not wrap to 1
  EXPECT_NE(refusal(o), "accepted");
  o = good_hello();
  o["maxMessageSize"] = std::uint64_t{1} << 40;
  EXPECT_NE(refusal(o).find("maxMessageSize"), std::string::npos) << refusal(o);
  o = good_hello();
  o["maxOpenDocuments"] = 50'000'000;
  EXPECT_NE(refusal(o).find("maxOpenDocuments"), std::string::npos) << refusal(o);
  o = good_hello();
  o["model"] = std::string(max_hello_string + 1, 'm');
  EXPECT_NE(refusal(o).find("\"model\" is longer than 4096 bytes"), std::string::npos) << refusal(o);
  o = good_hello();
  for (int i = 0; i < 40; ++i) o["extra" + std::to_string(i)] = i;
  EXPECT_NE(refusal(o).find("members"), std::string::npos) << refusal(o);
  o = good_hello();
  o["padding"] = std::string(max_hello_bytes, ' ');
  EXPECT_NE(refusal(o).find("longer than 16384 bytes"), std::string::npos) << refusal(o);
  o = good_hello();
  o["threads"] = std::numeric_limits<double>::infinity();  // written "Infinity": not JSON
  EXPECT_NE(refusal(o), "accepted");
}

// The daemon works in /: a relative model path would mean another file than
// the editor's, so the bridge sends it absolute and the daemon refuses one
// that is not. A model name (models folder) or an absolute path is accepted.
TEST(Handshake, ARelativeModelPathIsRefused) {
  for (const char* rel : {"./m.gguf", "models/m.gguf", "../m.gguf"}) {
    json::object o = good_hello();
    o["model"] = rel;
    EXPECT_NE(refusal(o).find("relative path"), std::string::npos) << rel << ": " << refusal(o);
  }
  for (const char* ok : {"m", "m.gguf", "/abs/m.gguf", ""}) {
    json::object o = good_hello();
    o["model"] = ok;
    EXPECT_EQ(refusal(o), "accepted") << ok;
  }
}

// The editor's user config file travels in the hello (docs/security.md), as
// an absolute path; the encoder writes what the decoder reads.
TEST(Handshake, TheUserConfigFileTravelsAsAnAbsolutePath) {
  hello h;
  h.version = "1.2.3";
  h.pid = 7;
  h.args.user_config = "/home/u/.config/quickfill/config.json";
  std::string error;
  std::string line = encode_hello(h);
  line.pop_back();  // the '\n'
  const auto back = decode_hello(line, &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->args.user_config, "/home/u/.config/quickfill/config.json");
  json::object o = good_hello();
  EXPECT_EQ(refusal(o), "accepted");  // absent: the session reads none
  o["userConfig"] = "quickfill/config.json";
  EXPECT_NE(refusal(o).find("userConfig is not an absolute path"), std::string::npos) << refusal(o);
}
