// Test helper: a temporary folder tree, removed on scope exit.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

namespace qf::test {

class temp_tree {
 public:
  explicit temp_tree(const std::string& tag) {
    static std::atomic<int> counter{0};
    root_ = std::filesystem::temp_directory_path() /
            ("qf_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
    root_ = std::filesystem::canonical(root_);
  }
  ~temp_tree() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  std::string root() const { return root_.string(); }
  std::string path(const std::string& rel) const { return (root_ / rel).string(); }
  void write(const std::string& rel, const std::string& text) const {
    const auto p = root_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }
  void remove(const std::string& rel) const { std::filesystem::remove_all(root_ / rel); }

 private:
  std::filesystem::path root_;
};

}  // namespace qf::test
