// GGUF v2/v3 reader over the file's bytes, copied into memory the process
// owns (or, on request, a read-only mapping; see gguf.h).
//
// The copy is an anonymous mapping (2 MiB-aligned and advised for huge pages,
// inference/core/huge_pages.h) filled with pread(): a file that shrinks
// while it is read gives a short read, and one whose size or modification time
// differs afterwards is refused, so a concurrent rewrite is never half-loaded.
// Once parsed, the pages before the tensor data section (header, metadata) are
// unmapped: metadata lives on in parsed form, and a vocabulary-only file keeps
// nothing mapped.
//
// Parsing goes through `cursor`, which checks every read against the end of
// the mapping before touching memory. Counts are bounded twice: by absolute
// limits (no vocabulary has 2^40 entries) and by the bytes left in the file
// (each element needs at least its minimum encoded size), so a hostile count
// can neither overflow arithmetic nor trigger a huge allocation. After the
// tensor infos are read, every tensor's byte range is checked to be aligned,
// inside the file and disjoint from the others.
//
// What parsing allocates is bounded too (`budget`): every kept key, value,
// array buffer, nested array and tensor info is charged before it is
// allocated, and the total may not pass twice the bytes of the file parsed so
// far plus 16 MiB, nor 1 GiB. Without it an array of empty arrays (12 bytes
// each in the file, a `value` of about 100 bytes each in memory) or a flood of
// tiny keys made a hostile header take ~9x its size in memory; a real model's
// metadata (its vocabulary: about 1x) stays far below the bound.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <unordered_set>

#include "inference/core/huge_pages.h"
#include "inference/gguf/gguf.h"

namespace qf::infer::gguf {
namespace {

constexpr uint32_t k_magic = 0x46554747;  // "GGUF" little-endian
constexpr uint64_t k_max_string = 1ull << 30;
constexpr uint64_t k_max_array = 1ull << 24;  // 16M elements: far above any vocabulary
constexpr uint64_t k_max_kv = 1ull << 20;
constexpr uint64_t k_max_tensors = 1ull << 20;
constexpr uint32_t k_max_dims = 4;
constexpr int k_max_depth = 4;  // no known model nests arrays at all
// The memory parsed metadata and tensor infos may take (see `budget`).
constexpr uint64_t k_metadata_ratio = 2;             // bytes of memory per byte of file parsed
constexpr uint64_t k_metadata_slack = 16ull << 20;   // on top of that
constexpr uint64_t k_max_metadata_bytes = 1ull << 30;
// What a node of a std::unordered_set<std::string> costs beyond the string's
// own heap buffer (the node, its hash, the bucket pointer), for the charges.
constexpr uint64_t k_set_node_bytes = sizeof(std::string) + 3 * sizeof(void*);

[[noreturn]] void fail(const std::string& what) { throw gguf_error("gguf: " + what); }

class cursor {
 public:
  cursor(const uint8_t* base, size_t size) : base_(base), size_(size) {}
  size_t pos() const { return pos_; }
  size_t left() const { return size_ - pos_; }

