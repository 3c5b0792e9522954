// Download progress on stderr (see progress_meter.h).
#include "server/cli/progress_meter.h"

#include <algorithm>

namespace qf::cli {

using clock = std::chrono::steady_clock;

void progress_meter::note(const std::string& line) {
  if (drawing_) std::fputc('\n', out_);
  drawing_ = false;
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

void progress_meter::start(uint64_t offset, std::optional<uint64_t> total) {
  total_ = total;
  first_ = done_ = last_line_ = offset;
  t0_ = clock::now();
  last_draw_ = {};
  if (!tty_)
    note("downloading " + (total ? format_bytes(*total) : std::string("(size unknown)")) +
         (offset > 0 ? ", from byte " + std::to_string(offset) : std::string()));
  draw(offset, true);
}

void progress_meter::advance(uint64_t done) {
  done_ = done;
  draw(done, false);
}

void progress_meter::finish() {
  if (drawing_) {
    if (drawn_ != done_) draw(done_, true);
    std::fputc('\n', out_);
    std::fflush(out_);
  }
  drawing_ = false;
}

void progress_meter::draw(uint64_t done, bool force) {
  const auto now = clock::now();
  const double secs = std::chrono::duration<double>(now - t0_).count();
  const double rate = secs > 0 ? static_cast<double>(done - first_) / secs : 0;
  if (!tty_) {
    const uint64_t step = total_ && *total_ >= 10 ? *total_ / 10 : (64u << 20);
    if (done / step > last_line_ / step && done > first_) {
      last_line_ = done;
      std::fprintf(out_, "  %s%s", format_bytes(done).c_str(), total_ ? (" of " + format_bytes(*total_)).c_str() : "");
      if (total_ && *total_ > 0) std::fprintf(out_, " (%d%%)", static_cast<int>(100.0 * done / *total_));
      std::fprintf(out_, ", %s/s\n", format_bytes(static_cast<uint64_t>(rate)).c_str());
      std::fflush(out_);
    }
    return;
  }
  if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  drawn_ = done;
  drawing_ = true;
  std::string line = "\r";
  if (total_ && *total_ > 0) {
    const int width = 30;
    const double frac = static_cast<double>(done) / static_cast<double>(*total_);
    const int fill = std::clamp(static_cast<int>(frac * width), 0, width);
    line += '[';
    line.append(static_cast<size_t>(fill), '#');
    line.append(static_cast<size_t>(width - fill), ' ');
    line += "] ";
    char pct[16];
    std::snprintf(pct, sizeof pct, "%3d%% ", static_cast<int>(frac * 100));
    line += pct;
    line += format_bytes(done) + " / " + format_bytes(*total_);
    if (rate > 0 && done < *total_) {
      const int eta = static_cast<int>(static_cast<double>(*total_ - done) / rate);
      line += "  " + format_bytes(static_cast<uint64_t>(rate)) + "/s  ETA " + std::to_string(eta / 60) + "m" +
              (eta % 60 < 10 ? "0" : "") + std::to_string(eta % 60) + "s";
    }
  } else {
    line += format_bytes(done) + "  " + format_bytes(static_cast<uint64_t>(rate)) + "/s";
  }
  line += "\x1b[K";  // clear what a longer earlier line left
  std::fputs(line.c_str(), out_);
  std::fflush(out_);
}

}  // namespace qf::cli
