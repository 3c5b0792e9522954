// GGUF v2/v3 reader and writer.
//
// The reader copies the file into memory owned by the process (an anonymous
// mapping filled with pread), then parses the header, the metadata key/values
// and the tensor infos with every count, length and offset checked against the
// file size (overflow-safe) before use, and exposes tensor data as pointers into
// that copy. The file on disk may be replaced, truncated or rewritten while a
// model is loaded: nothing points into it (a read-only file mapping would die by
// SIGBUS on truncation and change under the model on a rewrite in place). A
// file that changes while it is being read is refused. One-pass tools over large
// inputs (the quantizer) may ask for a plain mapping instead. A malformed file
// throws gguf_error whose message names the offending field and, for unknown
// types, what is supported. Nothing is read outside the file, whatever it says.
//
// Metadata arrays are stored compactly by element type (numbers as their
// encoded bytes, strings as one byte buffer plus end offsets): a 150k-token
// vocabulary costs about its encoded size, not 150k variant values. What the
// parsed metadata and tensor infos take is bounded while parsing (at most
// 16 MiB + 2x the header's bytes, and 1 GiB): a hostile header (arrays of
// empty arrays, floods of tiny keys) is refused with gguf_error instead of
// taking many times its size in memory.
//
// The writer produces standard GGUF v3 (32-byte alignment by default) that
// other GGUF tools load. It writes a temporary file in the destination's
// directory, fsyncs it and renames it over the destination, so a reader (or a
// crash) never sees a half-written file, and the file being replaced (possibly
// this process's own input) stays intact until the rename.
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

// Encoded size of one scalar of type t (1, 2, 4 or 8); 0 for string and array.
size_t encoded_size(value_type t);

// A metadata value. Arrays hold elements of one type; nested arrays are allowed
// by the format and supported.
struct value {
  // An array stored by element type: numbers and booleans as their encoded
  // little-endian bytes, strings as one buffer of bytes with end offsets,
  // nested arrays as values.
  class array_t {
   public:
    explicit array_t(value_type elem_type = value_type::u8);
    // Appends each item; throws gguf_error if one is not of elem_type.
    array_t(value_type elem_type, const std::vector<value>& items);

    value_type elem_type() const { return elem_; }
    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }

    // Element i (< size()) as a value (a copy).
    value at(size_t i) const;
    std::optional<int64_t> int_at(size_t i) const;   // integer elements (u64 > INT64_MAX -> nullopt)
    std::optional<double> float_at(size_t i) const;  // f32/f64 and integer elements
    std::optional<bool> bool_at(size_t i) const;
    std::string_view string_at(size_t i) const;      // string elements; "" for other types
    const array_t* array_at(size_t i) const;         // nested arrays; nullptr for other types

    // Appending; each throws gguf_error when the element does not fit elem_type().
    void push_back(const value& v);
    void push_int(int64_t v);      // integer element types (range-checked)
    void push_uint(uint64_t v);    // integer element types (range-checked)
    void push_float(double v);     // f32 / f64
    void push_bool(bool v);
    void push_string(std::string_view s);
    void push_array(array_t a);
    void reserve(size_t n, size_t string_bytes = 0);

    // The encoded elements of a number/boolean array (size() * encoded_size(elem_type())).
    const std::vector<uint8_t>& encoded() const { return bytes_; }
    // Heap bytes held (capacity), for memory accounting.
    size_t heap_bytes() const;

   private:
    friend struct array_builder;  // the reader fills arrays in bulk
    const uint8_t* elem_ptr(size_t i) const;

    value_type elem_{};
    size_t n_ = 0;
    std::vector<uint8_t> bytes_;   // numbers/booleans: encoded elements; strings: their bytes, concatenated
    std::vector<uint64_t> ends_;   // strings: end offset of string i in bytes_
    std::vector<value> nested_;    // arrays of arrays
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

// Where a file's tensor bytes live once opened.
enum class data_storage {
  in_memory,  // a private copy (default): the file on disk may change or vanish afterwards
  mapped,     // a read-only mapping of the file: no copy, but the file must not be
              // truncated or rewritten while open (SIGBUS); for one-pass tools
};

class file {
 public:
  // Opens and validates; throws gguf_error. Metadata (including large arrays
  // such as vocabularies) is parsed eagerly; the header bytes are then freed
  // and only the tensor data section stays in memory.
  static std::unique_ptr<file> open(const std::string& path, data_storage storage = data_storage::in_memory);
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
  // Pointer to a tensor's bytes (n_bytes long). Throws gguf_error after
  // release_tensor_data() or release_tensor(t).
  const uint8_t* tensor_data(const tensor_info& t) const;
  // Frees the tensor bytes (e.g. once a device backend holds its own copy);
  // metadata and tensor infos stay.
  void release_tensor_data();
  // Frees the whole pages inside one tensor's bytes (once a backend holds a
  // copy of its own, e.g. regrouped); neighbouring tensors stay readable.
  void release_tensor(const tensor_info& t);
  // Bytes of tensor data held (0 after release_tensor_data(); less the
  // pages release_tensor freed).
  size_t tensor_data_bytes() const;
  // File offset where the (aligned) tensor data section starts.
  uint64_t data_offset() const;
  // The heap memory parsing charged for the metadata and tensor infos (keys,
  // values, array buffers, nested arrays, tensor names and shapes, the
  // duplicate checks); the bound in the header comment applies to it.
  uint64_t metadata_bytes() const;

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

  // Writes `path` atomically (temporary file in the same directory, fsync,
  // rename; a symbolic link at `path` is followed, its target replaced).
  // Throws gguf_error on I/O failure (the destination is then untouched and
  // the temporary removed) or when `path` is one of the inputs given by
  // protect_input().
  void write(const std::string& path) const;
  // Declares a file this output is computed from: write() refuses to replace it.
  void protect_input(std::string path);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

// Throws gguf_error when `output` names the same file as `input`: the same
// path, or the same file through a hard or symbolic link (same device and
// inode). A tool checks this before doing any work; writer::write() checks it
// again for the inputs it was told about.
void check_not_input(const std::string& input, const std::string& output);

}  // namespace qf::infer::gguf
