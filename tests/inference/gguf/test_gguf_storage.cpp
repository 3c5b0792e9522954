// How GGUF files are held and written: an opened file keeps its own copy of
// the tensor bytes (the file on disk may be truncated or rewritten), header
// pages are freed after parsing, one tensor's pages can be freed alone,
// metadata arrays are stored compactly (typed, contiguous), the writer
// replaces its destination atomically (temporary file + rename; a failure
// leaves the old file and no temporary), follows a symbolic link, keeps the
// replaced file's mode, and refuses to overwrite a protected input (same
// path, hard link, symbolic link).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "inference/gguf/gguf.h"
#include "tests/temp_file.h"

using namespace qf::infer;
using namespace qf::infer::gguf;
namespace fs = std::filesystem;

namespace {

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(seed + i * 13);
  return b;
}

// A file with a vocabulary-like array and one f32 tensor of `n` floats.
void write_model_like(const std::string& path, uint8_t seed, size_t n = 4096) {
  writer w;
  w.add_string("general.architecture", "llama");
  w.add_string_array("tokenizer.ggml.tokens", {"<s>", "a", "bc"});
  w.add_tensor("t", ggml_type::f32, {static_cast<int64_t>(n)}, pattern(n * 4, seed));
  w.write(path);
}

using qf::test::temp_dir;

// How many entries a directory holds.
size_t entries(const fs::path& dir) { return static_cast<size_t>(std::distance(fs::directory_iterator(dir), {})); }

std::vector<uint8_t> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST(gguf_storage, tensor_bytes_survive_truncation_and_rewrite_of_the_file) {
  qf::test::temp_file tmp("survive");
  write_model_like(tmp.path(), 1);
  auto f = file::open(tmp.path());
  const auto expected = pattern(4096 * 4, 1);
  const tensor_info& t = *f->find_tensor("t");
  ASSERT_EQ(0, std::memcmp(f->tensor_data(t), expected.data(), expected.size()));

  // Truncate in place (a mapping of the file would now fault with SIGBUS)...
  ASSERT_EQ(::truncate(tmp.path().c_str(), 0), 0);
  EXPECT_EQ(0, std::memcmp(f->tensor_data(t), expected.data(), expected.size()));
  // ... and rewrite in place with other bytes (as `cp other.gguf file` does).
  {
    std::ofstream out(tmp.path(), std::ios::binary | std::ios::trunc);
    const auto junk = pattern(1 << 20, 99);
    out.write(reinterpret_cast<const char*>(junk.data()), static_cast<std::streamsize>(junk.size()));
  }
  EXPECT_EQ(0, std::memcmp(f->tensor_data(t), expected.data(), expected.size()));
  EXPECT_EQ(f->get_string_array("tokenizer.ggml.tokens"), (std::vector<std::string>{"<s>", "a", "bc"}));
}

TEST(gguf_storage, only_the_tensor_data_stays_in_memory) {
  qf::test::temp_file vocab("vocab_only"), model("with_data");
  writer w;
  std::vector<std::string> tokens;
  for (int i = 0; i < 20000; ++i) tokens.push_back("token_" + std::to_string(i));
  w.add_string_array("tokenizer.ggml.tokens", tokens);
  w.write(vocab.path());
  auto v = file::open(vocab.path());
  EXPECT_EQ(v->tensor_data_bytes(), 0u);  // no tensors: nothing of the file is kept
  EXPECT_EQ(v->get_string_array("tokenizer.ggml.tokens")->at(12345), "token_12345");

  w.add_tensor("t", ggml_type::f32, {8192}, pattern(8192 * 4, 3));
  w.write(model.path());
  auto m = file::open(model.path());
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t file_size = fs::file_size(model.path());
  EXPECT_LT(m->tensor_data_bytes(), file_size);
  EXPECT_LE(m->tensor_data_bytes(), file_size - m->data_offset() + page);
  EXPECT_EQ(0, std::memcmp(m->tensor_data(*m->find_tensor("t")), pattern(8192 * 4, 3).data(), 8192 * 4));

  m->release_tensor_data();
  EXPECT_EQ(m->tensor_data_bytes(), 0u);
  EXPECT_THROW(m->tensor_data(*m->find_tensor("t")), gguf_error);
  EXPECT_EQ(m->find_tensor("t")->n_bytes, 8192u * 4);  // infos and metadata stay
}

