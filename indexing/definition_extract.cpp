// Definition and import extraction (see definition_extract.h).
#if QF_HAVE_TREE_SITTER
#include "indexing/definition_extract.h"

#include <tree_sitter/api.h>

#include <cstring>

#include "indexing/syntax_cursor.h"
#include "indexing/syntax_language.h"
#include "text/utf8.h"

namespace qf::index {

namespace {

enum class family { python, js, c, go, rust, java, none };

family family_of(std::string_view name) {
  if (name == "python") return family::python;
  if (name == "javascript" || name == "typescript" || name == "tsx") return family::js;
  if (name == "c" || name == "cpp") return family::c;
  if (name == "go") return family::go;
  if (name == "rust") return family::rust;
  if (name == "java") return family::java;
  return family::none;
}

bool is(TSNode n, const char* type) { return !ts_node_is_null(n) && std::strcmp(ts_node_type(n), type) == 0; }

struct container {
  std::uint32_t end = 0;
  std::string name;
  bool class_like = false;
};

struct extractor {
  std::string_view text;
  family fam;
  const extract_limits& limits;
  file_definitions out;
  std::vector<container> containers;

  std::string_view text_of(TSNode n) const {
    if (ts_node_is_null(n)) return {};  // a missing field (error recovery, or a grammar variant)
    const std::uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
    if (s >= text.size() || e <= s) return {};
    return text.substr(s, std::min<std::size_t>(e, text.size()) - s);
  }
  static TSNode field(TSNode n, const char* name) {
    return ts_node_child_by_field_name(n, name, static_cast<std::uint32_t>(std::strlen(name)));
  }
  std::string clean(std::string_view s, std::size_t max) const {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    return text::repair_utf8(text::utf8_prefix(s, max));
  }

  const container* inner() const { return containers.empty() ? nullptr : &containers.back(); }

  // The doc line: the first non-empty line of the comment block that ends on
  // the line above `start` (attribute / decorator lines in between skipped).
  std::string doc_above(std::uint32_t start) const {
    std::size_t line_start = text.rfind('\n', start == 0 ? 0 : start - 1);
    if (line_start == std::string_view::npos || start == 0) return {};
    std::vector<std::string_view> block;  // bottom-up
    std::size_t end = line_start;          // position of the '\n' ending the line above
    for (int guard = 0; guard < 64 && end != std::string_view::npos && end > 0; ++guard) {
      const std::size_t prev = text.rfind('\n', end - 1);
      const std::size_t b = prev == std::string_view::npos ? 0 : prev + 1;
      std::string_view line = text.substr(b, end - b);
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
      const bool comment = line.starts_with("//") || line.starts_with("/*") || line.starts_with("*") ||
                           (fam == family::python && line.starts_with("#"));
      const bool attribute = block.empty() && (line.starts_with("#[") || line.starts_with("@"));
      if (comment) {
        block.push_back(line);
      } else if (!attribute) {
        break;
      }
      if (prev == std::string_view::npos) break;
      end = prev;
    }
    for (auto it = block.rbegin(); it != block.rend(); ++it) {
      std::string_view l = *it;
      for (std::string_view marker : {"///", "//!", "//", "/**", "/*", "#", "*"})
        if (l.starts_with(marker)) {
          l.remove_prefix(marker.size());
          break;
        }
      if (l.ends_with("*/")) l.remove_suffix(2);
      const std::string s = clean(l, limits.max_doc_bytes);
      if (!s.empty()) return s;
    }
    return {};
  }

  std::string python_docstring(TSNode body) const {
    if (ts_node_is_null(body)) return {};
    TSNode first = ts_node_named_child(body, 0);
    if (!is(first, "expression_statement")) return {};
    TSNode str = ts_node_named_child(first, 0);
    if (!is(str, "string")) return {};
    std::string_view s = text_of(str);
    while (!s.empty() && std::strchr("rRuUbBfF", s.front())) s.remove_prefix(1);
    while (!s.empty() && (s.front() == '"' || s.front() == '\'')) s.remove_prefix(1);
    for (;;) {
      const std::size_t nl = s.find('\n');
      std::string_view line = s.substr(0, nl);
      while (!line.empty() && (line.back() == '"' || line.back() == '\'')) line.remove_suffix(1);
      std::string c = clean(line, limits.max_doc_bytes);
      if (!c.empty() || nl == std::string_view::npos) return c;
      s.remove_prefix(nl + 1);
    }
  }

