// Test helper: a temporary folder tree (a temp_dir), removed on scope exit.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/temp_file.h"

namespace qf::test {

class temp_tree {
 public:
  explicit temp_tree(const std::string& tag) : dir_(tag) {}
  std::string root() const { return dir_.path().string(); }
  std::string path(const std::string& rel) const { return (dir_.path() / rel).string(); }
  void write(const std::string& rel, const std::string& text) const {
    const auto p = dir_.path() / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }
  void remove(const std::string& rel) const { std::filesystem::remove_all(dir_.path() / rel); }

 private:
  temp_dir dir_;
};

}  // namespace qf::test
