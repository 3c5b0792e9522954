// Accessors of gguf::value, the compact array storage (value::array_t) and
// tensor_info: conversions between the stored form and the kinds callers ask
// for. Accessors never throw; appending an element of the wrong kind does.
#include <cstring>
#include <limits>

#include "inference/gguf/gguf.h"

namespace qf::infer::gguf {

namespace {

bool is_integer(value_type t) {
  switch (t) {
    case value_type::u8: case value_type::i8: case value_type::u16: case value_type::i16:
    case value_type::u32: case value_type::i32: case value_type::u64: case value_type::i64: return true;
    default: return false;
  }
}
bool is_signed(value_type t) {
  return t == value_type::i8 || t == value_type::i16 || t == value_type::i32 || t == value_type::i64;
}

[[noreturn]] void wrong_kind(value_type elem, const char* what) {
  throw gguf_error(std::string("gguf: cannot append ") + what + " to an array of type " +
                   std::to_string(static_cast<uint32_t>(elem)));
}

// Little-endian load of an encoded integer of `n` bytes.
uint64_t load_uint(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  std::memcpy(&v, p, n);  // the format and every supported host are little-endian
  return v;
}
int64_t load_int(const uint8_t* p, size_t n) {
  const uint64_t u = load_uint(p, n);
  const unsigned shift = static_cast<unsigned>(64 - 8 * n);
  return shift == 0 ? static_cast<int64_t>(u) : static_cast<int64_t>(u << shift) >> shift;  // sign-extend
}

}  // namespace

size_t encoded_size(value_type t) {
  switch (t) {
    case value_type::u8: case value_type::i8: case value_type::boolean: return 1;
    case value_type::u16: case value_type::i16: return 2;
    case value_type::u32: case value_type::i32: case value_type::f32: return 4;
    case value_type::u64: case value_type::i64: case value_type::f64: return 8;
    case value_type::string: case value_type::array: return 0;
  }
  return 0;
}

// ---- value ----

std::optional<int64_t> value::as_int() const {
  if (const auto* u = std::get_if<uint64_t>(&v)) {
    if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(*u);
  }
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  return std::nullopt;
}

std::optional<double> value::as_float() const {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* u = std::get_if<uint64_t>(&v)) return static_cast<double>(*u);
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return std::nullopt;
}

std::optional<bool> value::as_bool() const {
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  return std::nullopt;
}

const std::string* value::as_string() const { return std::get_if<std::string>(&v); }

const value::array_t* value::as_array() const { return std::get_if<array_t>(&v); }

// ---- value::array_t ----

value::array_t::array_t(value_type elem_type) : elem_(elem_type) {}

value::array_t::array_t(value_type elem_type, const std::vector<value>& items) : elem_(elem_type) {
  reserve(items.size());
  for (const value& it : items) push_back(it);
}

const uint8_t* value::array_t::elem_ptr(size_t i) const { return bytes_.data() + i * encoded_size(elem_); }

value value::array_t::at(size_t i) const {
  value out;
  out.type = elem_;
  if (i >= n_) return out;
  const size_t es = encoded_size(elem_);
  switch (elem_) {
    case value_type::string: out.v = std::string(string_at(i)); break;
    case value_type::array: return nested_[i];
    case value_type::boolean: out.v = bytes_[i] != 0; break;
    case value_type::f32: {
      float f;
      std::memcpy(&f, elem_ptr(i), 4);
      out.v = double{f};
      break;
    }
    case value_type::f64: {
      double d;
      std::memcpy(&d, elem_ptr(i), 8);
      out.v = d;
      break;
    }
    default:
      if (is_signed(elem_)) out.v = load_int(elem_ptr(i), es);
      else out.v = load_uint(elem_ptr(i), es);
  }
  return out;
}

std::optional<int64_t> value::array_t::int_at(size_t i) const {
  if (i >= n_ || !is_integer(elem_)) return std::nullopt;
  const size_t es = encoded_size(elem_);
  if (is_signed(elem_)) return load_int(elem_ptr(i), es);
  const uint64_t u = load_uint(elem_ptr(i), es);
  if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(u);
}

std::optional<double> value::array_t::float_at(size_t i) const {
  if (i >= n_) return std::nullopt;
  if (elem_ == value_type::f32) {
    float f;
    std::memcpy(&f, elem_ptr(i), 4);
    return f;
  }
  if (elem_ == value_type::f64) {
    double d;
    std::memcpy(&d, elem_ptr(i), 8);
    return d;
  }
  if (!is_integer(elem_)) return std::nullopt;
  const size_t es = encoded_size(elem_);
  return is_signed(elem_) ? static_cast<double>(load_int(elem_ptr(i), es))
                          : static_cast<double>(load_uint(elem_ptr(i), es));
}

