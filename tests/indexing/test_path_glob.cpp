// Path globs of privacy.exclude (indexing/path_glob.h): basename patterns at
// any depth, anchored patterns, `**`, directories, `~/`, and what a list of
// globs cannot do (negate, comment out).
#include <gtest/gtest.h>

#include "indexing/file_uri.h"
#include "indexing/path_glob.h"

using namespace qf::index;

namespace {

std::string hit(const path_glob_set& g, std::string_view path) {
  const std::string* m = g.match(path);
  return m ? *m : std::string();
}

}  // namespace

TEST(PathGlob, BasenamePatternsMatchAtAnyDepth) {
  path_glob_set g({".env", ".env.*", "*.pem", "id_rsa*"});
  EXPECT_EQ(hit(g, ".env"), ".env");
  EXPECT_EQ(hit(g, "/home/u/proj/.env"), ".env");
  EXPECT_EQ(hit(g, "deep/er/.env.production"), ".env.*");
  EXPECT_EQ(hit(g, "/etc/ssl/server.pem"), "*.pem");
  EXPECT_EQ(hit(g, "/home/u/.ssh/id_rsa.pub"), "id_rsa*");
  EXPECT_EQ(hit(g, "src/environment.py"), "");
  EXPECT_EQ(hit(g, "src/.envy"), "");
  EXPECT_EQ(hit(g, "pem/readme.md"), "");  // "*.pem" needs the dot
  // A directory of that name takes what is inside.
  EXPECT_EQ(hit(g, "/w/.env/values.py"), ".env");
}

TEST(PathGlob, AnchoredPatternsAndDoubleStar) {
  path_glob_set g({"**/secrets/**", "**/.aws/credentials", "config/prod/*.yaml", "/top.txt", "a/**/z.py"});
  EXPECT_EQ(hit(g, "/home/u/proj/secrets/db.py"), "**/secrets/**");
  EXPECT_EQ(hit(g, "secrets/a/b/c.txt"), "**/secrets/**");
  EXPECT_EQ(hit(g, "proj/secrets"), "");  // "x/**" is what is inside x
  EXPECT_EQ(hit(g, "proj/secretsx/a.py"), "");
  EXPECT_EQ(hit(g, "/home/u/.aws/credentials"), "**/.aws/credentials");
  EXPECT_EQ(hit(g, "/home/u/.aws/config"), "");
  EXPECT_EQ(hit(g, "config/prod/db.yaml"), "config/prod/*.yaml");
  EXPECT_EQ(hit(g, "x/config/prod/db.yaml"), "");  // anchored at the start
  EXPECT_EQ(hit(g, "config/prod/sub/db.yaml"), "");  // '*' stays within a segment
  EXPECT_EQ(hit(g, "top.txt"), "/top.txt");
  EXPECT_EQ(hit(g, "sub/top.txt"), "");
  EXPECT_EQ(hit(g, "a/z.py"), "a/**/z.py");
  EXPECT_EQ(hit(g, "a/b/c/z.py"), "a/**/z.py");
}

TEST(PathGlob, AnAnchoredDirectoryTakesItsContents) {
  path_glob_set g({"private/keys", "vault/"});
  EXPECT_EQ(hit(g, "private/keys"), "private/keys");
  EXPECT_EQ(hit(g, "private/keys/a.txt"), "private/keys");
  EXPECT_EQ(hit(g, "vault/x.py"), "vault/");
  EXPECT_EQ(hit(g, "deep/vault/x.py"), "vault/");
  EXPECT_EQ(hit(g, "deep/vault"), "");  // a trailing '/' is for directories only
}

TEST(PathGlob, HomePatterns) {
  path_glob_set g({"~/.config/tool/**", "~/notes.txt"}, "/home/u");
  EXPECT_EQ(hit(g, "/home/u/.config/tool/token.json"), "~/.config/tool/**");
  EXPECT_EQ(hit(g, "/home/u/notes.txt"), "~/notes.txt");
  EXPECT_EQ(hit(g, "/home/v/notes.txt"), "");
  path_glob_set no_home({"~/notes.txt"});
  EXPECT_TRUE(no_home.empty());
}

TEST(PathGlob, NoNegationNoComments) {
  // In a list of globs '!' and '#' are plain characters: nothing can re-include a file.
  path_glob_set g({"*.key", "!server.key", "#notes"});
  EXPECT_EQ(hit(g, "server.key"), "*.key");
  EXPECT_EQ(hit(g, "#notes"), "#notes");
  EXPECT_EQ(hit(g, "!server.key"), "*.key");
  path_glob_set empty({"", "/", "//"});
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(hit(empty, "/a/b"), "");
}

TEST(PathGlob, HostilePatternsStayBounded) {
  path_glob_set g({std::string(1000, '*') + "b", "**/**/**/**/**/**/**/**/x"});
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += "/d";
  EXPECT_EQ(hit(g, deep + "/" + std::string(3000, 'a')), "");
  EXPECT_EQ(hit(g, deep + "/x"), "**/**/**/**/**/**/**/**/x");
}

TEST(PathGlob, PathsRelativeToRoots) {
  EXPECT_EQ(path_relative_to_roots("/w/p/a.py", {"/x", "/w/p"}), "a.py");
  EXPECT_EQ(path_relative_to_roots("/w/p/a.py", {"/w/p/"}), "a.py");
  EXPECT_EQ(path_relative_to_roots("/w/pp/a.py", {"/w/p"}), "");
  EXPECT_EQ(path_relative_to_roots("/w/p", {"/w/p"}), "");
  EXPECT_EQ(path_relative_to_roots("/w/p/a.py", {"/"}), "w/p/a.py");
}
