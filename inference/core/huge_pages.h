// Memory for weights: anonymous mappings that ask for transparent huge pages.
//
// A decode step streams every weight once, front to back. With 4 KiB pages
// that is a TLB miss every 64 cache lines, and in a virtual machine (the
// 2-core cloud VMs we measure on) each miss is a two-level page walk through
// the guest's and the host's tables, which the hardware prefetchers do not
// hide. A mapping aligned to 2 MiB with MADV_HUGEPAGE gets 2 MiB pages where
// the kernel's transparent huge pages are enabled ("always" or "madvise"):
// one TLB entry per 32768 cache lines. Where they are off, or none is free,
// the same mapping simply has small pages. The model file's in-memory copy
// (gguf_reader.cpp) is mapped here, and the CPU backend's regrouped weights
// (matmul.cpp) come from a huge_arena: most tensors are smaller than a huge
// page or not a multiple of one, and a mapping of their own would leave them
// on small pages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

namespace qf::infer {

inline constexpr std::size_t k_huge_page = std::size_t{2} << 20;

// A zero-filled, read-write, private anonymous mapping of `bytes` (> 0),
// 2 MiB-aligned when it is at least one huge page long; nullptr when the
// mapping fails (errno set). munmap(p, bytes) releases it, in whole or in
// page-aligned parts.
void* map_huge(std::size_t bytes);
// map_huge as an owning pointer; throws std::bad_alloc when it fails.
std::shared_ptr<std::uint8_t[]> make_huge_buffer(std::size_t bytes);

// Bump allocation from map_huge chunks, so that consecutive weights share
// huge pages. A block keeps its chunk alive; the arena only remembers the
// chunk it is filling (weakly), so a chunk goes with the last block in it,
// and an arena outliving its model holds nothing. A block larger than half a
// chunk gets a mapping of its own. Thread-safe.
class huge_arena {
 public:
  explicit huge_arena(std::size_t chunk_bytes = std::size_t{64} << 20) : chunk_bytes_(chunk_bytes) {}
  // `bytes` of zeroed memory, 64-byte aligned; throws std::bad_alloc when it cannot map.
  std::shared_ptr<std::uint8_t[]> allocate(std::size_t bytes);

 private:
  std::mutex mu_;
  std::weak_ptr<std::uint8_t[]> chunk_;
  std::size_t used_ = 0;
  const std::size_t chunk_bytes_;
};

}  // namespace qf::infer