std::optional<bool> value::array_t::bool_at(size_t i) const {
  if (i >= n_ || elem_ != value_type::boolean) return std::nullopt;
  return bytes_[i] != 0;
}

std::string_view value::array_t::string_at(size_t i) const {
  if (i >= n_ || elem_ != value_type::string) return {};
  const uint64_t begin = i == 0 ? 0 : ends_[i - 1];
  return std::string_view(reinterpret_cast<const char*>(bytes_.data()) + begin, ends_[i] - begin);
}

const value::array_t* value::array_t::array_at(size_t i) const {
  if (i >= n_ || elem_ != value_type::array) return nullptr;
  return nested_[i].as_array();
}

void value::array_t::push_back(const value& v) {
  if (v.type != elem_) wrong_kind(elem_, "an element of another type");
  switch (elem_) {
    case value_type::string: push_string(*v.as_string()); return;
    case value_type::array: push_array(*v.as_array()); return;
    case value_type::boolean: push_bool(*v.as_bool()); return;
    case value_type::f32: case value_type::f64: push_float(*v.as_float()); return;
    default:
      if (const auto* u = std::get_if<uint64_t>(&v.v)) push_uint(*u);
      else if (const auto* s = std::get_if<int64_t>(&v.v)) push_int(*s);
      else wrong_kind(elem_, "a non-integer value");
  }
}

void value::array_t::push_int(int64_t v) {
  if (!is_integer(elem_)) wrong_kind(elem_, "an integer");
  const size_t es = encoded_size(elem_);
  if (es < 8) {
    const int64_t lo = is_signed(elem_) ? -(int64_t{1} << (8 * es - 1)) : 0;
    const int64_t hi = is_signed(elem_) ? (int64_t{1} << (8 * es - 1)) - 1 : (int64_t{1} << (8 * es)) - 1;
    if (v < lo || v > hi) wrong_kind(elem_, ("the out-of-range integer " + std::to_string(v)).c_str());
  } else if (!is_signed(elem_) && v < 0) {
    wrong_kind(elem_, "a negative integer");
  }
  const uint64_t u = static_cast<uint64_t>(v);
  const auto* p = reinterpret_cast<const uint8_t*>(&u);
  bytes_.insert(bytes_.end(), p, p + es);
  ++n_;
}

void value::array_t::push_uint(uint64_t v) {
  if (is_signed(elem_) && v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    wrong_kind(elem_, "an out-of-range integer");
  if (elem_ == value_type::u64) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    bytes_.insert(bytes_.end(), p, p + 8);
    ++n_;
    return;
  }
  push_int(static_cast<int64_t>(v));
}

void value::array_t::push_float(double v) {
  if (elem_ == value_type::f32) {
    const float f = static_cast<float>(v);
    const auto* p = reinterpret_cast<const uint8_t*>(&f);
    bytes_.insert(bytes_.end(), p, p + 4);
  } else if (elem_ == value_type::f64) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    bytes_.insert(bytes_.end(), p, p + 8);
  } else {
    wrong_kind(elem_, "a float");
  }
  ++n_;
}

void value::array_t::push_bool(bool v) {
  if (elem_ != value_type::boolean) wrong_kind(elem_, "a bool");
  bytes_.push_back(v ? 1 : 0);
  ++n_;
}

void value::array_t::push_string(std::string_view s) {
  if (elem_ != value_type::string) wrong_kind(elem_, "a string");
  bytes_.insert(bytes_.end(), s.begin(), s.end());
  ends_.push_back(bytes_.size());
  ++n_;
}

void value::array_t::push_array(array_t a) {
  if (elem_ != value_type::array) wrong_kind(elem_, "an array");
  value v;
  v.type = value_type::array;
  v.v = std::move(a);
  nested_.push_back(std::move(v));
  ++n_;
}

void value::array_t::reserve(size_t n, size_t string_bytes) {
  switch (elem_) {
    case value_type::string:
      ends_.reserve(n);
      bytes_.reserve(string_bytes);
      break;
    case value_type::array: nested_.reserve(n); break;
    default: bytes_.reserve(n * encoded_size(elem_));
  }
}

size_t value::array_t::heap_bytes() const {
  size_t b = bytes_.capacity() + ends_.capacity() * sizeof(uint64_t) + nested_.capacity() * sizeof(value);
  for (const value& v : nested_)
    if (const auto* a = v.as_array()) b += a->heap_bytes();
  return b;
}

// ---- tensor_info ----

int64_t tensor_info::n_elements() const {
  int64_t n = 1;
  for (int64_t d : ne) n *= d;  // checked against overflow when the file was read
  return n;
}

int64_t tensor_info::n_rows() const {
  int64_t n = 1;
  for (size_t i = 1; i < ne.size(); ++i) n *= ne[i];
  return n;
}

}  // namespace qf::infer::gguf
