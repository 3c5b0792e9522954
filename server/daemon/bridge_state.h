// What the bridge (`quickfill --stdio` in front of the daemon) remembers of
// its session so that a new daemon can take it over: the initialize request,
// whether `initialized` was sent, the latest settings and trace level, the
// workspace-folder changes, and every open document with its current text.
// The text is kept for the replay only: a didChange's edits are applied to it
// in the negotiated position encoding, with the document store's rules
// (indexing/document_store.h: from the batch's last full text on, a version
// that does not grow or an edit that does not apply puts the copy out of
// sync, and only a full text brings it back), and nothing else is done per
// keystroke (no line table, no syntax, no snapshot; the edit's line is found
// by walking the line breaks from the last edit's line). It
// also tracks what is in flight: the client's requests (answered with one
// error each when the daemon goes away), the daemon's requests to the client
// (their ids carry a generation, so a late answer never reaches a new daemon)
// and open work-done progress tokens (ended when the daemon goes away).
//
// Quarantine: a document that was open when the daemon stopped twice (so it
// was replayed to the daemon that stopped the second time) may be what kills
// it; it is then never sent to a daemon again in this session: not replayed,
// its notifications are dropped, requests about it are answered here with an
// error, and the editor is told which document (window/showMessage). Without
// this a crashing document would be replayed until the bridge gives up.
//
// No I/O: bodies in, bodies out; bridge.cpp moves the bytes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "text/position.h"

namespace qf::server::daemon {

class bridge_state {
 public:
  // A message from the editor; what to send to the daemon (nullopt: nothing).
  std::optional<std::string> from_client(const std::string& body);
  // A message from the daemon; what to send to the editor (nullopt: nothing).
  std::optional<std::string> from_daemon(const std::string& body);
  // The daemon is gone: one error response per client request in flight, an
  // end for each open progress token, and a showMessage naming the documents
  // quarantined now, for the editor. Starts a new generation.
  std::vector<std::string> daemon_lost();
  // Answers the bridge made itself (requests about a quarantined document),
  // for the editor; emptied by the call.
  std::vector<std::string> take_for_client();
  // The messages that rebuild the session on a new daemon (empty before
  // initialize).
  std::vector<std::string> replay();

  bool exit_sent() const { return exit_sent_; }
  bool shutdown_sent() const { return shutdown_sent_; }
  std::size_t open_documents() const { return docs_.size(); }
  std::size_t in_flight() const { return in_flight_.size(); }
  // What is kept of an open document.
  struct replay_document {
    std::string language_id;
    std::int64_t version = 0;
    std::string text;
    bool in_sync = true;  // false after a change the server did not apply either: not replayed
    int crashes = 0;      // daemon stops while it was open
    // Where the line of the last edit starts (typing is local: the next
    // edit's line is found from here, not from the top).
    std::int64_t hint_line = 0;
    std::size_t hint_offset = 0;
  };
  const replay_document* document(const std::string& uri) const;
  bool quarantined(const std::string& uri) const { return quarantined_.count(uri) != 0; }
  std::size_t quarantined_count() const { return quarantined_.size(); }
  // A document open through this many daemon stops is quarantined.
  static constexpr int crashes_to_quarantine = 2;

 private:
  // Drops a notification about a quarantined document, or answers a request
  // about one; true when the message must not reach the daemon.
  bool held_back(const std::string& method, const boost::json::value& id, const boost::json::value& params);
  std::optional<std::string> initialize_;     // the editor's initialize body
  std::string initialize_id_;                 // its id (id_to_string)
  bool initialize_answered_ = false;
  bool initialized_ = false;
  std::optional<std::string> settings_, trace_;
  std::vector<std::string> folder_changes_;
  std::map<std::string, replay_document> docs_;
  std::set<std::string> quarantined_;
  std::vector<std::string> for_client_;
  std::map<std::string, std::pair<std::string, std::string>> in_flight_;  // id key -> (id JSON, method)
  std::set<std::string> progress_;  // tokens (JSON) begun and not ended
  text::position_encoding enc_ = text::position_encoding::utf16;
  unsigned generation_ = 1;
  std::string replay_id_;  // id of the replayed initialize whose answer is swallowed
  bool exit_sent_ = false, shutdown_sent_ = false;
};

}  // namespace qf::server::daemon
