// Names of definition kinds (see definitions.h).
#include "indexing/definitions.h"

namespace qf::index {

const char* definition_kind_name(definition_kind k) {
  switch (k) {
    case definition_kind::function: return "function";
    case definition_kind::method: return "method";
    case definition_kind::class_type: return "class";
    case definition_kind::type: return "type";
    case definition_kind::constant: return "constant";
    case definition_kind::variable: return "variable";
    case definition_kind::field: return "field";
    case definition_kind::module: return "module";
  }
  return "?";
}

}  // namespace qf::index
