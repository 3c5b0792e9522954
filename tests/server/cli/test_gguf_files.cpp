// The GGUF tools through the real binary: `gguf info` prints what a file says
// with control characters, terminal-reordering code points and invalid UTF-8
// escaped (its output is plain, valid UTF-8 whatever the file holds); the
// writers refuse to overwrite their own input (same path, ./path, hard link,
// symbolic link), leaving it intact, and leave no temporary files behind.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "inference/gguf/gguf.h"
#include "tests/server/cli/tool_runner.h"

namespace qf::test {
namespace {

namespace fs = std::filesystem;

// Strict UTF-8 (RFC 3629): no overlongs, no surrogates, nothing above U+10FFFF.
// Appends the code points decoded; false at the first invalid byte.
bool decode_strict(const std::string& s, std::vector<uint32_t>* out) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (size_t i = 0; i < s.size();) {
    const unsigned char b = p[i];
    const size_t len = b < 0x80                  ? 1
                       : b >= 0xC2 && b <= 0xDF ? 2
                       : b >= 0xE0 && b <= 0xEF ? 3
                       : b >= 0xF0 && b <= 0xF4 ? 4
                                                : 0;
    if (len == 0 || i + len > s.size()) return false;
    uint32_t cp = len == 1 ? b : b & (0xFF >> (len + 1));
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    out->push_back(cp);
    i += len;
  }
  return true;
}

// What a terminal acts on or reorders: C0 except newline, DEL, C1, bidi controls, separators.
bool is_dangerous(uint32_t cp) {
  return (cp < 0x20 && cp != '\n') || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C || cp == 0x200E ||
         cp == 0x200F || (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

void expect_safe_text(const std::string& text, const std::string& what) {
  std::vector<uint32_t> cps;
  ASSERT_TRUE(decode_strict(text, &cps)) << what << " is not valid UTF-8";
  for (uint32_t cp : cps) EXPECT_FALSE(is_dangerous(cp)) << what << " contains U+" << std::hex << cp;
}

std::vector<uint8_t> bytes_of(size_t n) { return std::vector<uint8_t>(n, 0); }

TEST(GgufFiles, InfoEscapesControlCharactersAndInvalidUtf8) {
  const std::string dir = scratch_dir("gguf_info_escape");
  const std::string path = dir + "/hostile.gguf";
  infer::gguf::writer w;
  w.add_string("general.architecture", "llama");
  w.add_string("evil.\x1b[2J.key\n", "bell\a esc\x1b]0;title\x07 cr\r nl\n tab\t del\x7f c1\xc2\x9b");
  w.add_string("evil.b", "bidi\xe2\x80\xae ls\xe2\x80\xa8 bad\xff\xfe overlong\xc0\xaf");
  w.add_string("evil.c", "surrogate\xed\xa0\x80 cut\xe2\x82");
  w.add_string("evil.d", "quote\" backslash\\ ok\xc3\xa9\xe2\x82\xac");
  w.add_string_array("evil.array", {"\x1b[31mred", "fine", "\xff"});
  w.add_tensor("t\x1b[1m\nname", infer::ggml_type::f32, {4}, bytes_of(16));
  w.write(path);

  run_result r = run_quickfill({"gguf", "info", path, "--tensors"});
  ASSERT_EQ(r.signal, 0);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_safe_text(r.out, "stdout");
  for (const char* escaped :
       {"evil.\\x1b[2J.key\\n", "bell\\x07 esc\\x1b]0;title\\x07 cr\\r nl\\n tab\\t del\\x7f c1\\u{009b}",
        "bidi\\u{202e} ls\\u{2028} bad\\xff\\xfe overlong\\xc0\\xaf", "surrogate\\xed\\xa0\\x80 cut\\xe2\\x82\"",
        "\"\\x1b[31mred\", \"fine\", \"\\xff\"", "t\\x1b[1m\\nname"})
    EXPECT_NE(r.out.find(escaped), std::string::npos) << "missing " << escaped << " in:\n" << r.out;
  EXPECT_NE(r.out.find("quote\\\" backslash\\\\ ok\xc3\xa9\xe2\x82\xac"), std::string::npos)  // printable UTF-8 kept
      << r.out;
  // One line per key and tensor: nothing in the file started a line of its own.
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3 + 6 + 3) << r.out;

  // An error message quoting the file is escaped too: a key given twice.
  std::string dup("GGUF\3\0\0\0", 8);
  auto put64 = [&](uint64_t v) { dup.append(reinterpret_cast<const char*>(&v), 8); };
  auto put32 = [&](uint32_t v) { dup.append(reinterpret_cast<const char*>(&v), 4); };
  put64(0);  // tensors
  put64(2);  // keys
  for (int i = 0; i < 2; ++i) {
    put64(5);
    dup += "k\x1b[2J";
    put32(8);  // string
    put64(1);
    dup += "v";
  }
  write_file(dir + "/dup.gguf", dup);
  r = run_quickfill({"gguf", "info", dir + "/dup.gguf"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("duplicate metadata key 'k\\x1b[2J'"), std::string::npos) << r.err;
  expect_safe_text(r.err, "stderr");
}

class GgufWriters : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch_dir("gguf_writers");
    in_ = dir_ + "/in.gguf";
    run_result r = run_quickfill({"gguf", "synth", "--preset", "tiny", "-o", in_});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    fs::create_hard_link(in_, dir_ + "/hard.gguf");
    fs::create_symlink("in.gguf", dir_ + "/sym.gguf");
    original_ = read_file(in_);
  }
  size_t entries() const { return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), {})); }
  std::string dir_, in_, original_;
};

