// The workspace index over fixture repositories made in a temp folder:
// retrieval across files, import resolution per language, open documents
// over disk files, file events, the disk cache across a restart, and bad
// input (binary and huge files, vanishing files, deep nesting, many files).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>

#include "indexing/definition_cache.h"
#include "indexing/file_uri.h"
#include "indexing/syntax_language.h"
#include "indexing/workspace_index.h"
#include "temp_tree.h"

using namespace qf::index;
using qf::test::temp_tree;

namespace {

// "<head><i><tail>", built by appending: GCC 12 warns, falsely, about
// `"literal" + std::string` in these loops (-Wrestrict).
std::string numbered(std::string_view head, int i, std::string_view tail) {
  return std::string(head).append(std::to_string(i)).append(tail);
}

workspace_options test_options(const std::string& cache_dir = "") {
  workspace_options o;
  o.cache_dir = cache_dir;
  o.debounce = std::chrono::milliseconds(0);
  o.idle_priority = false;  // a loaded test machine must not starve the thread
  return o;
}

// The thread still runs at nice 19: on a 2-core machine running two sanitized
// tests at once it gets a small share of a core, so waiting for it is bounded
// generously. The tests check that indexing finishes, not how fast.
constexpr std::chrono::minutes k_wait{10};

bool have(std::initializer_list<const char*> langs) {
  for (const char* l : langs)
    if (!syntax_language_named(l)) return false;
  return true;
}

std::string uri(const temp_tree& t, const std::string& rel) { return path_to_file_uri(t.path(rel)); }

const import_ref* import_named(const std::vector<import_ref>& v, const std::string& module) {
  for (const auto& i : v)
    if (i.module == module) return &i;
  return nullptr;
}

}  // namespace

TEST(WorkspaceIndex, PythonPackageWithRelativeImports) {
  if (!have({"python"})) GTEST_SKIP() << "python grammar not built";
  temp_tree t("ws_py");
  t.write("app/__init__.py", "");
  t.write("app/util.py", "def helper(x: int) -> int:\n    \"\"\"Doubles x.\"\"\"\n    return 2 * x\n");
  t.write("app/models/__init__.py", "from .user import User\n");
  t.write("app/models/user.py", "class User:\n    def greet(self) -> str:\n        return 'hi'\n");
  t.write("app/main.py",
          "from .util import helper\nfrom .models import User\nfrom . import util\nimport app.models.user\n\n"
          "def run():\n    return helper(1)\n");
  workspace_index idx(test_options());
  idx.set_roots({t.root()});
  ASSERT_TRUE(idx.wait_idle(k_wait));
  const auto defs = idx.lookup("helper", 5);
  ASSERT_EQ(defs.size(), 1u);
  EXPECT_EQ(defs[0].uri, uri(t, "app/util.py"));
  EXPECT_EQ(defs[0].signature, "def helper(x: int) -> int:");
  EXPECT_EQ(defs[0].doc, "Doubles x.");
  EXPECT_EQ(defs[0].line, 0u);
  ASSERT_EQ(idx.lookup("greet", 5).size(), 1u);
  EXPECT_EQ(idx.lookup("greet", 5)[0].container, "User");

  const auto imports = idx.imports_of(uri(t, "app/main.py"));
  ASSERT_EQ(imports.size(), 4u);
  EXPECT_EQ(idx.resolve_import(uri(t, "app/main.py"), *import_named(imports, ".util")), uri(t, "app/util.py"));
  EXPECT_EQ(idx.resolve_import(uri(t, "app/main.py"), *import_named(imports, ".models")),
            uri(t, "app/models/__init__.py"));
  EXPECT_EQ(idx.resolve_import(uri(t, "app/main.py"), *import_named(imports, ".")), uri(t, "app/util.py"));
  EXPECT_EQ(idx.resolve_import(uri(t, "app/main.py"), *import_named(imports, "app.models.user")),
            uri(t, "app/models/user.py"));
  EXPECT_EQ(idx.resolve_import(uri(t, "app/main.py"), import_ref{"nosuch.module", {}, 0}), "");
  EXPECT_TRUE(idx.lookup("nothing_like_this", 5).empty());
}