  void need(uint64_t n, const char* what) const {
    if (n > left())
      fail(std::string("truncated file: ") + what + " needs " + std::to_string(n) + " bytes at offset " +
           std::to_string(pos_) + ", only " + std::to_string(left()) + " left");
  }
  template <class T>
  T read(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, base_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string_view read_string_view(const char* what) {
    uint64_t len = read<uint64_t>(what);
    if (len > k_max_string) fail(std::string(what) + ": string length " + std::to_string(len) + " is absurd");
    need(len, what);
    std::string_view s(reinterpret_cast<const char*>(base_ + pos_), static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
    return s;
  }
  std::string read_string(const char* what) { return std::string(read_string_view(what)); }
  const uint8_t* take(uint64_t n, const char* what) {
    need(n, what);
    const uint8_t* p = base_ + pos_;
    pos_ += static_cast<size_t>(n);
    return p;
  }
  void seek(size_t pos) { pos_ = pos; }

 private:
  const uint8_t* base_;
  size_t size_;
  size_t pos_ = 0;
};

// The memory parsing has allocated, charged before each allocation: a charge
// that would pass min(k_metadata_slack + k_metadata_ratio * bytes parsed,
// k_max_metadata_bytes) fails with gguf_error. `upto` is the file offset the
// charged bytes stand for (the end of what they are read from), so a large
// array is measured against its own encoded size.
class budget {
 public:
  void charge(uint64_t bytes, uint64_t upto, const std::string& what) {
    used_ += bytes;
    const uint64_t allowed = std::min(k_max_metadata_bytes, k_metadata_slack + k_metadata_ratio * upto);
    if (used_ > allowed)
      fail(what + ": the metadata would take more than " + std::to_string(allowed) + " bytes of memory (" +
           std::to_string(used_) + " needed for the first " + std::to_string(upto) +
           " bytes of the file; the limit is 16 MiB + 2x the bytes parsed, at most 1 GiB): a hostile or broken file");
  }
  uint64_t used() const { return used_; }

 private:
  uint64_t used_ = 0;
};

// Heap bytes a std::string of this length holds (0 within the small-string buffer).
uint64_t string_heap(uint64_t len) { return len < sizeof(std::string) ? 0 : len + 1; }

// Smallest number of bytes one encoded value of type t occupies.
uint64_t min_encoded_size(value_type t) {
  switch (t) {
    case value_type::u8: case value_type::i8: case value_type::boolean: return 1;
    case value_type::u16: case value_type::i16: return 2;
    case value_type::u32: case value_type::i32: case value_type::f32: return 4;
    case value_type::u64: case value_type::i64: case value_type::f64: case value_type::string: return 8;
    case value_type::array: return 12;
  }
  return 1;
}

bool valid_value_type(uint32_t t) { return t <= 12; }

value read_value(cursor& c, value_type t, const std::string& key, int depth, budget& b);

}  // namespace

// Fills arrays in bulk (a friend of value::array_t): numbers as one copy of
// their encoded bytes, strings in two passes (sizes, then one exact buffer).
struct array_builder {
  static value::array_t read(cursor& c, value_type elem, uint64_t n, const std::string& key, int depth,
                             budget& b) {
    value::array_t a(elem);
    const size_t count = static_cast<size_t>(n);
    if (elem == value_type::string) {
      const size_t start = c.pos();
      uint64_t total = 0;
      for (size_t i = 0; i < count; ++i) total += c.read_string_view("string array element").size();
      b.charge(total + count * sizeof(uint64_t), c.pos(), "key '" + key + "'");
      c.seek(start);
      a.ends_.reserve(count);
      a.bytes_.reserve(static_cast<size_t>(total));
      for (size_t i = 0; i < count; ++i) {
        std::string_view s = c.read_string_view("string array element");
        a.bytes_.insert(a.bytes_.end(), s.begin(), s.end());
        a.ends_.push_back(a.bytes_.size());
      }
    } else if (elem == value_type::array) {
      // Each element takes at least 12 bytes of the file and a whole `value` in memory.
      b.charge(count * sizeof(value), c.pos() + count * min_encoded_size(elem), "key '" + key + "'");
      a.nested_.reserve(count);
      for (size_t i = 0; i < count; ++i) a.nested_.push_back(read_value(c, elem, key, depth + 1, b));
    } else {
      const size_t es = encoded_size(elem);
      b.charge(static_cast<uint64_t>(count) * es, c.pos() + static_cast<uint64_t>(count) * es, "key '" + key + "'");
      const uint8_t* p = c.take(static_cast<uint64_t>(count) * es, "array elements");
      if (elem == value_type::boolean)
        for (size_t i = 0; i < count; ++i)
          if (p[i] > 1)
            fail("key '" + key + "': bool array element " + std::to_string(i) + " is " + std::to_string(p[i]) +
                 ", neither 0 nor 1");
      a.bytes_.assign(p, p + count * es);
    }
    a.n_ = count;
    return a;
  }
};

namespace {

value read_array(cursor& c, const std::string& key, int depth, budget& b) {
  if (depth > k_max_depth) fail("key '" + key + "': arrays nested deeper than " + std::to_string(k_max_depth));
  uint32_t et = c.read<uint32_t>("array element type");
  if (!valid_value_type(et))
    fail("key '" + key + "': unknown array element type " + std::to_string(et) + " (supported 0..12)");
  uint64_t n = c.read<uint64_t>("array length");
  auto elem = static_cast<value_type>(et);
  if (n > k_max_array || n > c.left() / min_encoded_size(elem))
    fail("key '" + key + "': array length " + std::to_string(n) + " exceeds what the file can hold (" +
         std::to_string(c.left()) + " bytes left)");
  value out;
  out.type = value_type::array;
  out.v = array_builder::read(c, elem, n, key, depth, b);
  return out;
}

value read_value(cursor& c, value_type t, const std::string& key, int depth, budget& b) {
  value out;
  out.type = t;
  switch (t) {
    case value_type::u8: out.v = uint64_t{c.read<uint8_t>("u8 value")}; break;
    case value_type::i8: out.v = int64_t{c.read<int8_t>("i8 value")}; break;
    case value_type::u16: out.v = uint64_t{c.read<uint16_t>("u16 value")}; break;
    case value_type::i16: out.v = int64_t{c.read<int16_t>("i16 value")}; break;
    case value_type::u32: out.v = uint64_t{c.read<uint32_t>("u32 value")}; break;
    case value_type::i32: out.v = int64_t{c.read<int32_t>("i32 value")}; break;
    case value_type::u64: out.v = c.read<uint64_t>("u64 value"); break;
    case value_type::i64: out.v = c.read<int64_t>("i64 value"); break;
    case value_type::f32: out.v = double{c.read<float>("f32 value")}; break;
    case value_type::f64: out.v = c.read<double>("f64 value"); break;
    case value_type::boolean: {
      uint8_t b = c.read<uint8_t>("bool value");
      if (b > 1) fail("key '" + key + "': bool value " + std::to_string(b) + " is neither 0 nor 1");
      out.v = b != 0;
      break;
    }
    case value_type::string: {
      const std::string_view s = c.read_string_view("string value");
      b.charge(string_heap(s.size()), c.pos(), "key '" + key + "'");
      out.v = std::string(s);
      break;
    }
    case value_type::array: return read_array(c, key, depth, b);
  }
  return out;
}

}  // namespace

struct file::impl {
  std::string path;
  // The whole file while parsing; afterwards only [map_offset, size) stays mapped.
  const uint8_t* base = nullptr;
  size_t size = 0;
  uint8_t* map = nullptr;   // start of what is still mapped (file offset map_offset)
  size_t map_len = 0;
  size_t map_offset = 0;
  uint32_t version = 0;
  size_t alignment = 32;
  uint64_t data_offset = 0;
  std::vector<std::pair<std::string, value>> kv;
  std::vector<tensor_info> tensors;
  std::unordered_set<uint64_t> released;  // offsets of the tensors release_tensor freed
  size_t released_bytes = 0;
  uint64_t metadata_bytes = 0;  // what parsing charged (see budget)

