// GGUF v3 writer in the standard layout: header, metadata, tensor infos, zero
// padding to the alignment, then each tensor's bytes padded to the alignment
// (the layout llama.cpp's own writer produces, so other tools load the file).
// Tensor bytes may be produced lazily while writing, one tensor at a time.
#include <cstdio>
#include <cstring>
#include <memory>

#include "inference/gguf/gguf.h"

namespace qf::infer::gguf {
namespace {

struct pending_tensor {
  std::string name;
  ggml_type type{};
  std::vector<int64_t> ne;
  size_t n_bytes = 0;
  std::vector<uint8_t> data;
  std::function<std::vector<uint8_t>()> produce;
};

void put_bytes(std::vector<uint8_t>& out, const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  out.insert(out.end(), b, b + n);
}
template <class T>
void put(std::vector<uint8_t>& out, T v) {
  put_bytes(out, &v, sizeof(T));
}
void put_string(std::vector<uint8_t>& out, const std::string& s) {
  put<uint64_t>(out, s.size());
  put_bytes(out, s.data(), s.size());
}

void put_value(std::vector<uint8_t>& out, const value& v, bool with_type) {
  if (with_type) put<uint32_t>(out, static_cast<uint32_t>(v.type));
  auto u = [&] { return std::get<uint64_t>(v.v); };
  auto i = [&] { return std::get<int64_t>(v.v); };
  switch (v.type) {
    case value_type::u8: put<uint8_t>(out, static_cast<uint8_t>(u())); break;
    case value_type::i8: put<int8_t>(out, static_cast<int8_t>(i())); break;
    case value_type::u16: put<uint16_t>(out, static_cast<uint16_t>(u())); break;
    case value_type::i16: put<int16_t>(out, static_cast<int16_t>(i())); break;
    case value_type::u32: put<uint32_t>(out, static_cast<uint32_t>(u())); break;
    case value_type::i32: put<int32_t>(out, static_cast<int32_t>(i())); break;
    case value_type::u64: put<uint64_t>(out, u()); break;
    case value_type::i64: put<int64_t>(out, i()); break;
    case value_type::f32: put<float>(out, static_cast<float>(std::get<double>(v.v))); break;
    case value_type::f64: put<double>(out, std::get<double>(v.v)); break;
    case value_type::boolean: put<uint8_t>(out, std::get<bool>(v.v) ? 1 : 0); break;
    case value_type::string: put_string(out, std::get<std::string>(v.v)); break;
    case value_type::array: {
      const auto& a = std::get<value::array_t>(v.v);
      put<uint32_t>(out, static_cast<uint32_t>(a.elem_type));
      put<uint64_t>(out, a.items.size());
      for (const auto& it : a.items) {
        if (it.type != a.elem_type) throw gguf_error("gguf writer: array element of the wrong type");
        put_value(out, it, false);
      }
      break;
    }
  }
}

value make_scalar(value_type t, std::variant<uint64_t, int64_t, double, bool, std::string, value::array_t> v) {
  value out;
  out.type = t;
  out.v = std::move(v);
  return out;
}

}  // namespace

struct writer::impl {
  uint32_t alignment = 32;
  std::vector<std::pair<std::string, value>> kv;
  std::vector<pending_tensor> tensors;