TEST(WorkspaceIndex, CProjectWithHeaders) {
  if (!have({"c", "cpp"})) GTEST_SKIP() << "c/cpp grammars not built";
  temp_tree t("ws_c");
  t.write("include/vec.h", "#pragma once\n/* Adds two vectors. */\nvec3 vec_add(vec3 a, vec3 b);\n"
                           "typedef struct vec3 { float x, y, z; } vec3;\n");
  t.write("src/vec.c", "#include \"vec.h\"\nvec3 vec_add(vec3 a, vec3 b) { return a; }\n");
  t.write("src/main.c", "#include \"vec.h\"\n#include \"local.h\"\n#include <stdio.h>\nint main(void) { return 0; }\n");
  t.write("src/local.h", "#define LOCAL 1\n");
  workspace_index idx(test_options());
  idx.set_roots({t.root()});
  ASSERT_TRUE(idx.wait_idle(k_wait));
  const auto defs = idx.lookup("vec_add", 5);
  ASSERT_EQ(defs.size(), 2u);  // the prototype and the definition, by file
  EXPECT_EQ(defs[0].uri, uri(t, "include/vec.h"));
  EXPECT_EQ(defs[0].doc, "Adds two vectors.");
  EXPECT_EQ(defs[1].uri, uri(t, "src/vec.c"));
  const auto imports = idx.imports_of(uri(t, "src/main.c"));
  ASSERT_EQ(imports.size(), 3u);
  EXPECT_EQ(idx.resolve_import(uri(t, "src/main.c"), imports[0]), uri(t, "include/vec.h"));
  EXPECT_EQ(idx.resolve_import(uri(t, "src/main.c"), imports[1]), uri(t, "src/local.h"));
  EXPECT_EQ(idx.resolve_import(uri(t, "src/main.c"), imports[2]), "");
}

TEST(WorkspaceIndex, TypeScriptProject) {
  if (!have({"typescript", "tsx"})) GTEST_SKIP() << "typescript grammars not built";
  temp_tree t("ws_ts");
  t.write("src/math/index.ts", "export function clamp(v: number, lo: number, hi: number): number { return v; }\n");
  t.write("src/shapes.ts", "export interface Shape { area(): number }\nexport class Square implements Shape {\n"
                           "  area(): number { return 1; }\n}\n");
  t.write("src/view.tsx", "import { Square } from './shapes.js';\nimport { clamp } from './math';\n"
                          "export const View = () => <div />;\n");
  t.write("node_modules/lib/index.ts", "export function clamp() {}\n");
  workspace_index idx(test_options());
  idx.set_roots({t.root()});
  ASSERT_TRUE(idx.wait_idle(k_wait));
  ASSERT_EQ(idx.lookup("clamp", 5).size(), 1u);  // node_modules is skipped
  EXPECT_EQ(idx.lookup("Square", 5).at(0).uri, uri(t, "src/shapes.ts"));
  EXPECT_EQ(idx.lookup("View", 5).at(0).kind, definition_kind::function);
  const auto imports = idx.imports_of(uri(t, "src/view.tsx"));
  ASSERT_EQ(imports.size(), 2u);
  EXPECT_EQ(idx.resolve_import(uri(t, "src/view.tsx"), imports[0]), uri(t, "src/shapes.ts"));
  EXPECT_EQ(idx.resolve_import(uri(t, "src/view.tsx"), imports[1]), uri(t, "src/math/index.ts"));
}