  // Records a definition. `header_start`: where the signature starts (the
  // node, or a wrapper such as `export` / `template<...>`); `body`: where it
  // stops (null: the whole node, cut at the limit).
  void emit(std::string_view name, definition_kind kind, TSNode node, TSNode body, std::uint32_t header_start,
            std::string doc = {}, std::string prefix = {}) {
    if (name.empty() || out.definitions.size() >= limits.max_definitions) return;
    definition d;
    d.name = text::repair_utf8(text::utf8_prefix(name, 200));
    d.kind = kind;
    d.line = ts_node_start_point(node).row;
    std::uint32_t end = ts_node_is_null(body) ? ts_node_end_byte(node) : ts_node_start_byte(body);
    if (end > text.size()) end = static_cast<std::uint32_t>(text.size());
    if (header_start > end) header_start = ts_node_start_byte(node);
    d.signature = clean(prefix + std::string(text.substr(header_start, std::min<std::size_t>(
                                                                           end - header_start, limits.max_signature_bytes + 8))),
                        limits.max_signature_bytes);
    d.doc = doc.empty() ? doc_above(header_start) : std::move(doc);
    if (const container* c = inner()) {
      d.container = c->name;
      if (kind == definition_kind::function && c->class_like) d.kind = definition_kind::method;
    }
    out.definitions.push_back(std::move(d));
  }
  // The common case: the node's `name` field, its signature from the node's
  // start to `body` (null: the whole node).
  void emit_named(TSNode n, definition_kind kind, TSNode body = TSNode{}) {
    emit(text_of(field(n, "name")), kind, n, body, ts_node_start_byte(n));
  }

  void push_container(TSNode n, std::string_view name, bool class_like) {
    containers.push_back({ts_node_end_byte(n), text::repair_utf8(text::utf8_prefix(name, 200)), class_like});
  }

  void add_import(std::string module, std::vector<std::string> names, TSNode n) {
    if (module.empty() || out.imports.size() >= limits.max_imports) return;
    import_ref r;
    r.module = text::repair_utf8(text::utf8_prefix(module, 300));
    for (auto& s : names)
      if (!s.empty() && r.names.size() < 64) r.names.push_back(text::repair_utf8(text::utf8_prefix(s, 200)));
    r.line = ts_node_start_point(n).row;
    out.imports.push_back(std::move(r));
  }

  static std::string unquote(std::string_view s) {
    while (!s.empty() && (s.front() == '"' || s.front() == '\'' || s.front() == '`' || s.front() == '<')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == '"' || s.back() == '\'' || s.back() == '`' || s.back() == '>')) s.remove_suffix(1);
    return std::string(s);
  }
  static std::string without_spaces(std::string_view s) {
    std::string o;
    for (char c : s)
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') o += c;
    return o;
  }
  std::uint32_t start_with_wrapper(TSNode n, const char* wrapper) const {
    TSNode p = ts_node_parent(n);
    return is(p, wrapper) ? ts_node_start_byte(p) : ts_node_start_byte(n);
  }
  static bool is_upper_name(std::string_view s) {
    bool letter = false;
    for (char c : s) {
      if (c >= 'a' && c <= 'z') return false;
      if (c >= 'A' && c <= 'Z') letter = true;
    }
    return letter;
  }

