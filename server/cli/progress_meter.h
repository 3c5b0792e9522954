// How `quickfill model pull` shows progress on stderr: a bar redrawn in place
// (at most 10 times a second) when stderr is a terminal, otherwise plain lines
// (one at each 10% of a known size, or each 64 MiB of an unknown one) that a
// log file or CI output can hold.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "server/cli/model_pull.h"

namespace qf::cli {

class progress_meter final : public pull_observer {
 public:
  progress_meter(std::FILE* out, bool terminal) : out_(out), tty_(terminal) {}
  void note(const std::string& line) override;
  void start(uint64_t offset, std::optional<uint64_t> total) override;
  void advance(uint64_t done) override;
  void finish() override;

 private:
  void draw(uint64_t done, bool force);

  std::FILE* out_;
  bool tty_;
  bool drawing_ = false;
  std::optional<uint64_t> total_;
  uint64_t first_ = 0, last_line_ = 0, done_ = 0, drawn_ = 0;
  std::chrono::steady_clock::time_point t0_, last_draw_;
};

}  // namespace qf::cli
