// The custom requests and notifications of next-edit prediction and of
// acceptance measurement (docs/protocol.md):
//   quickfill/nextEdit   {textDocument: {uri, version?}, position}
//                        -> {id, version, format, edits: [{range, newText, atCursor}], reason?}
//   quickfill/didShow    {id, source, trigger?, length}        (notification)
//   quickfill/didAccept  {id, acceptedLength}                  (notification)
// Lengths are in the negotiated position encoding's units.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lsp/protocol.h"

namespace qf::lsp {

struct next_edit_document {
  std::string uri;
  std::optional<std::int32_t> version;  // when given, it must be the document's version
};
BOOST_DESCRIBE_STRUCT(next_edit_document, (), (uri, version))

struct next_edit_params {
  next_edit_document textDocument;
  lsp::position position;
};
BOOST_DESCRIBE_STRUCT(next_edit_params, (), (textDocument, position))

struct next_edit_item {
  lsp::range range;
  std::string newText;
  bool atCursor = false;
};
BOOST_DESCRIBE_STRUCT(next_edit_item, (), (range, newText, atCursor))

struct next_edit_list {
  std::string id;
  std::int32_t version = 0;
  std::string format;
  std::vector<next_edit_item> edits;
  std::optional<std::string> reason;
};
BOOST_DESCRIBE_STRUCT(next_edit_list, (), (id, version, format, edits, reason))

struct did_show_params {
  std::string id;
  std::string source;                  // "completion" | "inline" | "nextEdit"
  std::optional<std::string> trigger;  // "automatic" (default) | "explicit"
  std::int64_t length = 0;             // what was shown
};
BOOST_DESCRIBE_STRUCT(did_show_params, (), (id, source, trigger, length))

struct did_accept_params {
  std::string id;
  std::int64_t acceptedLength = 0;  // of what was shown; less than its length: partly accepted
};
BOOST_DESCRIBE_STRUCT(did_accept_params, (), (id, acceptedLength))

}  // namespace qf::lsp