  // Each returns true to walk into the node's children.
  bool python(TSNode n, std::string_view type) {
    if (type == "function_definition") {
      TSNode body = field(n, "body");
      emit(text_of(field(n, "name")), definition_kind::function, n, body, ts_node_start_byte(n),
           python_docstring(body));
      return false;
    }
    if (type == "class_definition") {
      TSNode body = field(n, "body");
      const std::string_view name = text_of(field(n, "name"));
      emit(name, definition_kind::class_type, n, body, ts_node_start_byte(n), python_docstring(body));
      push_container(n, name, true);
      return true;
    }
    if (type == "expression_statement") {
      TSNode parent = ts_node_parent(n);
      const bool module_level = is(parent, "module");
      const bool class_level = is(parent, "block") && is(ts_node_parent(parent), "class_definition");
      TSNode a = ts_node_named_child(n, 0);
      if ((module_level || class_level) && is(a, "assignment")) {
        TSNode left = field(a, "left");
        if (is(left, "identifier")) {
          const std::string_view name = text_of(left);
          const definition_kind k = class_level ? definition_kind::field
                                    : is_upper_name(name) ? definition_kind::constant
                                                          : definition_kind::variable;
          emit(name, k, n, TSNode{}, ts_node_start_byte(n));
        }
      }
      return false;
    }
    if (type == "import_statement") {
      const std::uint32_t count = ts_node_named_child_count(n);
      for (std::uint32_t i = 0; i < count; ++i) {
        TSNode c = ts_node_named_child(n, i);
        if (is(c, "aliased_import")) c = field(c, "name");
        add_import(std::string(text_of(c)), {}, n);
      }
      return false;
    }
    if (type == "import_from_statement") {
      std::vector<std::string> names;
      const std::uint32_t count = ts_node_child_count(n);
      for (std::uint32_t i = 0; i < count; ++i) {
        const char* f = ts_node_field_name_for_child(n, i);
        if (!f || std::strcmp(f, "name") != 0) continue;
        TSNode c = ts_node_child(n, i);
        if (is(c, "aliased_import")) c = field(c, "name");
        names.emplace_back(text_of(c));
      }
      add_import(without_spaces(text_of(field(n, "module_name"))), std::move(names), n);
      return false;
    }
    return type == "module" || type == "block" || type == "decorated_definition" || type == "if_statement" ||
           type == "try_statement" || type == "else_clause";
  }

  void js_import_names(TSNode n, std::vector<std::string>& names) const {
    // Walks the import/export clause (small) with a cursor.
    TSTreeCursor c = ts_tree_cursor_new(n);
    for (;;) {
      TSNode x = ts_tree_cursor_current_node(&c);
      bool descend = true;
      if (is(x, "import_specifier") || is(x, "export_specifier")) {
        names.emplace_back(text_of(field(x, "name")));
        descend = false;
      } else if (is(x, "identifier") && (is(ts_node_parent(x), "import_clause") || is(ts_node_parent(x), "namespace_import"))) {
        names.emplace_back(text_of(x));
      } else if (is(x, "string")) {
        descend = false;
      }
      if (!cursor_next_preorder(&c, descend)) break;
    }
    ts_tree_cursor_delete(&c);
  }

