// GGUF v3 writer in the standard layout: header, metadata, tensor infos, zero
// padding to the alignment, then each tensor's bytes padded to the alignment
// (the layout llama.cpp's own writer produces, so other tools load the file).
// Tensor bytes may be produced lazily while writing, one tensor at a time.
//
// The bytes go to a temporary file next to the destination (same directory,
// so the rename cannot cross file systems), which is fsynced and renamed over
// the destination; the directory is fsynced after. Until the rename the old
// file is untouched, and a failure removes the temporary. The temporary is
// created with mode 0666 minus the umask, or the replaced file's mode.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
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
      put<uint32_t>(out, static_cast<uint32_t>(a.elem_type()));
      put<uint64_t>(out, a.size());
      if (a.elem_type() == value_type::string) {
        for (size_t k = 0; k < a.size(); ++k) {
          const std::string_view s = a.string_at(k);
          put<uint64_t>(out, s.size());
          put_bytes(out, s.data(), s.size());
        }
      } else if (a.elem_type() == value_type::array) {
        for (size_t k = 0; k < a.size(); ++k) {
          value nested;
          nested.type = value_type::array;
          nested.v = *a.array_at(k);
          put_value(out, nested, false);
        }
      } else {
        put_bytes(out, a.encoded().data(), a.encoded().size());
      }
      break;
    }
  }
}

namespace fs = std::filesystem;

[[noreturn]] void io_fail(const std::string& what) {
  throw gguf_error("gguf writer: " + what + ": " + std::strerror(errno));
}

// The file a write to `path` replaces: a symbolic link's final target (as cp
// writes through a link), else `path` itself.
std::string destination_of(const std::string& path) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(path, ec))) {
    fs::path target = fs::weakly_canonical(path, ec);
    if (!ec && !target.empty()) return target.string();
  }
  return path;
}

// A temporary file next to `dest`, renamed over it by commit(); removed if
// never committed.
class temp_output {
 public:
  explicit temp_output(const std::string& dest) : dest_(dest) {
    const fs::path d(dest);
    dir_ = d.has_parent_path() ? d.parent_path().string() : std::string(".");
    struct stat st {};
    const bool exists = ::stat(dest.c_str(), &st) == 0;
    if (exists && !S_ISREG(st.st_mode))
      throw gguf_error("gguf writer: '" + dest + "' exists and is not a regular file");
    static std::atomic<unsigned> counter{0};
    const std::string stem = d.filename().string().substr(0, 160);
    for (int attempt = 0; fd_ < 0; ++attempt) {
      tmp_ = (fs::path(dir_) / ("." + stem + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++)))
                 .string();
      fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ < 0 && (errno != EEXIST || attempt > 100))
        io_fail("cannot create a temporary file in '" + dir_ + "' for '" + dest + "'");
    }
    if (exists) (void)::fchmod(fd_, st.st_mode & 07777);  // a replacement keeps the replaced file's mode
  }
  ~temp_output() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(tmp_.c_str());
  }
  temp_output(const temp_output&) = delete;
  temp_output& operator=(const temp_output&) = delete;

  const std::string& temp_path() const { return tmp_; }

  void write(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    while (n > 0) {
      const ssize_t w = ::write(fd_, b, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) io_fail("write to '" + tmp_ + "' (for '" + dest_ + "') failed");
      b += w;
      n -= static_cast<size_t>(w);
    }
  }

  void commit() {
    if (::fsync(fd_) != 0) io_fail("fsync of '" + tmp_ + "' failed");
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) io_fail("close of '" + tmp_ + "' failed");
    if (::rename(tmp_.c_str(), dest_.c_str()) != 0) io_fail("cannot rename '" + tmp_ + "' to '" + dest_ + "'");
    committed_ = true;
    const int dfd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {  // makes the rename itself durable
      (void)::fsync(dfd);
      ::close(dfd);
    }
  }

 private:
  std::string dest_, dir_, tmp_;
  int fd_ = -1;
  bool committed_ = false;
};

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
  std::vector<std::string> inputs;  // protect_input()

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
  value::array_t a(value_type::string);
  size_t bytes = 0;
  for (const auto& x : v) bytes += x.size();
  a.reserve(v.size(), bytes);
  for (const auto& x : v) a.push_string(x);
  impl_->add(std::move(key), make_scalar(value_type::array, std::move(a)));
}
void writer::add_f32_array(std::string key, std::vector<float> v) {
  value::array_t a(value_type::f32);
  a.reserve(v.size());
  for (float f : v) a.push_float(f);
  impl_->add(std::move(key), make_scalar(value_type::array, std::move(a)));
}
void writer::add_i32_array(std::string key, std::vector<int32_t> v) {
  value::array_t a(value_type::i32);
  a.reserve(v.size());
  for (int32_t i : v) a.push_int(i);
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

  for (const auto& in : impl_->inputs) check_not_input(in, path);
  temp_output out(destination_of(path));
  out.write(head.data(), head.size());
  static const uint8_t zeros[256] = {};
  for (const auto& t : impl_->tensors) {
    if (t.produce) {
      std::vector<uint8_t> bytes = t.produce();
      if (bytes.size() != t.n_bytes)
        throw gguf_error("gguf writer: tensor '" + t.name + "' produced " + std::to_string(bytes.size()) +
                         " bytes, expected " + std::to_string(t.n_bytes));
      out.write(bytes.data(), bytes.size());
    } else {
      out.write(t.data.data(), t.data.size());
    }
    size_t pad = static_cast<size_t>((t.n_bytes + align - 1) / align * align - t.n_bytes);
    while (pad > 0) {
      size_t n = pad < sizeof zeros ? pad : sizeof zeros;
      out.write(zeros, n);
      pad -= n;
    }
  }
  out.commit();
}

void writer::protect_input(std::string path) { impl_->inputs.push_back(std::move(path)); }

void check_not_input(const std::string& input, const std::string& output) {
  auto refuse = [&](const std::string& how) {
    throw gguf_error("refusing to write '" + output + "': it is the input file '" + input + "'" + how +
                     "; write the output to another path");
  };
  if (input == output) refuse("");
  struct stat in {}, out {};
  if (::stat(input.c_str(), &in) != 0 || ::stat(output.c_str(), &out) != 0) return;  // a missing output is new
  if (in.st_dev == out.st_dev && in.st_ino == out.st_ino) refuse(" (the same file under another name or link)");
}

}  // namespace qf::infer::gguf