TEST(WorkspaceIndex, GoModuleAndRustCrate) {
  if (!have({"go", "rust"})) GTEST_SKIP() << "go/rust grammars not built";
  temp_tree t("ws_go");
  t.write("go.mod", "module example.com/shapes\n\ngo 1.21\n");
  t.write("geom/area.go", "package geom\n\n// Area of a rectangle.\nfunc Area(w, h float64) float64 { return w * h }\n");
  t.write("geom/area_test.go", "package geom\n");
  t.write("main.go", "package main\n\nimport (\n\t\"fmt\"\n\t\"example.com/shapes/geom\"\n)\n\nfunc main() {}\n");
  t.write("crate/Cargo.toml", "[package]\nname = \"c\"\n");
  t.write("crate/src/lib.rs", "mod shapes;\nuse crate::shapes::circle::Circle;\n");
  t.write("crate/src/shapes/mod.rs", "pub mod circle;\n");
  t.write("crate/src/shapes/circle.rs", "pub struct Circle { r: f64 }\n");
  workspace_index idx(test_options());
  idx.set_roots({t.root()});
  ASSERT_TRUE(idx.wait_idle(k_wait));
  ASSERT_EQ(idx.lookup("Area", 5).size(), 1u);
  EXPECT_EQ(idx.lookup("Area", 5)[0].doc, "Area of a rectangle.");
  const auto go_imports = idx.imports_of(uri(t, "main.go"));
  ASSERT_EQ(go_imports.size(), 2u);
  EXPECT_EQ(idx.resolve_import(uri(t, "main.go"), go_imports[1]), uri(t, "geom/area.go"));
  EXPECT_EQ(idx.resolve_import(uri(t, "main.go"), go_imports[0]), "");
  const auto rs = idx.imports_of(uri(t, "crate/src/lib.rs"));
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(idx.resolve_import(uri(t, "crate/src/lib.rs"), rs[0]), uri(t, "crate/src/shapes/mod.rs"));
  EXPECT_EQ(idx.resolve_import(uri(t, "crate/src/lib.rs"), rs[1]), uri(t, "crate/src/shapes/circle.rs"));
  EXPECT_EQ(idx.lookup("Circle", 5).at(0).uri, uri(t, "crate/src/shapes/circle.rs"));
}

TEST(WorkspaceIndex, GitignoreIsRespected) {
  if (!have({"python"})) GTEST_SKIP() << "python grammar not built";
  temp_tree t("ws_ignore");
  t.write(".gitignore", "generated/\n*.tmp.py\n");
  t.write("generated/gen.py", "def from_generated(): pass\n");
  t.write("x.tmp.py", "def from_tmp(): pass\n");
  t.write("keep.py", "def kept(): pass\n");
  workspace_index idx(test_options());
  idx.set_roots({t.root()});
  ASSERT_TRUE(idx.wait_idle(k_wait));
  EXPECT_EQ(idx.lookup("kept", 5).size(), 1u);
  EXPECT_TRUE(idx.lookup("from_generated", 5).empty());
  EXPECT_TRUE(idx.lookup("from_tmp", 5).empty());
  // An event for an ignored path indexes nothing either.
  t.write("generated/new.py", "def also_generated(): pass\n");
  idx.files_changed({{t.path("generated/new.py"), file_change_kind::created}});
  ASSERT_TRUE(idx.wait_idle(k_wait));
  EXPECT_TRUE(idx.lookup("also_generated", 5).empty());
}

TEST(WorkspaceIndex, FileEventsAndOpenDocuments) {
  if (!have({"python"})) GTEST_SKIP() << "python grammar not built";
  temp_tree t("ws_events");
  t.write("a.py", "def alpha(): pass\n");
  workspace_index idx(test_options());
  idx.set_roots({t.root()});
  ASSERT_TRUE(idx.wait_idle(k_wait));
  ASSERT_EQ(idx.lookup("alpha", 5).size(), 1u);

  t.write("b.py", "def beta(): pass\n");
  t.write("a.py", "def alpha2(): pass\n");
  idx.files_changed({{t.path("b.py"), file_change_kind::created}, {t.path("a.py"), file_change_kind::changed}});
  ASSERT_TRUE(idx.wait_idle(k_wait));
  EXPECT_EQ(idx.lookup("beta", 5).size(), 1u);
  EXPECT_TRUE(idx.lookup("alpha", 5).empty());
  EXPECT_EQ(idx.lookup("alpha2", 5).size(), 1u);

  // The open document's text overrides the file; closing brings the file back.
  idx.document_updated(std::make_shared<const document>(uri(t, "a.py"), "python", 3, "def typed_in_editor(): pass\n"));
  ASSERT_TRUE(idx.wait_idle(k_wait));
  EXPECT_EQ(idx.lookup("typed_in_editor", 5).size(), 1u);
  EXPECT_TRUE(idx.lookup("alpha2", 5).empty());
  idx.files_changed({{t.path("a.py"), file_change_kind::changed}});  // the disk does not win while it is open
  ASSERT_TRUE(idx.wait_idle(k_wait));
  EXPECT_EQ(idx.lookup("typed_in_editor", 5).size(), 1u);
  idx.document_closed(uri(t, "a.py"));
  ASSERT_TRUE(idx.wait_idle(k_wait));
  EXPECT_TRUE(idx.lookup("typed_in_editor", 5).empty());
  EXPECT_EQ(idx.lookup("alpha2", 5).size(), 1u);

  // Deletion, of a file and of a folder.
  t.write("pkg/c.py", "def gamma(): pass\n");
  idx.files_changed({{t.path("pkg/c.py"), file_change_kind::created}});
  ASSERT_TRUE(idx.wait_idle(k_wait));
  ASSERT_EQ(idx.lookup("gamma", 5).size(), 1u);
  t.remove("b.py");
  t.remove("pkg");
  idx.files_changed({{t.path("b.py"), file_change_kind::deleted}, {t.path("pkg"), file_change_kind::deleted}});
  ASSERT_TRUE(idx.wait_idle(k_wait));
  EXPECT_TRUE(idx.lookup("beta", 5).empty());
  EXPECT_TRUE(idx.lookup("gamma", 5).empty());
  // An event for a file that is already gone again, and one that never existed.
  idx.files_changed({{t.path("b.py"), file_change_kind::changed}, {t.path("never.py"), file_change_kind::created}});
  ASSERT_TRUE(idx.wait_idle(k_wait));
  EXPECT_EQ(idx.stats().files, 1u);
}