  bool js(TSNode n, std::string_view type) {
    if (type == "function_declaration" || type == "generator_function_declaration" || type == "function_signature") {
      emit(text_of(field(n, "name")), definition_kind::function, n, field(n, "body"), start_with_wrapper(n, "export_statement"));
      return false;
    }
    if (type == "class_declaration" || type == "abstract_class_declaration") {
      const std::string_view name = text_of(field(n, "name"));
      emit(name, definition_kind::class_type, n, field(n, "body"), start_with_wrapper(n, "export_statement"));
      push_container(n, name, true);
      return true;
    }
    if (type == "interface_declaration") {
      const std::string_view name = text_of(field(n, "name"));
      emit(name, definition_kind::type, n, field(n, "body"), start_with_wrapper(n, "export_statement"));
      push_container(n, name, true);
      return true;
    }
    if (type == "type_alias_declaration" || type == "enum_declaration") {
      emit(text_of(field(n, "name")), definition_kind::type, n, type == "enum_declaration" ? field(n, "body") : TSNode{},
           start_with_wrapper(n, "export_statement"));
      return false;
    }
    if (type == "internal_module" || type == "module") {
      const std::string_view name = text_of(field(n, "name"));
      emit(name, definition_kind::module, n, field(n, "body"), start_with_wrapper(n, "export_statement"));
      push_container(n, name, false);
      return true;
    }
    if (type == "method_definition" || type == "method_signature" || type == "abstract_method_signature") {
      emit_named(n, definition_kind::method, field(n, "body"));
      return false;
    }
    if (type == "public_field_definition" || type == "field_definition" || type == "property_signature") {
      TSNode name = field(n, "name");
      if (ts_node_is_null(name)) name = field(n, "property");
      emit(text_of(name), definition_kind::field, n, TSNode{}, ts_node_start_byte(n));
      return false;
    }
    if (type == "lexical_declaration" || type == "variable_declaration") {
      TSNode parent = ts_node_parent(n);
      return is(parent, "program") || is(parent, "export_statement");
    }
    if (type == "variable_declarator") {
      TSNode decl = ts_node_parent(n);
      TSNode name = field(n, "name");
      TSNode value = field(n, "value");
      if (!is(name, "identifier")) return true;
      const std::uint32_t start = start_with_wrapper(decl, "export_statement");
      if (is(value, "arrow_function") || is(value, "function_expression") || is(value, "function")) {
        emit(text_of(name), definition_kind::function, n, field(value, "body"), start);
        return false;
      }
      const bool is_const = text_of(decl).starts_with("const");
      emit(text_of(name), is_const ? definition_kind::constant : definition_kind::variable, n, TSNode{}, start);
      return true;  // a require() may sit in the value
    }
    if (type == "import_statement" || (type == "export_statement" && !ts_node_is_null(field(n, "source")))) {
      std::vector<std::string> names;
      js_import_names(n, names);
      add_import(unquote(text_of(field(n, "source"))), std::move(names), n);
      return false;
    }
    if (type == "call_expression") {
      TSNode fn = field(n, "function");
      TSNode args = field(n, "arguments");
      if (is(fn, "identifier") && text_of(fn) == "require" && ts_node_named_child_count(args) == 1 &&
          is(ts_node_named_child(args, 0), "string")) {
        add_import(unquote(text_of(ts_node_named_child(args, 0))), {}, n);
        return false;
      }
      return false;
    }
    return type == "program" || type == "export_statement" || type == "class_body" || type == "interface_body" ||
           type == "object_type" || type == "statement_block" || type == "expression_statement" ||
           type == "ambient_declaration";
  }

  // C / C++ declarators: the declared name and, for Foo::bar, the scope.
  struct declared {
    std::string_view name, scope;
    bool function = false;
  };
  declared declarator_name(TSNode d) const {
    declared r;
    std::string_view qualified;  // the outermost Foo::bar, whose scope is all but the name
    for (int guard = 0; guard < 256 && !ts_node_is_null(d); ++guard) {
      if (is(d, "function_declarator")) r.function = true;
      TSNode next = field(d, "declarator");
      if (!ts_node_is_null(next)) {
        d = next;
        continue;
      }
      if (is(d, "qualified_identifier")) {
        if (qualified.empty()) qualified = text_of(d);
        d = field(d, "name");
        continue;
      }
      if (is(d, "template_function") || is(d, "template_type")) {
        d = field(d, "name");
        continue;
      }
      if (is(d, "identifier") || is(d, "field_identifier") || is(d, "type_identifier") || is(d, "destructor_name") ||
          is(d, "operator_name") || is(d, "primitive_type"))
        r.name = text_of(d);
      break;
    }
    if (!qualified.empty() && !r.name.empty() && qualified.ends_with(r.name)) {
      r.scope = qualified.substr(0, qualified.size() - r.name.size());
      while (!r.scope.empty() && (r.scope.back() == ':' || r.scope.back() == ' ')) r.scope.remove_suffix(1);
    }
    return r;
  }