  void add(std::string key, value v) {
    for (auto& [k, old] : kv)
      if (k == key) {
        old = std::move(v);
        return;
      }
    kv.emplace_back(std::move(key), std::move(v));
  }
};

writer::writer() : impl_(std::make_unique<impl>()) {}
writer::~writer() = default;

void writer::set_alignment(uint32_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    throw gguf_error("gguf writer: alignment must be a power of two");
  impl_->alignment = alignment;
}

void writer::add_u32(std::string key, uint32_t v) { impl_->add(std::move(key), make_scalar(value_type::u32, uint64_t{v})); }
void writer::add_i32(std::string key, int32_t v) { impl_->add(std::move(key), make_scalar(value_type::i32, int64_t{v})); }
void writer::add_u64(std::string key, uint64_t v) { impl_->add(std::move(key), make_scalar(value_type::u64, v)); }
void writer::add_f32(std::string key, float v) { impl_->add(std::move(key), make_scalar(value_type::f32, double{v})); }
void writer::add_bool(std::string key, bool v) { impl_->add(std::move(key), make_scalar(value_type::boolean, v)); }
void writer::add_string(std::string key, std::string v) {
  impl_->add(std::move(key), make_scalar(value_type::string, std::move(v)));
}
void writer::add_string_array(std::string key, std::vector<std::string> v) {
  value::array_t a{value_type::string, {}};
  a.items.reserve(v.size());
  for (auto& s : v) a.items.push_back(make_scalar(value_type::string, std::move(s)));
  impl_->add(std::move(key), make_scalar(value_type::array, std::move(a)));
}
void writer::add_f32_array(std::string key, std::vector<float> v) {
  value::array_t a{value_type::f32, {}};
  a.items.reserve(v.size());
  for (float f : v) a.items.push_back(make_scalar(value_type::f32, double{f}));
  impl_->add(std::move(key), make_scalar(value_type::array, std::move(a)));
}
void writer::add_i32_array(std::string key, std::vector<int32_t> v) {
  value::array_t a{value_type::i32, {}};
  a.items.reserve(v.size());
  for (int32_t i : v) a.items.push_back(make_scalar(value_type::i32, int64_t{i}));
  impl_->add(std::move(key), make_scalar(value_type::array, std::move(a)));
}
void writer::add_value(std::string key, value v) { impl_->add(std::move(key), std::move(v)); }

static size_t checked_tensor_bytes(const std::string& name, ggml_type type, const std::vector<int64_t>& ne) {
  if (ne.empty() || ne.size() > 4) throw gguf_error("gguf writer: tensor '" + name + "' needs 1..4 dimensions");
  auto rs = row_size(type, ne[0]);
  if (!rs) throw gguf_error("gguf writer: tensor '" + name + "' row length does not fit the type's block size");
  size_t n = *rs;
  for (size_t i = 1; i < ne.size(); ++i) {
    if (ne[i] < 0) throw gguf_error("gguf writer: tensor '" + name + "' has a negative dimension");
    n *= static_cast<size_t>(ne[i]);
  }
  return n;
}

void writer::add_tensor(std::string name, ggml_type type, std::vector<int64_t> ne, std::vector<uint8_t> data) {
  size_t n = checked_tensor_bytes(name, type, ne);
  if (data.size() != n)
    throw gguf_error("gguf writer: tensor '" + name + "' has " + std::to_string(data.size()) + " bytes, expected " +
                     std::to_string(n));
  impl_->tensors.push_back({std::move(name), type, std::move(ne), n, std::move(data), {}});
}

void writer::add_tensor(std::string name, ggml_type type, std::vector<int64_t> ne,
                        std::function<std::vector<uint8_t>()> produce) {
  size_t n = checked_tensor_bytes(name, type, ne);
  impl_->tensors.push_back({std::move(name), type, std::move(ne), n, {}, std::move(produce)});
}

void writer::write(const std::string& path) const {
  const uint64_t align = impl_->alignment;
  auto kv = impl_->kv;
  bool has_align = false;
  for (auto& [k, v] : kv)
    if (k == "general.alignment") {
      v = make_scalar(value_type::u32, uint64_t{align});
      has_align = true;
    }
  if (!has_align && align != 32) kv.emplace_back("general.alignment", make_scalar(value_type::u32, uint64_t{align}));

  std::vector<uint8_t> head;
  put<uint32_t>(head, 0x46554747);
  put<uint32_t>(head, 3);
  put<uint64_t>(head, impl_->tensors.size());
  put<uint64_t>(head, kv.size());
  for (const auto& [k, v] : kv) {
    put_string(head, k);
    put_value(head, v, true);
  }
  uint64_t offset = 0;
  for (const auto& t : impl_->tensors) {
    put_string(head, t.name);
    put<uint32_t>(head, static_cast<uint32_t>(t.ne.size()));
    for (int64_t d : t.ne) put<int64_t>(head, d);
    put<uint32_t>(head, static_cast<uint32_t>(t.type));
    put<uint64_t>(head, offset);
    offset += (t.n_bytes + align - 1) / align * align;
  }
  head.resize((head.size() + align - 1) / align * align, 0);

  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) throw gguf_error("gguf writer: cannot create '" + path + "': " + std::strerror(errno));
  auto write_all = [&](const void* p, size_t n) {
    if (n != 0 && std::fwrite(p, 1, n, f.get()) != n)
      throw gguf_error("gguf writer: write to '" + path + "' failed: " + std::strerror(errno));
  };
  write_all(head.data(), head.size());
  static const uint8_t zeros[256] = {};
  for (const auto& t : impl_->tensors) {
    if (t.produce) {
      std::vector<uint8_t> bytes = t.produce();
      if (bytes.size() != t.n_bytes)
        throw gguf_error("gguf writer: tensor '" + t.name + "' produced " + std::to_string(bytes.size()) +
                         " bytes, expected " + std::to_string(t.n_bytes));
      write_all(bytes.data(), bytes.size());
    } else {
      write_all(t.data.data(), t.data.size());
    }
    size_t pad = static_cast<size_t>((t.n_bytes + align - 1) / align * align - t.n_bytes);
    while (pad > 0) {
      size_t n = pad < sizeof zeros ? pad : sizeof zeros;
      write_all(zeros, n);
      pad -= n;
    }
  }
  if (std::fflush(f.get()) != 0) throw gguf_error("gguf writer: flush of '" + path + "' failed");
  FILE* raw = f.release();
  if (std::fclose(raw) != 0) throw gguf_error("gguf writer: close of '" + path + "' failed");
}

}  // namespace qf::infer::gguf
