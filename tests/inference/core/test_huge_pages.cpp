// Weight memory (inference/core/huge_pages.h): map_huge gives zeroed,
// writable memory, 2 MiB-aligned and advised for huge pages when it is at
// least one huge page long; huge_arena packs blocks into shared chunks,
// gives large blocks their own mapping, and a chunk lives as long as a block
// in it, even after the arena.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "inference/core/huge_pages.h"

using namespace qf::infer;

namespace {

// The VmFlags line of the mapping that holds p, from /proc/self/smaps ("" if none).
std::string vm_flags(const void* p) {
  std::ifstream f("/proc/self/smaps");
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(f, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = addr >= lo && addr < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

bool thp_possible() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return !s.empty() && s.find("[never]") == std::string::npos;
}

}  // namespace

TEST(huge_pages, a_large_mapping_is_aligned_zeroed_writable_and_advised) {
  const size_t bytes = 3 * k_huge_page + 12345;  // not a multiple of anything
  auto* p = static_cast<uint8_t*>(map_huge(bytes));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % k_huge_page, 0u);
  for (size_t i = 0; i < bytes; i += 4096) ASSERT_EQ(p[i], 0) << i;
  EXPECT_EQ(p[bytes - 1], 0);
  std::memset(p, 0x5A, bytes);
  EXPECT_EQ(p[bytes - 1], 0x5A);
  const std::string flags = vm_flags(p);
  ASSERT_FALSE(flags.empty());
  if (thp_possible()) {
    EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;  // MADV_HUGEPAGE
  }
  EXPECT_EQ(munmap(p, bytes), 0);
}

TEST(huge_pages, a_small_mapping_is_page_aligned_and_zeroed) {
  auto* p = static_cast<uint8_t*>(map_huge(100));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 4096, 0u);
  EXPECT_EQ(p[0], 0);
  EXPECT_EQ(p[99], 0);
  EXPECT_EQ(munmap(p, 100), 0);
  EXPECT_EQ(map_huge(0), nullptr);
}

TEST(huge_pages, the_arena_packs_small_blocks_and_maps_large_ones_alone) {
  std::shared_ptr<uint8_t[]> a, b, big;
  {
    huge_arena arena(4 * k_huge_page);
    a = arena.allocate(100);
    b = arena.allocate(1000);
    big = arena.allocate(3 * k_huge_page);  // more than half a chunk
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.get()) % k_huge_page, 0u);  // a fresh chunk starts aligned
    EXPECT_EQ(b.get(), a.get() + 128);                                          // 100 rounded up to 64 bytes
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(big.get()) % k_huge_page, 0u);
    EXPECT_TRUE(big.get() + 3 * k_huge_page <= a.get() || big.get() >= a.get() + 4 * k_huge_page);
    // A block that does not fit what is left of the chunk starts a new one.
    auto c = arena.allocate(2 * k_huge_page - 64);
    auto d = arena.allocate(2 * k_huge_page);
    EXPECT_EQ(c.get(), a.get() + 128 + 1024);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(d.get()) % k_huge_page, 0u);
    EXPECT_TRUE(d.get() + 2 * k_huge_page <= a.get() || d.get() >= a.get() + 4 * k_huge_page);
    EXPECT_EQ(a.use_count(), b.use_count());  // blocks share their chunk's ownership
  }
  // The arena is gone; its blocks still hold their chunk.
  std::memset(a.get(), 1, 100);
  std::memset(b.get(), 2, 1000);
  std::memset(big.get(), 3, 3 * k_huge_page);
  EXPECT_EQ(a[99], 1);
  EXPECT_EQ(b[999], 2);
  EXPECT_EQ(big[3 * k_huge_page - 1], 3);
}