TEST(WorkspaceIndex, RestartUsesTheDiskCache) {
  if (!have({"python"})) GTEST_SKIP() << "python grammar not built";
  temp_tree t("ws_cache");
  temp_tree cache("ws_cache_dir");
  for (int i = 0; i < 20; ++i) t.write(numbered("m", i, ".py"), numbered("def f", i, "(): pass\n"));
  std::string cache_file;
  {
    workspace_index idx(test_options(cache.root()));
    idx.set_roots({t.root()});
    ASSERT_TRUE(idx.wait_idle(k_wait));
    EXPECT_EQ(idx.stats().parses, 20u);
    EXPECT_EQ(idx.stats().cache_hits, 0u);
    cache_file = idx.cache_path();
  }
  ASSERT_FALSE(cache_file.empty());
  ASSERT_TRUE(std::filesystem::exists(cache_file));
  t.write("m0.py", "def changed(): pass\n");  // one file changed while the server was down
  {
    workspace_index idx(test_options(cache.root()));
    idx.set_roots({t.root()});
    ASSERT_TRUE(idx.wait_idle(k_wait));
    EXPECT_EQ(idx.stats().parses, 1u);
    EXPECT_EQ(idx.stats().cache_hits, 19u);
    EXPECT_EQ(idx.lookup("f5", 5).size(), 1u);
    EXPECT_EQ(idx.lookup("f5", 5)[0].signature, "def f5():");
    EXPECT_EQ(idx.lookup("changed", 5).size(), 1u);
  }
  // A corrupted cache is ignored (and everything parsed again).
  {
    std::fstream f(cache_file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x7f');
  }
  std::string error;
  EXPECT_TRUE(load_definition_cache(cache_file, &error).empty());
  EXPECT_FALSE(error.empty());
  {
    std::ofstream(cache_file, std::ios::binary | std::ios::trunc) << "QFDC garbage";
    workspace_index idx(test_options(cache.root()));
    idx.set_roots({t.root()});
    ASSERT_TRUE(idx.wait_idle(k_wait));
    EXPECT_EQ(idx.stats().parses, 20u);
    EXPECT_EQ(idx.lookup("f5", 5).size(), 1u);
  }
}

TEST(WorkspaceIndex, BadInputIsSkippedOrSurvived) {
  if (!have({"python", "javascript"})) GTEST_SKIP() << "grammars not built";
  temp_tree t("ws_bad");
  t.write("bin.py", std::string("def hidden(): pass\n\0\x01\x02", 22));
  t.write("huge.js", "var x = " + std::string(10u << 20, '1') + ";\n");  // a 10 MB single line
  t.write("deep.py", "x = " + std::string(100000, '[') + std::string(100000, ']') + "\ndef after_deep(): pass\n");
  t.write("bad_utf8.py", "def caf\xC3(): pass\ndef ok_after(): pass\n");
  t.write("fine.py", "def fine(): pass\n");
  workspace_options o = test_options();
  o.parse_budget = std::chrono::seconds(60);  // deep nesting under a sanitizer is slow, and must still parse
  workspace_index idx(o);
  idx.set_roots({t.root()});
  ASSERT_TRUE(idx.wait_idle(k_wait));
  EXPECT_TRUE(idx.lookup("hidden", 5).empty());
  EXPECT_EQ(idx.lookup("fine", 5).size(), 1u);
  EXPECT_EQ(idx.lookup("after_deep", 5).size(), 1u);
  EXPECT_EQ(idx.lookup("ok_after", 5).size(), 1u);
  for (const auto& d : idx.lookup("ok_after", 5)) EXPECT_EQ(d.uri, uri(t, "bad_utf8.py"));
  const workspace_stats s = idx.stats();
  EXPECT_EQ(s.binary, 1u);
  EXPECT_EQ(s.files, 3u);
}

TEST(WorkspaceIndex, FilesVanishingWhileIndexed) {
  if (!have({"python"})) GTEST_SKIP() << "python grammar not built";
  temp_tree t("ws_vanish");
  for (int i = 0; i < 400; ++i) t.write(numbered("f", i, ".py"), numbered("def v", i, "(): pass\n"));
  workspace_index idx(test_options());
  idx.set_roots({t.root()});
  // Delete while the walk and the reads run: each file is either indexed or
  // found unreadable; nothing crashes and the index settles.
  for (int i = 0; i < 400; i += 2) t.remove(numbered("f", i, ".py"));
  ASSERT_TRUE(idx.wait_idle(k_wait));
  const workspace_stats s = idx.stats();
  EXPECT_GE(s.files, 200u);
  EXPECT_LE(s.files, 400u);
  EXPECT_EQ(idx.lookup("v1", 5).size(), 1u);
  // After the events for the deletions only the survivors remain.
  std::vector<file_change> gone;
  for (int i = 0; i < 400; i += 2) gone.push_back({t.path(numbered("f", i, ".py")), file_change_kind::deleted});
  idx.files_changed(std::move(gone));
  ASSERT_TRUE(idx.wait_idle(k_wait));
  EXPECT_EQ(idx.stats().files, 200u);
  EXPECT_TRUE(idx.lookup("v0", 5).empty());
}

TEST(WorkspaceIndex, ManyFilesStopAtTheCap) {
  if (!have({"python"})) GTEST_SKIP() << "python grammar not built";
  temp_tree t("ws_many");
  // 50,000 empty files in 100 folders.
  for (int d = 0; d < 100; ++d) {
    const std::string dir = t.path(numbered("d", d, ""));
    std::filesystem::create_directories(dir);
    for (int i = 0; i < 500; ++i) std::ofstream(dir + "/f" + std::to_string(i) + ".py");
  }
  workspace_options o = test_options();
  o.walk.max_files = 3000;  // the real cap is 100,000; the rule is the same
  workspace_index idx(o);
  idx.set_roots({t.root()});
  ASSERT_TRUE(idx.wait_idle(std::chrono::seconds(120)));
  const workspace_stats s = idx.stats();
  EXPECT_TRUE(s.truncated);
  EXPECT_EQ(s.files, 3000u);
}

TEST(WorkspaceIndex, LookupsDoNotWaitForIndexing) {
  if (!have({"python"})) GTEST_SKIP() << "python grammar not built";
  temp_tree t("ws_reader");
  for (int i = 0; i < 300; ++i)
    t.write(numbered("r", i, ".py"), numbered("def shared(): pass\ndef own", i, "(): pass\n"));
  workspace_index idx(test_options());
  idx.set_roots({t.root()});
  // A reader during the walk sees a growing, always consistent set.
  std::size_t last = 0;
  for (int k = 0; k < 200; ++k) {
    const auto defs = idx.lookup("shared", 1000);
    EXPECT_GE(defs.size(), last);
    last = defs.size();
    for (const auto& d : defs) EXPECT_EQ(d.name, "shared");
  }
  ASSERT_TRUE(idx.wait_idle(k_wait));
  EXPECT_EQ(idx.lookup("shared", 1000).size(), 300u);
  EXPECT_EQ(idx.lookup("shared", 7).size(), 7u);
}
