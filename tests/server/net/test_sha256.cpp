// SHA-256 against the FIPS 180-2 examples, fed whole and in pieces.
#include <gtest/gtest.h>

#include <string>

#include "server/net/sha256.h"

namespace qf::net {
namespace {

TEST(Sha256, KnownDigests) {
  sha256 h;
  EXPECT_EQ(h.hex_digest(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  h.update(std::string("abc"));
  EXPECT_EQ(h.hex_digest(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string msg = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  for (size_t i = 0; i < msg.size(); i += 7) h.update(std::string_view(msg).substr(i, 7));
  EXPECT_EQ(h.hex_digest(), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, HexShape) {
  EXPECT_TRUE(is_sha256_hex("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
  EXPECT_TRUE(is_sha256_hex("248D6A61D20638B8E5C026930C3E6039A33CE45964FF2167F6ECEDD419DB06C1"));
  EXPECT_FALSE(is_sha256_hex("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c"));
  EXPECT_FALSE(is_sha256_hex("5f3a1b2c-1234"));
  EXPECT_FALSE(is_sha256_hex("g48d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
}

}  // namespace
}  // namespace qf::net