  ~impl() { unmap_all(); }
  void parse();
  void unmap_all() {
    if (map && map_len) munmap(map, map_len);
    map = nullptr;
    map_len = 0;
  }
  // Unmaps the whole pages before the tensor data section (all of them when
  // there are no tensors): after parsing, only tensor bytes are read.
  void drop_header_pages() {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t cut = tensors.empty() ? map_len : static_cast<size_t>(data_offset) / page * page;
    if (cut >= map_len) {
      unmap_all();
      map_offset = size;
    } else if (cut > 0) {
      munmap(map, cut);
      map += cut;
      map_len -= cut;
      map_offset = cut;
    }
    base = nullptr;  // the header bytes are gone
  }
};

void file::impl::parse() {
  cursor c(base, size);
  uint32_t magic = c.read<uint32_t>("magic");
  if (magic != k_magic) fail("not a GGUF file (bad magic) : " + path);
  version = c.read<uint32_t>("version");
  if (version != 2 && version != 3)
    fail("unsupported GGUF version " + std::to_string(version) + " (supported: 2, 3)");
  uint64_t n_tensors = c.read<uint64_t>("tensor count");
  uint64_t n_kv = c.read<uint64_t>("metadata count");
  // A key/value needs >= 8 (key length) + 4 (type) + 1 bytes; a tensor info >= 8 + 4 + 8 + 4 + 8.
  if (n_kv > k_max_kv || n_kv > c.left() / 13)
    fail("metadata count " + std::to_string(n_kv) + " exceeds what the file can hold");
  if (n_tensors > k_max_tensors || n_tensors > c.left() / 32)
    fail("tensor count " + std::to_string(n_tensors) + " exceeds what the file can hold");

  budget b;
  b.charge(n_kv * sizeof(kv[0]) + n_tensors * sizeof(tensor_info), c.pos() + n_kv * 13 + n_tensors * 32,
           "metadata count " + std::to_string(n_kv) + " and tensor count " + std::to_string(n_tensors));
  std::unordered_set<std::string> keys;
  kv.reserve(static_cast<size_t>(n_kv));
  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key = c.read_string("metadata key");
    uint32_t t = c.read<uint32_t>("metadata value type");
    if (!valid_value_type(t))
      fail("key '" + key + "': unknown value type " + std::to_string(t) + " (supported 0..12)");
    b.charge(2 * string_heap(key.size()) + k_set_node_bytes, c.pos(), "key '" + key + "'");
    if (!keys.insert(key).second) fail("duplicate metadata key '" + key + "'");
    value v = read_value(c, static_cast<value_type>(t), key, 0, b);
    kv.emplace_back(std::move(key), std::move(v));
  }
  for (const auto& [k, v] : kv) {
    if (k != "general.alignment") continue;
    auto a = v.as_int();
    if (v.type != value_type::u32 || !a || *a == 0 || (*a & (*a - 1)) != 0 || *a > (1 << 20))
      fail("general.alignment must be a u32 power of two (got " + (a ? std::to_string(*a) : "non-integer") + ")");
    alignment = static_cast<size_t>(*a);
  }

