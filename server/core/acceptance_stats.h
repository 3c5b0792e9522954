// Acceptance of what the editors showed: suggestions (completion items,
// inline completions, next edits) reported shown (`quickfill/didShow`) and
// accepted, wholly or in part (`quickfill/didAccept`), counted per source and
// trigger kind for the `acceptance` section of `quickfill/stats`. Nothing
// leaves the process.
//
// A shown suggestion is remembered by its id (at most max_pending of them,
// the oldest forgotten first); an acceptance names that id and how much of it
// was accepted (in the client's position-encoding units, clamped to what was
// shown). Each id counts once: a repeated didShow or a second didAccept of
// the same id changes nothing, and an acceptance of an unknown id is counted
// as unmatched. Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include <boost/json/value.hpp>

namespace qf::server {

class acceptance_stats {
 public:
  explicit acceptance_stats(std::size_t max_pending = 4096) : max_pending_(max_pending) {}

  // False with *why for a source or trigger that is not one of the known ones.
  bool shown(const std::string& id, const std::string& source, const std::string& trigger, std::int64_t length,
             std::string* why);
  void accepted(const std::string& id, std::int64_t accepted_length);

  // {"total": C, "bySource": {"completion": {"automatic": C, "explicit": C}, ...}, "unmatchedAccepts": N}
  // with C = {shown, accepted, partlyAccepted, acceptanceRate, shownChars, acceptedChars}.
  boost::json::value to_json() const;

 private:
  struct counters {
    std::uint64_t shown = 0, accepted = 0, partly = 0;
    std::int64_t shown_chars = 0, accepted_chars = 0;
  };
  struct entry {
    std::string source, trigger;
    std::int64_t length = 0;
    bool accepted = false;
  };
  std::size_t max_pending_;
  mutable std::mutex mu_;
  std::map<std::string, std::map<std::string, counters>> by_source_;  // source -> trigger -> counts
  std::unordered_map<std::string, entry> pending_;
  std::deque<std::string> order_;  // ids, oldest first
  std::uint64_t unmatched_ = 0;
};

}  // namespace qf::server
