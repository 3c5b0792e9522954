// .gitignore matching, the workspace walk's skip rules and file URIs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "indexing/file_uri.h"
#include "indexing/gitignore.h"
#include "indexing/syntax_language.h"
#include "indexing/workspace_walk.h"
#include "temp_tree.h"

using namespace qf::index;

namespace {

bool ignored(const ignore_file& f, const char* path, bool dir = false) { return is_ignored({&f}, path, dir); }

}  // namespace

TEST(Gitignore, GlobSegments) {
  EXPECT_TRUE(glob_match_segment("*.py", "a.py"));
  EXPECT_FALSE(glob_match_segment("*.py", "a.pyc"));
  EXPECT_TRUE(glob_match_segment("a?c", "abc"));
  EXPECT_TRUE(glob_match_segment("[a-c]x", "bx"));
  EXPECT_FALSE(glob_match_segment("[!a-c]x", "bx"));
  EXPECT_TRUE(glob_match_segment("\\*x", "*x"));
  EXPECT_FALSE(glob_match_segment("\\*x", "ax"));
  EXPECT_TRUE(glob_match_segment("*", ""));
  // A pathological pattern stays linear-ish and answers.
  EXPECT_FALSE(glob_match_segment(std::string(2000, '*') + "b", std::string(5000, 'a')));
}

TEST(Gitignore, BasenameDirectoryAnchoredNegation) {
  ignore_file f("", "# comment\n\n*.log\nbuild/\n/only_root.txt\ndocs/*.md\n!keep.log\n**/deep/x.py\na/**/z.py\nlogs/**\n");
  EXPECT_TRUE(ignored(f, "x.log"));
  EXPECT_TRUE(ignored(f, "sub/dir/x.log"));
  EXPECT_FALSE(ignored(f, "keep.log"));           // negated later
  EXPECT_FALSE(ignored(f, "sub/keep.log"));
  EXPECT_TRUE(ignored(f, "build", true));
  EXPECT_TRUE(ignored(f, "src/build", true));
  EXPECT_FALSE(ignored(f, "build", false));       // a file named build is not a directory
  EXPECT_TRUE(ignored(f, "only_root.txt"));
  EXPECT_FALSE(ignored(f, "sub/only_root.txt"));  // anchored
  EXPECT_TRUE(ignored(f, "docs/a.md"));
  EXPECT_FALSE(ignored(f, "docs/sub/a.md"));      // * does not cross '/'
  EXPECT_FALSE(ignored(f, "x/docs/a.md"));        // inner slash anchors
  EXPECT_TRUE(ignored(f, "deep/x.py"));
  EXPECT_TRUE(ignored(f, "p/q/deep/x.py"));
  EXPECT_TRUE(ignored(f, "a/z.py"));
  EXPECT_TRUE(ignored(f, "a/b/c/z.py"));
  EXPECT_FALSE(ignored(f, "b/a/z.py"));
  EXPECT_TRUE(ignored(f, "logs/a/b.py"));
  EXPECT_FALSE(ignored(f, "logs", true));  // "logs/**" matches what is inside
}

TEST(Gitignore, NestedFilesAndPrecedence) {
  ignore_file root("", "*.gen.py\n");
  ignore_file sub("pkg", "!*.gen.py\n/local.py\n");
  const std::vector<const ignore_file*> stack{&root, &sub};
  EXPECT_TRUE(is_ignored(stack, "other/a.gen.py", false));
  EXPECT_FALSE(is_ignored(stack, "pkg/a.gen.py", false));  // the inner file re-includes
  EXPECT_TRUE(is_ignored(stack, "pkg/local.py", false));   // anchored to pkg/
  EXPECT_FALSE(is_ignored(stack, "pkg/x/local.py", false));
  EXPECT_FALSE(is_ignored(stack, "local.py", false));
}

TEST(Gitignore, TrailingSpacesAndEscapes) {
  ignore_file f("", "a.py   \n\\#b.py\n\\!c.py\nd\\ .py\r\n");
  EXPECT_TRUE(ignored(f, "a.py"));
  EXPECT_TRUE(ignored(f, "#b.py"));
  EXPECT_TRUE(ignored(f, "!c.py"));
}