  std::unordered_set<std::string> names;
  tensors.reserve(static_cast<size_t>(n_tensors));
  for (uint64_t i = 0; i < n_tensors; ++i) {
    tensor_info ti;
    ti.name = c.read_string("tensor name");
    if (!names.insert(ti.name).second) fail("duplicate tensor name '" + ti.name + "'");
    uint32_t n_dims = c.read<uint32_t>("tensor dimension count");
    if (n_dims == 0 || n_dims > k_max_dims)
      fail("tensor '" + ti.name + "': " + std::to_string(n_dims) + " dimensions (supported 1.." +
           std::to_string(k_max_dims) + ")");
    b.charge(2 * string_heap(ti.name.size()) + k_set_node_bytes + n_dims * sizeof(int64_t), c.pos(),
             "tensor '" + ti.name + "'");
    // The product of the nonzero dimensions bounds every product of a subset
    // of them (element count, row count), zero dimensions included.
    int64_t bound = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      int64_t ne = c.read<int64_t>("tensor dimension");
      if (ne < 0) fail("tensor '" + ti.name + "': negative dimension " + std::to_string(ne));
      if (ne != 0 && bound > std::numeric_limits<int64_t>::max() / ne)
        fail("tensor '" + ti.name + "': element count overflows");
      if (ne != 0) bound *= ne;
      ti.ne.push_back(ne);
    }
    uint32_t type = c.read<uint32_t>("tensor type");
    auto tr = traits_of(type);
    if (!tr || type == static_cast<uint32_t>(ggml_type::q8_k))
      fail("tensor '" + ti.name + "': unsupported tensor type " + std::to_string(type) + " (supported: " +
           std::string(supported_type_names()) + ")");
    ti.type = static_cast<ggml_type>(type);
    auto rs = row_size(ti.type, ti.ne[0]);
    if (!rs)
      fail("tensor '" + ti.name + "': row length " + std::to_string(ti.ne[0]) + " is not a multiple of the " +
           std::string(tr->name) + " block size " + std::to_string(tr->block_size));
    uint64_t rows = static_cast<uint64_t>(ti.n_rows());
    if (rows != 0 && *rs > std::numeric_limits<uint64_t>::max() / rows)
      fail("tensor '" + ti.name + "': byte size overflows");
    ti.n_bytes = static_cast<size_t>(*rs * rows);
    ti.offset = c.read<uint64_t>("tensor offset");
    tensors.push_back(std::move(ti));
  }

  metadata_bytes = b.used();
  uint64_t pos = c.pos();
  data_offset = (pos + alignment - 1) / alignment * alignment;
  if (data_offset > size && !tensors.empty()) fail("truncated file: tensor data section starts past the end");
  uint64_t data_size = data_offset <= size ? size - data_offset : 0;

