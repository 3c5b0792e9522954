// Several endpoints serving one model: which one a document goes to.
//
// Consistent hashing: each endpoint owns `replicas` points on a 64-bit ring
// (the hash of "URL#i"); a document URI hashes to a point and goes to the
// endpoint owning the next point clockwise. So every request of a document
// goes to the same endpoint while the set is unchanged, and that server's
// prefix cache (llama-server's slots, vLLM's and SGLang's prefix caching)
// stays warm for it; adding or removing one endpoint moves only the documents
// on its arcs. order() gives the failover sequence too: the distinct
// endpoints met walking on from the document's point, so when the first is
// down (or its breaker is open) the document moves to the same second choice
// every time, not to a random one.
//
// The hash is FNV-1a 64 with a final avalanche mix (splitmix64's), stable
// across runs and platforms (tests pin where a URI goes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qf::remote {

std::uint64_t ring_hash(std::string_view text);

class endpoint_ring {
 public:
  explicit endpoint_ring(std::vector<std::string> endpoints, int replicas = 64);

  // Every endpoint index exactly once: the document's own endpoint first,
  // then the failover order.
  std::vector<std::size_t> order(std::string_view document_uri) const;
  std::size_t primary(std::string_view document_uri) const { return order(document_uri).front(); }
  std::size_t size() const { return endpoints_.size(); }
  const std::string& endpoint(std::size_t i) const { return endpoints_[i]; }

 private:
  struct point {
    std::uint64_t at;
    std::size_t endpoint;
  };
  std::vector<std::string> endpoints_;
  std::vector<point> ring_;  // sorted by `at`
};

}  // namespace qf::remote
