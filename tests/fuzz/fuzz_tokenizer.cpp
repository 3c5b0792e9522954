// Fuzz target: tokenizer encode/decode (inference/tokenizer) on the real
// vocabularies of the shared test data (ggml-vocab-*.gguf).
//
// Which vocabularies: $QUICKFILL_FUZZ_VOCAB (a file path or a name such as
// "qwen2"), else every ggml-vocab-*.gguf found; with several, the first input
// byte picks one. Without any the target says so and exits with 0 (ctest
// reports it as skipped; 77 is libFuzzer's own exit code for a crash). The
// rest of the input is the text. Oracles (those of
// tests/inference/tokenizer/test_roundtrip_fuzz.cpp):
// * ids are always in range, whatever the bytes and flags;
// * the text checks apply when every byte of the input has a token (a
//   byte-level vocabulary may lack some, see below);
// * valid UTF-8 decodes back to itself: decode(encode(s)) == s (SentencePiece
//   vocabularies drop their dummy-prefix space when decoding, and U+2581 in
//   the text reads back as a space, as in llama.cpp);
// * so does the streaming detokenizer, token by token;
// * for arbitrary bytes, byte-level BPE decodes to the input with each
//   invalid byte replaced by U+FFFD (text::repair_utf8, strict RFC 3629),
//   compared (as in the unit test) only for inputs free of '<' and '['.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "inference/gguf/gguf.h"
#include "inference/tokenizer/tokenizer.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/shared_test_data.h"
#include "text/utf8.h"

namespace {

using qf::infer::tokenizer;

struct loaded {
  std::string name;
  std::unique_ptr<tokenizer> tok;
  bool no_token[256] = {};  // byte-level BPE: bytes without a token of their own
};

// GPT-2's byte alphabet (bytes to printable code points), written here as an
// independent oracle: printable Latin-1 bytes stand for themselves, the rest
// get U+0100 onwards in byte order.
std::string byte_spelling(int b) {
  int n = 0;
  for (int c = 0; c < 256; ++c) {
    const bool self = (c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF);
    const std::uint32_t cp = self ? static_cast<std::uint32_t>(c) : 256u + static_cast<std::uint32_t>(n++);
    if (c == b) {
      std::string out;
      qf::text::append_utf8(out, cp);
      return out;
    }
  }
  return {};
}
std::vector<loaded> vocabs;

std::vector<std::string> vocab_paths() {
  namespace fs = std::filesystem;
  const std::string dir = qf::test::shared_test_data(QUICKFILL_TEST_DATA) + "/vocab";
  const char* env = std::getenv("QUICKFILL_FUZZ_VOCAB");
  if (env && *env) {
    const std::string want = env;
    if (fs::exists(want)) return {want};
    const std::string by_name = dir + "/ggml-vocab-" + want + ".gguf";
    if (fs::exists(by_name)) return {by_name};
    std::fprintf(stderr, "fuzz_tokenizer: QUICKFILL_FUZZ_VOCAB=%s: no such file or vocabulary in %s\n", env,
                 dir.c_str());
    std::exit(1);
  }
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("ggml-vocab-") && name.ends_with(".gguf")) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// "<vocabulary>: in <hex> out <hex>", for failure reports.
std::string show(const std::string& vocab, const std::string& in, const std::string& out) {
  auto hex = [](const std::string& t) {
    std::string h;
    char buf[4];
    for (unsigned char c : t.substr(0, 64)) {
      std::snprintf(buf, sizeof buf, "%02x", c);
      h += buf;
    }
    return h;
  };
  return vocab + ": in " + hex(in) + " out " + hex(out);
}

bool odd_for_bpe(const std::string& s) {
  return s.find('<') != std::string::npos || s.find('[') != std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  for (const std::string& path : vocab_paths()) {
    auto f = qf::infer::gguf::file::open(path);
    loaded v{std::filesystem::path(path).filename().string(), tokenizer::from_gguf(*f)};
    if (v.tok->model_kind() == "gpt2")
      for (int b = 0; b < 256; ++b) v.no_token[b] = v.tok->find(byte_spelling(b)) < 0;
    vocabs.push_back(std::move(v));
  }
  if (vocabs.empty()) {
    std::fprintf(stderr, "fuzz_tokenizer: no vocabulary found (set QUICKFILL_TEST_DATA); skipped\n");
    std::exit(0);
  }
  std::fprintf(stderr, "fuzz_tokenizer: %zu vocabularies\n", vocabs.size());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::size_t pick = 0;
  if (vocabs.size() > 1) {
    pick = data[0] % vocabs.size();
    ++data;
    --size;
  }
  const loaded& v = vocabs[pick];
  const tokenizer& tok = *v.tok;
  const std::string s(reinterpret_cast<const char*>(data), size);
  const bool spm = tok.model_kind() == "llama";
  const auto in_range = [&](const std::vector<std::int32_t>& ids) {
    for (std::int32_t id : ids) QF_FUZZ_CHECK(id >= 0 && id < tok.n_vocab(), v.name);
  };

  const std::vector<std::int32_t> ids = tok.encode(s, false, false);
  in_range(ids);
  in_range(tok.encode(s, true, true));
  in_range(tok.encode_continuation(s, true));
  const std::string decoded = tok.decode(ids, spm);

  // A byte the vocabulary has no token for cannot come back (StarCoder and
  // Refact lack F1, the lead byte of U+40000..U+7FFFF): it is dropped, as
  // llama.cpp drops it. The text comparisons hold only without such bytes.
  bool representable = true;
  for (unsigned char c : s) representable = representable && !v.no_token[c];
  if (!representable) return 0;

  if (qf::fuzz::valid_utf8(s)) {
    // SentencePiece writes a space as U+2581, so that character reads back as a
    // space (as in llama.cpp); compare modulo it.
    const auto unescape = [](std::string t) {
      for (std::size_t p; (p = t.find("\xE2\x96\x81")) != std::string::npos;) t.replace(p, 3, " ");
      return t;
    };
    QF_FUZZ_CHECK(spm ? unescape(decoded) == unescape(s) : decoded == s, show(v.name, s, decoded));
    // Streaming gives the same text (control tokens never occur without parse_special).
    qf::infer::detokenizer detok(tok, spm);
    std::string streamed;
    for (std::int32_t id : ids) streamed += detok.push(id);
    streamed += detok.flush();
    QF_FUZZ_CHECK(streamed == decoded, show(v.name, decoded, streamed));
  } else if (!spm && !odd_for_bpe(s)) {
    QF_FUZZ_CHECK(decoded == qf::text::repair_utf8(s), show(v.name, s, decoded));
  }
  return 0;
}
