// Test helpers: a uniquely named file or directory under the temp directory,
// removed on scope exit.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace qf::test {

// A path under the temp directory that no other call in this process returns
// ("qf_<tag>_<pid>_<n><suffix>"); nothing is created there.
inline std::filesystem::path unique_temp_path(const std::string& tag, const std::string& suffix = {}) {
  static std::atomic<int> counter{0};
  return std::filesystem::temp_directory_path() /
         ("qf_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + suffix);
}

// A fresh, empty directory at a unique_temp_path (its canonical path),
// removed with all it holds on scope exit.
class temp_dir {
 public:
  explicit temp_dir(const std::string& tag) : path_(unique_temp_path(tag)) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
    path_ = std::filesystem::canonical(path_);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

class temp_file {
 public:
  explicit temp_file(const std::string& tag) : path_(unique_temp_path(tag, ".gguf").string()) {}
  ~temp_file() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

  void write(const std::vector<uint8_t>& bytes) const {
    FILE* f = std::fopen(path_.c_str(), "wb");
    if (!bytes.empty()) std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  std::vector<uint8_t> read() const {
    std::vector<uint8_t> out;
    FILE* f = std::fopen(path_.c_str(), "rb");
    if (!f) return out;
    std::fseek(f, 0, SEEK_END);
    out.resize(static_cast<size_t>(std::ftell(f)));
    std::fseek(f, 0, SEEK_SET);
    if (!out.empty() && std::fread(out.data(), 1, out.size(), f) != out.size()) out.clear();
    std::fclose(f);
    return out;
  }

 private:
  std::string path_;
};

// Little-endian byte builder for hand-made (often malformed) GGUF files.
struct byte_builder {
  std::vector<uint8_t> b;
  template <class T>
  byte_builder& put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    b.insert(b.end(), p, p + sizeof(T));
    return *this;
  }
  byte_builder& str(const std::string& s) {
    put<uint64_t>(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  byte_builder& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    put<uint32_t>(0x46554747);
    put<uint32_t>(version);
    put<uint64_t>(n_tensors);
    put<uint64_t>(n_kv);
    return *this;
  }
  byte_builder& pad_to(size_t align) {
    while (b.size() % align) b.push_back(0);
    return *this;
  }
};

}  // namespace qf::test