  bool c(TSNode n, std::string_view type) {
    if (type == "function_definition") {
      const declared d = declarator_name(field(n, "declarator"));
      const std::uint32_t start = start_with_wrapper(n, "template_declaration");
      if (!d.scope.empty() && (inner() == nullptr || !inner()->class_like)) {
        containers.push_back({ts_node_end_byte(n), std::string(d.scope), true});
        emit(d.name, definition_kind::method, n, field(n, "body"), start);
        containers.pop_back();
      } else {
        emit(d.name, definition_kind::function, n, field(n, "body"), start);
      }
      return false;
    }
    if (type == "declaration" || type == "field_declaration") {
      const declared d = declarator_name(field(n, "declarator"));
      if (d.function) emit(d.name, definition_kind::function, n, TSNode{}, start_with_wrapper(n, "template_declaration"));
      else if (type == "field_declaration") emit(d.name, definition_kind::field, n, TSNode{}, ts_node_start_byte(n));
      return false;
    }
    if (type == "struct_specifier" || type == "union_specifier" || type == "class_specifier" || type == "enum_specifier") {
      TSNode body = field(n, "body");
      const std::string_view name = text_of(field(n, "name"));
      if (ts_node_is_null(body)) return false;  // a use, not a definition
      const bool is_enum = type == "enum_specifier";
      emit(name, is_enum ? definition_kind::type : definition_kind::class_type, n, body,
           start_with_wrapper(n, "template_declaration"));
      push_container(n, name.empty() ? "" : name, true);
      if (is_enum) containers.back().class_like = false;
      return true;
    }
    if (type == "enumerator") {
      emit_named(n, definition_kind::constant);
      return false;
    }
    if (type == "type_definition") {
      const declared d = declarator_name(field(n, "declarator"));
      emit(d.name, definition_kind::type, n, TSNode{}, ts_node_start_byte(n));
      return true;  // typedef struct Foo {...} Foo_t: the struct too
    }
    if (type == "alias_declaration") {
      emit_named(n, definition_kind::type);
      return false;
    }
    if (type == "namespace_definition") {
      const std::string_view name = text_of(field(n, "name"));
      if (!name.empty()) emit(name, definition_kind::module, n, field(n, "body"), ts_node_start_byte(n));
      push_container(n, name, false);
      return true;
    }
    if (type == "preproc_def") {
      emit_named(n, definition_kind::constant);
      return false;
    }
    if (type == "preproc_function_def") {
      emit_named(n, definition_kind::function);
      return false;
    }
    if (type == "preproc_include") {
      add_import(unquote(text_of(field(n, "path"))), {}, n);
      return false;
    }
    return type == "translation_unit" || type == "declaration_list" || type == "field_declaration_list" ||
           type == "enumerator_list" || type == "template_declaration" || type == "linkage_specification" ||
           type == "preproc_ifdef" || type == "preproc_if" || type == "preproc_else" || type == "preproc_elif" ||
           type == "access_specifier" || type == "export_declaration";
  }

  std::string_view first_type_identifier(TSNode n) const {
    TSTreeCursor c = ts_tree_cursor_new(n);
    std::string_view found;
    for (int guard = 0; guard < 4096; ++guard) {
      TSNode x = ts_tree_cursor_current_node(&c);
      if (is(x, "type_identifier")) {
        found = text_of(x);
        break;
      }
      if (!cursor_next_preorder(&c, true)) break;
    }
    ts_tree_cursor_delete(&c);
    return found;
  }

