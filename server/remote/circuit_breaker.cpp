// The circuit breaker's transitions (see circuit_breaker.h).
#include "server/remote/circuit_breaker.h"

namespace qf::remote {

bool circuit_breaker::allow(clock::time_point now) {
  switch (state_) {
    case state::closed: return true;
    case state::open:
      if (now < retry_at()) return false;
      state_ = state::half_open;
      probe_out_ = true;
      return true;
    case state::half_open:
      if (probe_out_) return false;
      probe_out_ = true;
      return true;
  }
  return false;
}

void circuit_breaker::record_success() {
  state_ = state::closed;
  failures_ = 0;
  probe_out_ = false;
}

void circuit_breaker::record_failure(clock::time_point now) {
  ++failures_;
  probe_out_ = false;
  if (state_ == state::half_open || failures_ >= o_.failure_threshold) {
    state_ = state::open;
    opened_at_ = now;
  }
}

circuit_breaker::state circuit_breaker::current(clock::time_point now) const {
  if (state_ == state::open && now >= retry_at()) return state::half_open;
  return state_;
}

const char* breaker_state_name(circuit_breaker::state s) {
  switch (s) {
    case circuit_breaker::state::closed: return "closed";
    case circuit_breaker::state::open: return "open";
    case circuit_breaker::state::half_open: return "half_open";
  }
  return "unknown";
}

}  // namespace qf::remote
