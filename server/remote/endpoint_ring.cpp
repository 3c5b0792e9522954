// The hash ring (see endpoint_ring.h).
#include "server/remote/endpoint_ring.h"

#include <algorithm>
#include <stdexcept>

namespace qf::remote {

std::uint64_t ring_hash(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

endpoint_ring::endpoint_ring(std::vector<std::string> endpoints, int replicas) : endpoints_(std::move(endpoints)) {
  if (endpoints_.empty()) throw std::invalid_argument("endpoint_ring: no endpoints");
  replicas = std::max(replicas, 1);
  for (std::size_t e = 0; e < endpoints_.size(); ++e)
    for (int i = 0; i < replicas; ++i) ring_.push_back({ring_hash(endpoints_[e] + "#" + std::to_string(i)), e});
  std::sort(ring_.begin(), ring_.end(), [](const point& a, const point& b) {
    return a.at != b.at ? a.at < b.at : a.endpoint < b.endpoint;
  });
}

std::vector<std::size_t> endpoint_ring::order(std::string_view document_uri) const {
  const std::uint64_t h = ring_hash(document_uri);
  auto it = std::lower_bound(ring_.begin(), ring_.end(), h, [](const point& p, std::uint64_t v) { return p.at < v; });
  std::size_t start = static_cast<std::size_t>(it - ring_.begin());
  std::vector<std::size_t> out;
  std::vector<bool> seen(endpoints_.size(), false);
  for (std::size_t k = 0; k < ring_.size() && out.size() < endpoints_.size(); ++k) {
    const point& p = ring_[(start + k) % ring_.size()];
    if (!seen[p.endpoint]) {
      seen[p.endpoint] = true;
      out.push_back(p.endpoint);
    }
  }
  return out;
}

}  // namespace qf::remote