  bool go(TSNode n, std::string_view type) {
    if (type == "function_declaration") {
      emit_named(n, definition_kind::function, field(n, "body"));
      return false;
    }
    if (type == "method_declaration") {
      containers.push_back({ts_node_end_byte(n), std::string(first_type_identifier(field(n, "receiver"))), true});
      emit_named(n, definition_kind::method, field(n, "body"));
      containers.pop_back();
      return false;
    }
    if (type == "type_spec" || type == "type_alias") {
      TSNode t = field(n, "type");
      const bool is_struct = is(t, "struct_type");
      TSNode body = is_struct || is(t, "interface_type") ? ts_node_named_child(t, 0) : TSNode{};
      emit(text_of(field(n, "name")), is_struct ? definition_kind::class_type : definition_kind::type, n, body,
           ts_node_start_byte(n), {}, "type ");
      return false;
    }
    if (type == "const_spec" || type == "var_spec") {
      const std::uint32_t count = ts_node_child_count(n);
      for (std::uint32_t i = 0; i < count; ++i) {
        const char* f = ts_node_field_name_for_child(n, i);
        if (f && std::strcmp(f, "name") == 0)
          emit(text_of(ts_node_child(n, i)), type == "const_spec" ? definition_kind::constant : definition_kind::variable,
               n, TSNode{}, ts_node_start_byte(n), {}, type == "const_spec" ? "const " : "var ");
      }
      return false;
    }
    if (type == "import_spec") {
      add_import(unquote(text_of(field(n, "path"))), {}, n);
      return false;
    }
    return type == "source_file" || type == "type_declaration" || type == "const_declaration" ||
           type == "var_declaration" || type == "import_declaration" || type == "import_spec_list" ||
           type == "var_spec_list" || type == "const_spec_list";
  }

  void rust_use(TSNode n) {
    TSNode arg = field(n, "argument");
    std::vector<std::string> names;
    std::string module;
    if (is(arg, "scoped_identifier")) {
      module = without_spaces(text_of(field(arg, "path")));
      names.emplace_back(text_of(field(arg, "name")));
    } else if (is(arg, "scoped_use_list")) {
      module = without_spaces(text_of(field(arg, "path")));
      TSNode list = field(arg, "list");
      const std::uint32_t count = ts_node_named_child_count(list);
      for (std::uint32_t i = 0; i < count; ++i) {
        TSNode item = ts_node_named_child(list, i);
        if (is(item, "identifier")) names.emplace_back(text_of(item));
        else if (is(item, "scoped_identifier")) names.emplace_back(text_of(field(item, "name")));
        else if (is(item, "use_as_clause")) names.emplace_back(text_of(field(item, "path")));
      }
    } else if (is(arg, "use_as_clause")) {
      module = without_spaces(text_of(field(arg, "path")));
    } else if (is(arg, "use_wildcard")) {
      module = without_spaces(text_of(arg));
      if (module.ends_with("::*")) module.resize(module.size() - 3);
    } else {
      module = without_spaces(text_of(arg));
    }
    add_import(std::move(module), std::move(names), n);
  }

  bool rust(TSNode n, std::string_view type) {
    if (type == "function_item" || type == "function_signature_item") {
      emit_named(n, definition_kind::function, field(n, "body"));
      return false;
    }
    if (type == "struct_item" || type == "union_item" || type == "enum_item" || type == "type_item") {
      emit(text_of(field(n, "name")), type == "struct_item" || type == "union_item" ? definition_kind::class_type
                                                                                   : definition_kind::type,
           n, field(n, "body"), ts_node_start_byte(n));
      return false;
    }
    if (type == "trait_item") {
      const std::string_view name = text_of(field(n, "name"));
      emit(name, definition_kind::type, n, field(n, "body"), ts_node_start_byte(n));
      push_container(n, name, true);
      return true;
    }
    if (type == "impl_item") {
      std::string_view name = text_of(field(n, "type"));
      name = name.substr(0, name.find('<'));
      push_container(n, name, true);
      return true;
    }
    if (type == "const_item" || type == "static_item") {
      emit_named(n, definition_kind::constant);
      return false;
    }
    if (type == "macro_definition") {
      emit_named(n, definition_kind::function);
      return false;
    }
    if (type == "mod_item") {
      const std::string_view name = text_of(field(n, "name"));
      TSNode body = field(n, "body");
      emit(name, definition_kind::module, n, body, ts_node_start_byte(n));
      if (ts_node_is_null(body)) {
        add_import(std::string(name), {}, n);
        return false;
      }
      push_container(n, name, false);
      return true;
    }
    if (type == "use_declaration") {
      rust_use(n);
      return false;
    }
    return type == "source_file" || type == "declaration_list";
  }

