// GGUF v2/v3 reader and writer.
//
// The reader memory-maps the file, parses the header, the metadata key/values
// and the tensor infos with every count, length and offset checked against the
// file size (overflow-safe) before use, and exposes tensor data as pointers into
// the mapping. A malformed file throws gguf_error whose message names the
// offending field and, for unknown types, what is supported. Nothing is read
// outside the mapping, whatever the file says.
//
// The writer produces standard GGUF v3 (32-byte alignment by default) that
// other GGUF tools load.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "inference/core/ggml_types.h"

namespace qf::infer::gguf {

class gguf_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// GGUF metadata value type ids.
enum class value_type : uint32_t {
  u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7,
  string = 8, array = 9, u64 = 10, i64 = 11, f64 = 12,
};

// A metadata value. Arrays hold elements of one type; nested arrays are allowed
// by the format and supported.
struct value {
  struct array_t {
    value_type elem_type{};
    std::vector<value> items;
  };
  value_type type{};
  std::variant<uint64_t, int64_t, double, bool, std::string, array_t> v;

  // Convenience accessors; nullopt when the value is not of a compatible kind.
  std::optional<int64_t> as_int() const;     // any integer type (u64 > INT64_MAX -> nullopt)
  std::optional<double> as_float() const;    // f32/f64 and integers
  std::optional<bool> as_bool() const;
  const std::string* as_string() const;
  const array_t* as_array() const;
};

struct tensor_info {
  std::string name;
  ggml_type type{};
  std::vector<int64_t> ne;  // dimensions, ne[0] innermost (row length)
  uint64_t offset = 0;      // relative to the start of the data section
  size_t n_bytes = 0;       // checked: fits inside the file
  int64_t n_elements() const;
  int64_t n_rows() const;   // product of ne[1..]
};

class file {
 public:
  // Opens and validates; throws gguf_error. Large arrays (e.g. vocabularies)
  // are parsed eagerly; tensor data stays in the mapping.
  static std::unique_ptr<file> open(const std::string& path);
  ~file();
  file(const file&) = delete;
  file& operator=(const file&) = delete;

  uint32_t version() const;
  size_t alignment() const;
  const std::string& path() const;

  // Metadata in file order.
  const std::vector<std::pair<std::string, value>>& metadata() const;
  const value* find(std::string_view key) const;
  std::optional<int64_t> get_int(std::string_view key) const;
  std::optional<double> get_float(std::string_view key) const;
  std::optional<bool> get_bool(std::string_view key) const;
  std::optional<std::string> get_string(std::string_view key) const;
  // Typed array helpers: nullopt if absent or of another element type.
  std::optional<std::vector<std::string>> get_string_array(std::string_view key) const;
  std::optional<std::vector<float>> get_float_array(std::string_view key) const;
  std::optional<std::vector<int64_t>> get_int_array(std::string_view key) const;

  const std::vector<tensor_info>& tensors() const;
  const tensor_info* find_tensor(std::string_view name) const;
  // Pointer to a tensor's bytes inside the mapping (n_bytes long).
  const uint8_t* tensor_data(const tensor_info& t) const;
  // File offset where the (aligned) tensor data section starts.
  uint64_t data_offset() const;

 private:
  file();
  struct impl;
  std::unique_ptr<impl> impl_;
};

// Builds a GGUF v3 file in memory order and writes it.
class writer {
 public:
  writer();
  ~writer();
  void set_alignment(uint32_t alignment);  // default 32; also written as general.alignment if != 32

  void add_u32(std::string key, uint32_t v);
  void add_i32(std::string key, int32_t v);
  void add_u64(std::string key, uint64_t v);
  void add_f32(std::string key, float v);
  void add_bool(std::string key, bool v);
  void add_string(std::string key, std::string v);
  void add_string_array(std::string key, std::vector<std::string> v);
  void add_f32_array(std::string key, std::vector<float> v);
  void add_i32_array(std::string key, std::vector<int32_t> v);
  void add_value(std::string key, value v);  // any value, e.g. copied from a reader

  // ne[0] innermost; data must hold row_size(type, ne[0]) * rows bytes.
  void add_tensor(std::string name, ggml_type type, std::vector<int64_t> ne,
                  std::vector<uint8_t> data);
  // Same, but the bytes are produced only while write() runs (one tensor in
  // memory at a time); produce must return exactly the declared size.
  void add_tensor(std::string name, ggml_type type, std::vector<int64_t> ne,
                  std::function<std::vector<uint8_t>()> produce);

  void write(const std::string& path) const;  // throws gguf_error on I/O failure

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace qf::infer::gguf