TEST(FileUri, RoundTrip) {
  EXPECT_EQ(path_to_file_uri("/a b/c#d.py"), "file:///a%20b/c%23d.py");
  EXPECT_EQ(file_uri_to_path("file:///a%20b/c%23d.py"), "/a b/c#d.py");
  EXPECT_EQ(file_uri_to_path("file:///x/%E2%82%AC.py"), "/x/\xE2\x82\xAC.py");
  EXPECT_EQ(file_uri_to_path("file://localhost/x.py"), "/x.py");
  EXPECT_EQ(file_uri_to_path("untitled:Untitled-1"), "");
  EXPECT_EQ(file_uri_to_path("file://otherhost/x.py"), "");
  EXPECT_EQ(file_uri_to_path("file:///bad%zz"), "/bad%zz");
}

TEST(WorkspaceWalk, RespectsIgnoresSkipsAndCaps) {
  if (!syntax_language_named("python")) GTEST_SKIP() << "python grammar not built";
  qf::test::temp_tree t("walk");
  t.write(".gitignore", "*.gen.py\n/generated/\nsecret/\n");
  t.write(".git/info/exclude", "excluded.py\n");
  t.write(".git/config.py", "x = 1\n");
  t.write("a.py", "x = 1\n");
  t.write("excluded.py", "x = 1\n");
  t.write("b.gen.py", "x = 1\n");
  t.write("generated/c.py", "x = 1\n");
  t.write("sub/generated/d.py", "x = 1\n");  // /generated/ is anchored to the root
  t.write("sub/secret/e.py", "x = 1\n");
  t.write("sub/.gitignore", "!*.gen.py\nlocal_*.py\n");
  t.write("sub/f.gen.py", "x = 1\n");
  t.write("sub/local_g.py", "x = 1\n");
  t.write("node_modules/m.js", "x = 1\n");
  t.write("__pycache__/p.py", "x = 1\n");
  t.write(".venv/lib/v.py", "x = 1\n");
  t.write("notes.txt", "no grammar\n");
  t.write("big.py", std::string((1u << 20) + 1, 'x'));
  std::filesystem::create_directory_symlink(t.root(), t.path("sub/loop"));  // a loop back to the root
  const walk_result r = walk_workspace({t.root()}, walk_options{});
  std::vector<std::string> rel;
  for (const auto& f : r.files) rel.push_back(f.path.substr(t.root().size() + 1));
  std::sort(rel.begin(), rel.end());
  EXPECT_EQ(rel, (std::vector<std::string>{"a.py", "sub/f.gen.py", "sub/generated/d.py"}));
  EXPECT_EQ(r.too_large, 1u);
  EXPECT_GE(r.loops, 1u);
  EXPECT_GE(r.no_grammar, 1u);
  EXPECT_FALSE(r.truncated);

  EXPECT_TRUE(is_indexable_path({t.root()}, t.path("sub/f.gen.py")));
  EXPECT_FALSE(is_indexable_path({t.root()}, t.path("b.gen.py")));
  EXPECT_FALSE(is_indexable_path({t.root()}, t.path("sub/secret/e.py")));
  EXPECT_FALSE(is_indexable_path({t.root()}, t.path("node_modules/x.js")));
  EXPECT_FALSE(is_indexable_path({t.root()}, "/elsewhere/x.py"));

  walk_options capped;
  capped.max_files = 2;
  const walk_result c = walk_workspace({t.root()}, capped);
  EXPECT_EQ(c.files.size(), 2u);
  EXPECT_TRUE(c.truncated);
}

TEST(WorkspaceWalk, ReadRefusesBinaryLargeAndMissing) {
  qf::test::temp_tree t("read");
  t.write("bin.py", std::string("abc\0def", 7));
  t.write("ok.py", "x = 1\n");
  std::string out;
  EXPECT_EQ(read_source_file(t.path("bin.py"), 1 << 20, &out), read_status::binary);
  EXPECT_EQ(read_source_file(t.path("ok.py"), 3, &out), read_status::too_large);
  EXPECT_EQ(read_source_file(t.path("gone.py"), 1 << 20, &out), read_status::unreadable);
  EXPECT_EQ(read_source_file(t.path("ok.py"), 1 << 20, &out), read_status::ok);
  EXPECT_EQ(out, "x = 1\n");
}