  bool java(TSNode n, std::string_view type) {
    if (type == "class_declaration" || type == "interface_declaration" || type == "enum_declaration" ||
        type == "record_declaration" || type == "annotation_type_declaration") {
      const std::string_view name = text_of(field(n, "name"));
      emit(name, type == "class_declaration" || type == "record_declaration" ? definition_kind::class_type
                                                                             : definition_kind::type,
           n, field(n, "body"), ts_node_start_byte(n));
      push_container(n, name, true);
      return true;
    }
    if (type == "method_declaration" || type == "constructor_declaration") {
      emit_named(n, definition_kind::method, field(n, "body"));
      return false;
    }
    if (type == "field_declaration" || type == "constant_declaration") {
      std::string_view mods;
      const std::uint32_t count = ts_node_named_child_count(n);
      for (std::uint32_t i = 0; i < count; ++i)
        if (is(ts_node_named_child(n, i), "modifiers")) mods = text_of(ts_node_named_child(n, i));
      const bool constant = type == "constant_declaration" ||
                            (mods.find("static") != std::string_view::npos && mods.find("final") != std::string_view::npos);
      for (std::uint32_t i = 0; i < ts_node_child_count(n); ++i) {
        const char* f = ts_node_field_name_for_child(n, i);
        if (f && std::strcmp(f, "declarator") == 0)
          emit(text_of(field(ts_node_child(n, i), "name")), constant ? definition_kind::constant : definition_kind::field,
               n, TSNode{}, ts_node_start_byte(n));
      }
      return false;
    }
    if (type == "enum_constant") {
      emit_named(n, definition_kind::constant);
      return false;
    }
    if (type == "import_declaration") {
      std::string s = without_spaces(text_of(n));
      if (s.starts_with("import")) s.erase(0, 6);
      if (s.starts_with("static")) s.erase(0, 6);
      while (!s.empty() && s.back() == ';') s.pop_back();
      std::vector<std::string> names;
      if (s.ends_with(".*")) {
        s.resize(s.size() - 2);
      } else if (const std::size_t dot = s.rfind('.'); dot != std::string::npos) {
        names.push_back(s.substr(dot + 1));
      }
      add_import(std::move(s), std::move(names), n);
      return false;
    }
    return type == "program" || type == "class_body" || type == "interface_body" || type == "enum_body" ||
           type == "enum_body_declarations" || type == "annotation_type_body";
  }

  bool visit(TSNode n) {
    const std::uint32_t start = ts_node_start_byte(n);
    while (!containers.empty() && containers.back().end <= start) containers.pop_back();
    const std::string_view type = ts_node_type(n);
    if (type == "ERROR") return true;  // recover what lies inside
    switch (fam) {
      case family::python: return python(n, type);
      case family::js: return js(n, type);
      case family::c: return c(n, type);
      case family::go: return go(n, type);
      case family::rust: return rust(n, type);
      case family::java: return java(n, type);
      case family::none: return false;
    }
    return false;
  }
};

}  // namespace

file_definitions extract_definitions(const TSTree* tree, const syntax_language& language, std::string_view text,
                                     const extract_limits& limits) {
  extractor x{text, family_of(language.name), limits, {}, {}};
  if (!tree || x.fam == family::none) return {};
  TSTreeCursor c = ts_tree_cursor_new(ts_tree_root_node(tree));
  for (;;) {
    const bool descend = x.visit(ts_tree_cursor_current_node(&c));
    if (!cursor_next_preorder(&c, descend)) break;
    if (x.out.definitions.size() >= limits.max_definitions && x.out.imports.size() >= limits.max_imports) break;
  }
  ts_tree_cursor_delete(&c);
  return std::move(x.out);
}

}  // namespace qf::index
#endif  // QF_HAVE_TREE_SITTER