  std::vector<const tensor_info*> by_offset;
  for (const auto& t : tensors) {
    if (t.offset % alignment != 0)
      fail("tensor '" + t.name + "': offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
           std::to_string(alignment));
    if (t.offset > data_size || t.n_bytes > data_size - t.offset)
      fail("tensor '" + t.name + "': data [" + std::to_string(t.offset) + ", +" + std::to_string(t.n_bytes) +
           ") lies outside the file's data section (" + std::to_string(data_size) + " bytes)");
    by_offset.push_back(&t);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const tensor_info* a, const tensor_info* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const auto* a = by_offset[i - 1];
    const auto* b = by_offset[i];
    if (a->offset + a->n_bytes > b->offset)
      fail("tensors '" + a->name + "' and '" + b->name + "' overlap");
  }
}

file::file() : impl_(std::make_unique<impl>()) {}
file::~file() = default;

namespace {

// Reads the whole file into a fresh anonymous mapping; refuses a file that
// changed (size, modification or status-change time) while being read.
uint8_t* read_private_copy(int fd, const std::string& path, const struct stat& before) {
  const size_t size = static_cast<size_t>(before.st_size);
  void* p = map_huge(size);  // huge pages where the kernel allows: decode streams these bytes
  if (!p)
    fail("cannot allocate " + std::to_string(size) + " bytes for '" + path + "': " + std::strerror(errno));
  auto* dst = static_cast<uint8_t*>(p);
  size_t done = 0;
  while (done < size) {
    const size_t want = std::min<size_t>(size - done, size_t{1} << 30);
    const ssize_t r = ::pread(fd, dst + done, want, static_cast<off_t>(done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      const int err = r < 0 ? errno : 0;
      munmap(p, size);
      if (err != 0) fail("cannot read '" + path + "': " + std::strerror(err));
      fail("'" + path + "' shrank from " + std::to_string(size) + " to " + std::to_string(done) +
           " bytes while being read (is it being rewritten?)");
    }
    done += static_cast<size_t>(r);
  }
  struct stat after {};
  if (fstat(fd, &after) != 0 || after.st_size != before.st_size ||
      after.st_mtim.tv_sec != before.st_mtim.tv_sec || after.st_mtim.tv_nsec != before.st_mtim.tv_nsec ||
      after.st_ctim.tv_sec != before.st_ctim.tv_sec || after.st_ctim.tv_nsec != before.st_ctim.tv_nsec) {
    munmap(p, size);
    fail("'" + path + "' changed while being read (is it being rewritten?)");
  }
  mprotect(p, size, PROT_READ);  // nothing writes the copy
  return dst;
}

}  // namespace

std::unique_ptr<file> file::open(const std::string& path, data_storage storage) {
  std::unique_ptr<file> f(new file());
  impl& m = *f->impl_;
  m.path = path;
  // O_NONBLOCK: a FIFO at the path does not hang the open (fstat refuses it
  // below); reads of a regular file ignore the flag.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("'" + path + "' is not a regular file");
  }
  if (st.st_size == 0) {
    ::close(fd);
    fail("truncated file: '" + path + "' is empty");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  uint8_t* p = nullptr;
  if (storage == data_storage::mapped) {
    void* mp = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mp == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      fail("cannot map '" + path + "': " + std::strerror(err));
    }
    p = static_cast<uint8_t*>(mp);
  } else {
    try {
      p = read_private_copy(fd, path, st);
    } catch (...) {
      ::close(fd);
      throw;
    }
  }
  ::close(fd);
  m.map = p;
  m.map_len = size;
  m.base = p;
  m.size = size;
  m.parse();
  m.drop_header_pages();
  return f;
}

uint32_t file::version() const { return impl_->version; }
size_t file::alignment() const { return impl_->alignment; }
const std::string& file::path() const { return impl_->path; }
uint64_t file::data_offset() const { return impl_->data_offset; }
const std::vector<std::pair<std::string, value>>& file::metadata() const { return impl_->kv; }
const std::vector<tensor_info>& file::tensors() const { return impl_->tensors; }

const value* file::find(std::string_view key) const {
  for (const auto& [k, v] : impl_->kv)
    if (k == key) return &v;
  return nullptr;
}
std::optional<int64_t> file::get_int(std::string_view key) const {
  const value* v = find(key);
  return v ? v->as_int() : std::nullopt;
}
std::optional<double> file::get_float(std::string_view key) const {
  const value* v = find(key);
  return v ? v->as_float() : std::nullopt;
}
std::optional<bool> file::get_bool(std::string_view key) const {
  const value* v = find(key);
  return v ? v->as_bool() : std::nullopt;
}
std::optional<std::string> file::get_string(std::string_view key) const {
  const value* v = find(key);
  if (!v || !v->as_string()) return std::nullopt;
  return *v->as_string();
}
std::optional<std::vector<std::string>> file::get_string_array(std::string_view key) const {
  const value* v = find(key);
  const auto* a = v ? v->as_array() : nullptr;
  if (!a || a->elem_type() != value_type::string) return std::nullopt;
  std::vector<std::string> out;
  out.reserve(a->size());
  for (size_t i = 0; i < a->size(); ++i) out.emplace_back(a->string_at(i));
  return out;
}
std::optional<std::vector<float>> file::get_float_array(std::string_view key) const {
  const value* v = find(key);
  const auto* a = v ? v->as_array() : nullptr;
  if (!a || (a->elem_type() != value_type::f32 && a->elem_type() != value_type::f64)) return std::nullopt;
  std::vector<float> out(a->size());
  if (a->elem_type() == value_type::f32 && !out.empty()) {
    std::memcpy(out.data(), a->encoded().data(), out.size() * sizeof(float));
  } else {
    for (size_t i = 0; i < a->size(); ++i) out[i] = static_cast<float>(*a->float_at(i));
  }
  return out;
}
std::optional<std::vector<int64_t>> file::get_int_array(std::string_view key) const {
  const value* v = find(key);
  const auto* a = v ? v->as_array() : nullptr;
  if (!a) return std::nullopt;
  switch (a->elem_type()) {
    case value_type::u8: case value_type::i8: case value_type::u16: case value_type::i16:
    case value_type::u32: case value_type::i32: case value_type::u64: case value_type::i64: break;
    default: return std::nullopt;
  }
  std::vector<int64_t> out;
  out.reserve(a->size());
  for (size_t i = 0; i < a->size(); ++i) {
    auto x = a->int_at(i);
    if (!x) return std::nullopt;
    out.push_back(*x);
  }
  return out;
}

const tensor_info* file::find_tensor(std::string_view name) const {
  for (const auto& t : impl_->tensors)
    if (t.name == name) return &t;
  return nullptr;
}

const uint8_t* file::tensor_data(const tensor_info& t) const {
  const impl& m = *impl_;
  static const uint8_t k_empty = 0;
  if (t.n_bytes == 0) return &k_empty;  // nothing to read, wherever it sits
  const uint64_t at = m.data_offset + t.offset;  // checked at open: inside the file
  if (!m.map || at < m.map_offset || at - m.map_offset + t.n_bytes > m.map_len || m.released.count(t.offset))
    fail("tensor '" + t.name + "': data of '" + m.path + "' is no longer held (released after upload)");
  return m.map + (at - m.map_offset);
}

void file::release_tensor(const tensor_info& t) {
  impl& m = *impl_;
  if (t.n_bytes == 0) return;  // holds nothing (and may share its offset with the next tensor)
  const uint8_t* p = tensor_data(t);  // throws if already gone
  m.released.insert(t.offset);
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t lo = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(p) + t.n_bytes) / page * page;
  // Both storages are private mappings nothing writes: the pages simply go
  // (a later read would see zeros or the file, but tensor_data refuses it).
  if (hi > lo && madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED) == 0) m.released_bytes += hi - lo;
}

void file::release_tensor_data() {
  impl_->unmap_all();
  impl_->released_bytes = 0;
  impl_->map_offset = impl_->size;
}

uint64_t file::metadata_bytes() const { return impl_->metadata_bytes; }

size_t file::tensor_data_bytes() const { return impl_->map_len - std::min(impl_->map_len, impl_->released_bytes); }

}  // namespace qf::infer::gguf