TEST(gguf_storage, releasing_one_tensor_frees_its_pages_and_keeps_its_neighbours) {
  qf::test::temp_file model("release_one");
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t n = 4 * page / 4 + 7;  // floats: four pages and a ragged end, so the neighbours share pages
  writer w;
  w.add_string("general.architecture", "llama");
  w.add_tensor("a", ggml_type::f32, {5}, pattern(5 * 4, 1));
  w.add_tensor("big", ggml_type::f32, {static_cast<int64_t>(n)}, pattern(n * 4, 2));
  w.add_tensor("z", ggml_type::f32, {9}, pattern(9 * 4, 3));
  w.write(model.path());
  for (data_storage st : {data_storage::in_memory, data_storage::mapped}) {
    auto f = file::open(model.path(), st);
    const size_t held = f->tensor_data_bytes();
    f->release_tensor(*f->find_tensor("big"));
    EXPECT_THROW(f->tensor_data(*f->find_tensor("big")), gguf_error);
    EXPECT_THROW(f->release_tensor(*f->find_tensor("big")), gguf_error);
    EXPECT_EQ(0, std::memcmp(f->tensor_data(*f->find_tensor("a")), pattern(5 * 4, 1).data(), 5 * 4));
    EXPECT_EQ(0, std::memcmp(f->tensor_data(*f->find_tensor("z")), pattern(9 * 4, 3).data(), 9 * 4));
    EXPECT_GE(held - f->tensor_data_bytes(), 3 * page);  // the whole pages inside "big"
    EXPECT_LE(held - f->tensor_data_bytes(), n * 4);
  }
}

TEST(gguf_storage, mapped_storage_reads_the_same_bytes) {
  qf::test::temp_file tmp("mapped");
  write_model_like(tmp.path(), 7);
  auto f = file::open(tmp.path(), data_storage::mapped);
  EXPECT_EQ(0, std::memcmp(f->tensor_data(*f->find_tensor("t")), pattern(4096 * 4, 7).data(), 4096 * 4));
}

TEST(gguf_storage, arrays_of_every_element_type_roundtrip) {
  qf::test::temp_file tmp("arrays");
  writer w;
  auto arr = [](value_type elem) {
    value v;
    v.type = value_type::array;
    v.v = value::array_t(elem);
    return v;
  };
  auto as = [](value& v) -> value::array_t& { return std::get<value::array_t>(v.v); };
  value i8 = arr(value_type::i8), u16 = arr(value_type::u16), u64 = arr(value_type::u64), b = arr(value_type::boolean),
        f64 = arr(value_type::f64), s = arr(value_type::string);
  as(i8).push_int(-128), as(i8).push_int(127);
  as(u16).push_uint(65535);
  as(u64).push_uint(UINT64_MAX), as(u64).push_uint(5);
  as(b).push_bool(true), as(b).push_bool(false);
  as(f64).push_float(0.1);
  as(s).push_string(std::string("nul\0inside", 10)), as(s).push_string("");
  EXPECT_THROW(as(i8).push_int(128), gguf_error);
  EXPECT_THROW(as(u16).push_int(-1), gguf_error);
  EXPECT_THROW(as(s).push_int(1), gguf_error);
  const std::pair<const char*, const value*> all[] = {{"i8", &i8}, {"u16", &u16}, {"u64", &u64},
                                                      {"b", &b},   {"f64", &f64}, {"s", &s}};
  for (const auto& [k, v] : all) w.add_value(k, *v);
  w.write(tmp.path());

  auto f = file::open(tmp.path());
  EXPECT_EQ(f->get_int_array("i8"), (std::vector<int64_t>{-128, 127}));
  EXPECT_EQ(f->get_int_array("u16"), (std::vector<int64_t>{65535}));
  const auto* a64 = f->find("u64")->as_array();
  ASSERT_NE(a64, nullptr);
  EXPECT_EQ(a64->int_at(0), std::nullopt);  // above INT64_MAX
  EXPECT_EQ(std::get<uint64_t>(a64->at(0).v), UINT64_MAX);
  EXPECT_EQ(a64->int_at(1), 5);
  EXPECT_FALSE(f->get_int_array("u64").has_value());
  const auto* ab = f->find("b")->as_array();
  EXPECT_EQ(ab->bool_at(0), true);
  EXPECT_EQ(ab->bool_at(1), false);
  EXPECT_EQ(ab->at(0).as_bool(), true);
  EXPECT_EQ(f->find("f64")->as_array()->float_at(0), 0.1);
  const auto* as_ = f->find("s")->as_array();
  EXPECT_EQ(as_->string_at(0), std::string_view("nul\0inside", 10));
  EXPECT_EQ(as_->string_at(1), "");
  EXPECT_EQ(as_->string_at(2), "");  // out of range
  EXPECT_EQ(as_->int_at(0), std::nullopt);
}

