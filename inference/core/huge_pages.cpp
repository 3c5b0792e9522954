// map_huge: over-map by one huge page, keep the 2 MiB-aligned span, ask for
// huge pages on it. huge_arena: a bump pointer into the chunk being filled.
#include "inference/core/huge_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <new>

namespace qf::infer {

void* map_huge(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  if (bytes < k_huge_page) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
  }
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t len = (bytes + page - 1) / page * page;
  void* raw = mmap(nullptr, len + k_huge_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto base = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (base + k_huge_page - 1) & ~(k_huge_page - 1);
  if (aligned > base) munmap(raw, aligned - base);
  const std::uintptr_t end = base + len + k_huge_page;
  if (end > aligned + len) munmap(reinterpret_cast<void*>(aligned + len), end - (aligned + len));
  void* p = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
  madvise(p, len, MADV_HUGEPAGE);  // advice only: where THP is off the pages stay small
#endif
  return p;
}

std::shared_ptr<std::uint8_t[]> make_huge_buffer(std::size_t bytes) {
  void* p = map_huge(bytes);
  if (!p) throw std::bad_alloc();
  return std::shared_ptr<std::uint8_t[]>(static_cast<std::uint8_t*>(p), [bytes](std::uint8_t* q) { munmap(q, bytes); });
}

std::shared_ptr<std::uint8_t[]> huge_arena::allocate(std::size_t bytes) {
  bytes = (bytes + 63) & ~std::size_t{63};
  if (bytes > chunk_bytes_ / 2) return make_huge_buffer(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<std::uint8_t[]> chunk = chunk_.lock();
  if (!chunk || used_ + bytes > chunk_bytes_) {
    chunk = make_huge_buffer(chunk_bytes_);
    chunk_ = chunk;
    used_ = 0;
  }
  std::uint8_t* p = chunk.get() + used_;
  used_ += bytes;
  return std::shared_ptr<std::uint8_t[]>(chunk, p);  // shares the chunk's ownership
}

}  // namespace qf::infer
