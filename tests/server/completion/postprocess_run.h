// A suggestion taken through post-processing as a request takes it: the
// trigger decision, the stop rules fed one character at a time, then the
// cleanup. Shared by the stop-rule and cleanup golden cases.
#pragma once

#include <cstdint>
#include <string>

#include "server/completion/postprocess/cleanup.h"
#include "server/completion/postprocess/stop_rules.h"
#include "server/completion/postprocess/trigger.h"

namespace qf::server::completion::testing {

struct run_result {
  std::string text;       // cleaned up (finalize)
  bool stopped = false;   // a stop rule fired while streaming
};

inline run_result run(const std::string& doc, int64_t line, int64_t col, const std::string& gen,
                      bool explicit_trigger = false, completion_settings s = {}) {
  cursor_context cx = make_cursor_context(doc, line, col);
  trigger_decision d = decide_trigger(cx, explicit_trigger, s);
  stop_checker sc(cx, d, s.stop_rules);
  run_result r;
  for (char c : gen) {
    if (sc.push(std::string(1, c))) {
      r.stopped = true;
      break;
    }
  }
  r.text = finalize(sc.kept(), cx, d, s.stop_rules);
  return r;
}

}  // namespace qf::server::completion::testing