TEST(gguf_storage, string_arrays_are_stored_compactly) {
  // 200k eight-byte strings: contiguous storage costs the bytes plus one
  // offset each (16 bytes); one variant value per element cost over 48.
  qf::test::temp_file tmp("compact");
  std::vector<std::string> tokens;
  for (int i = 0; i < 200000; ++i) {
    char b[16];
    std::snprintf(b, sizeof b, "t%07d", i);
    tokens.emplace_back(b);
  }
  writer w;
  w.add_string_array("tokenizer.ggml.tokens", tokens);
  std::vector<float> scores(200000, -1.5f);
  w.add_f32_array("tokenizer.ggml.scores", scores);
  w.write(tmp.path());
  auto f = file::open(tmp.path());
  const auto* t = f->find("tokenizer.ggml.tokens")->as_array();
  const auto* s = f->find("tokenizer.ggml.scores")->as_array();
  ASSERT_EQ(t->size(), 200000u);
  EXPECT_LE(t->heap_bytes(), 200000u * 17);
  EXPECT_LE(s->heap_bytes(), 200000u * 4);
  EXPECT_EQ(t->string_at(123456), "t0123456");
  EXPECT_EQ(f->get_float_array("tokenizer.ggml.scores"), scores);
}

TEST(gguf_storage, failed_write_leaves_the_old_file_and_no_temporary) {
  temp_dir dir("failwrite");
  const fs::path dest = dir.path() / "m.gguf";
  write_model_like(dest.string(), 1);
  const auto before = read_bytes(dest);
  ASSERT_EQ(entries(dir.path()), 1u);

  writer w;
  w.add_string("general.architecture", "llama");
  size_t entries_during = 0;
  std::vector<uint8_t> dest_during;
  w.add_tensor("t", ggml_type::f32, {4}, [&]() -> std::vector<uint8_t> {
    entries_during = entries(dir.path());   // the temporary sits next to the destination
    dest_during = read_bytes(dest);   // which is untouched while the output is written
    throw std::runtime_error("producer failed");
  });
  EXPECT_THROW(w.write(dest.string()), std::runtime_error);
  EXPECT_EQ(entries_during, 2u);
  EXPECT_EQ(dest_during, before);
  EXPECT_EQ(read_bytes(dest), before);
  EXPECT_EQ(entries(dir.path()), 1u);  // the temporary was removed
}

TEST(gguf_storage, write_replaces_atomically_and_keeps_an_open_reader_valid) {
  temp_dir dir("replace");
  const fs::path dest = dir.path() / "m.gguf";
  write_model_like(dest.string(), 1);
  ASSERT_EQ(::chmod(dest.c_str(), 0640), 0);
  auto mapped = file::open(dest.string(), data_storage::mapped);  // a mapping of the old inode
  write_model_like(dest.string(), 2);
  EXPECT_EQ(0, std::memcmp(mapped->tensor_data(*mapped->find_tensor("t")), pattern(4096 * 4, 1).data(), 4096 * 4));
  auto fresh = file::open(dest.string());
  EXPECT_EQ(0, std::memcmp(fresh->tensor_data(*fresh->find_tensor("t")), pattern(4096 * 4, 2).data(), 4096 * 4));
  struct stat st {};
  ASSERT_EQ(::stat(dest.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);  // the replaced file's mode is kept
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(gguf_storage, write_through_a_symlink_replaces_its_target) {
  temp_dir dir("symlink");
  const fs::path target = dir.path() / "real.gguf", link = dir.path() / "link.gguf";
  write_model_like(target.string(), 1);
  fs::create_symlink(target.filename(), link);
  write_model_like(link.string(), 2);
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  auto f = file::open(target.string());
  EXPECT_EQ(0, std::memcmp(f->tensor_data(*f->find_tensor("t")), pattern(4096 * 4, 2).data(), 4096 * 4));
}

TEST(gguf_storage, refuses_to_overwrite_a_protected_input) {
  temp_dir dir("protect");
  const fs::path in = dir.path() / "in.gguf", hard = dir.path() / "hard.gguf", sym = dir.path() / "sym.gguf",
                 other = dir.path() / "other.gguf";
  write_model_like(in.string(), 1);
  fs::create_hard_link(in, hard);
  fs::create_symlink(in.filename(), sym);
  const auto before = read_bytes(in);

  for (const fs::path& out : {in, hard, sym, dir.path() / "." / "in.gguf"}) {
    EXPECT_THROW(check_not_input(in.string(), out.string()), gguf_error) << out;
    writer w;
    w.protect_input(in.string());
    w.add_string("general.architecture", "llama");
    try {
      w.write(out.string());
      ADD_FAILURE() << "wrote over its input through " << out;
    } catch (const gguf_error& e) {
      EXPECT_NE(std::string(e.what()).find("input"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(read_bytes(in), before);
  EXPECT_NO_THROW(check_not_input(in.string(), other.string()));  // does not exist yet
  write_model_like(other.string(), 2);
  EXPECT_NO_THROW(check_not_input(in.string(), other.string()));  // another file
}