TEST_F(GgufWriters, QuantizeRefusesToOverwriteItsInput) {
  const size_t n = entries();
  for (const std::string& out : {in_, dir_ + "/./in.gguf", dir_ + "/hard.gguf", dir_ + "/sym.gguf"}) {
    run_result r = run_quickfill({"gguf", "quantize", in_, out, "q8_0"});
    EXPECT_EQ(r.signal, 0) << out;
    EXPECT_EQ(r.exit_code, 1) << out << ": " << r.err;
    EXPECT_NE(r.err.find("refusing to write"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("input"), std::string::npos) << r.err;
    EXPECT_EQ(read_file(in_), original_) << "the input changed through " << out;
  }
  EXPECT_EQ(entries(), n);  // no temporary left behind

  run_result ok = run_quickfill({"gguf", "quantize", in_, dir_ + "/out.gguf", "q8_0"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(entries(), n + 1);
  run_result info = run_quickfill({"gguf", "info", dir_ + "/out.gguf"});
  EXPECT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("q8_0"), std::string::npos) << info.out;
  EXPECT_EQ(read_file(in_), original_);

  run_result nodir = run_quickfill({"gguf", "quantize", in_, dir_ + "/no/such/dir/out.gguf", "q8_0"});
  EXPECT_EQ(nodir.exit_code, 1);
  EXPECT_NE(nodir.err.find("no/such/dir"), std::string::npos) << nodir.err;
}

TEST_F(GgufWriters, FromLlama2cRefusesToOverwriteItsInputs) {
  const std::string data = test_data_dir();
  if (data.empty()) GTEST_SKIP() << "shared test data absent";
  const std::string ckpt = dir_ + "/stories260K.bin", tok = dir_ + "/tok512.bin";
  fs::copy_file(data + "/stories260K/stories260K.bin", ckpt);
  fs::copy_file(data + "/stories260K/tok512.bin", tok);
  const std::string ckpt_bytes = read_file(ckpt), tok_bytes = read_file(tok);
  fs::create_symlink("stories260K.bin", dir_ + "/ckpt_link.bin");
  for (const std::string& out : {ckpt, tok, dir_ + "/ckpt_link.bin"}) {
    run_result r = run_quickfill({"gguf", "from-llama2c", ckpt, tok, "-o", out});
    EXPECT_EQ(r.exit_code, 1) << out << ": " << r.err;
    EXPECT_NE(r.err.find("refusing to write"), std::string::npos) << r.err;
  }
  EXPECT_EQ(read_file(ckpt), ckpt_bytes);
  EXPECT_EQ(read_file(tok), tok_bytes);
  run_result ok = run_quickfill({"gguf", "from-llama2c", ckpt, tok, "-o", dir_ + "/stories.gguf"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST_F(GgufWriters, SynthReplacesAnExistingFileWhole) {
  // Over an existing model (here: through its symbolic link), the new file
  // replaces the old one at the end: a reader sees one or the other.
  run_result r = run_quickfill({"gguf", "synth", "--preset", "tiny", "--seed", "2", "--type", "q8_0", "-o",
                                dir_ + "/sym.gguf"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir_ + "/sym.gguf"));
  EXPECT_NE(read_file(in_), original_);
  auto f = infer::gguf::file::open(in_);
  EXPECT_EQ(f->get_int("general.file_type"), 7);  // q8_0
  EXPECT_EQ(read_file(dir_ + "/hard.gguf"), original_);  // the other name keeps the old file
  EXPECT_EQ(entries(), 3u);  // in, hard, sym: no temporaries
}

TEST_F(GgufWriters, PythonWriterIsAtomicAndRefusesItsInput) {
  const std::string py = python_with_numpy();
  if (py.empty()) GTEST_SKIP() << "/usr/bin/python3 with numpy absent";
  const std::string script =
      "import os, sys\n"
      "sys.path.insert(0, sys.argv[1])\n"
      "import gguf_io as G\n"
      "w = G.Writer()\n"
      "w.add('general.architecture', G.STRING, 'llama')\n"
      "w.add_tensor('t', [1.0, 2.0, 3.0, 4.0])\n"
      "for out in sys.argv[3:]:\n"
      "    try:\n"
      "        w.write(out, inputs=[sys.argv[2]])\n"
      "        print('wrote', out)\n"
      "    except ValueError as e:\n"
      "        print('refused', out, e)\n";
  const std::string out = dir_ + "/py.gguf";
  run_result r = run_process({py, "-c", script, source_dir() + "/tools/train", in_, in_, dir_ + "/hard.gguf",
                              dir_ + "/sym.gguf", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("refused " + in_ + " refusing to write"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("refused " + dir_ + "/hard.gguf"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("refused " + dir_ + "/sym.gguf"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wrote " + out), std::string::npos) << r.out;
  EXPECT_EQ(read_file(in_), original_);
  auto f = infer::gguf::file::open(out);
  ASSERT_NE(f->find_tensor("t"), nullptr);
  EXPECT_EQ(f->find_tensor("t")->n_elements(), 4);
  EXPECT_EQ(entries(), 4u);  // in, hard, sym, py: no temporaries
}

}  // namespace
}  // namespace qf::test
