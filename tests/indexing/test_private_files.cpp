// quickfill's own files (private_file.h, install_salt.h) and what the
// workspace walk reads: symbolic links planted by a repository are refused or
// skipped, files are created 0600, temporary files are unique per writer.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "indexing/definition_cache.h"
#include "indexing/install_salt.h"
#include "indexing/private_file.h"
#include "indexing/workspace_walk.h"
#include "temp_tree.h"

using namespace qf::index;
using qf::test::temp_tree;

namespace {

unsigned mode_of(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 ? (st.st_mode & 0777) : 0u;
}

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> rel_files(const walk_result& r, const std::string& root) {
  std::vector<std::string> rel;
  for (const auto& f : r.files) rel.push_back(f.path.substr(root.size() + 1));
  std::sort(rel.begin(), rel.end());
  return rel;
}

}  // namespace

TEST(WorkspaceWalk, LinksOutOfTheRootsAreSkipped) {
  temp_tree t("walk_links");
  temp_tree outside("walk_outside");
  outside.write("secret.py", "API_KEY = 'x'\n");
  outside.write("dir/leak.py", "API_KEY = 'y'\n");
  t.write("a.py", "x = 1\n");
  t.write("pkg/b.py", "x = 2\n");
  std::filesystem::create_symlink(outside.path("secret.py"), t.path("stolen.py"));     // a file outside
  std::filesystem::create_directory_symlink(outside.path("dir"), t.path("stolen_dir"));  // a folder outside
  std::filesystem::create_symlink(t.path("pkg/b.py"), t.path("alias.py"));             // inside: fine
  std::filesystem::create_directory_symlink(t.path("pkg"), t.path("pkg_alias"));       // inside, seen already
  std::filesystem::create_directory_symlink(t.root(), t.path("pkg/loop"));             // a loop
  const walk_result r = walk_workspace({t.root()}, walk_options{});
  const auto rel = rel_files(r, t.root());
  for (const auto& f : rel) EXPECT_EQ(f.find("stolen"), std::string::npos) << f;
  EXPECT_EQ(r.outside, 2u);
  EXPECT_TRUE(std::find(rel.begin(), rel.end(), "a.py") != rel.end());
  // pkg/b.py is reached once (through pkg/ or alias.py), never twice.
  EXPECT_EQ(std::count_if(r.files.begin(), r.files.end(),
                          [](const walked_file& f) { return f.path.ends_with("b.py") || f.path.ends_with("alias.py"); }),
            1);
  EXPECT_FALSE(is_indexable_path({t.root()}, t.path("stolen.py")));
  EXPECT_FALSE(is_indexable_path({t.root()}, t.path("stolen_dir/leak.py")));
  EXPECT_TRUE(is_indexable_path({t.root()}, t.path("alias.py")));
  EXPECT_TRUE(is_indexable_path({t.root()}, t.path("gone.py")));  // a deletion is judged by its path

  // A root that is itself a link is resolved: what it contains is inside.
  temp_tree holder("walk_root_link");
  std::filesystem::create_directory_symlink(t.root(), holder.path("ws"));
  const walk_result via = walk_workspace({holder.path("ws")}, walk_options{});
  EXPECT_EQ(via.outside, 2u);
  EXPECT_EQ(via.files.size(), r.files.size());
}

TEST(PrivateFile, CreatedOwnerOnlyAndLinksRefused) {
  temp_tree t("private");
  std::string error;
  const int fd = open_private_file(t.path("log"), O_WRONLY | O_CREAT | O_APPEND, &error);
  ASSERT_GE(fd, 0) << error;
  ::close(fd);
  EXPECT_EQ(mode_of(t.path("log")), 0600u);

  t.write("wide", "x");
  ::chmod(t.path("wide").c_str(), 0644);
  const int wide = open_private_file(t.path("wide"), O_WRONLY | O_APPEND, &error);
  ASSERT_GE(wide, 0) << error;
  ::close(wide);
  EXPECT_EQ(mode_of(t.path("wide")), 0600u);  // narrowed

  t.write("victim", "keep");
  ::chmod(t.path("victim").c_str(), 0644);
  std::filesystem::create_symlink(t.path("victim"), t.path("link"));
  EXPECT_LT(open_private_file(t.path("link"), O_WRONLY | O_CREAT | O_APPEND, &error), 0);
  EXPECT_NE(error.find("symbolic link"), std::string::npos) << error;
  ASSERT_EQ(::mkfifo(t.path("fifo").c_str(), 0600), 0);
  std::string out;
  EXPECT_EQ(read_private_file(t.path("fifo"), 1024, &out, &error), private_read::refused);  // and no hang
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
  ASSERT_EQ(::link(t.path("victim").c_str(), t.path("hard").c_str()), 0);
  EXPECT_EQ(read_private_file(t.path("hard"), 1024, &out, &error), private_read::refused);
  EXPECT_NE(error.find("hard links"), std::string::npos) << error;
  EXPECT_EQ(read_private_file(t.path("absent"), 1024, &out, &error), private_read::missing);
  EXPECT_EQ(slurp(t.path("victim")), "keep");
  EXPECT_EQ(mode_of(t.path("victim")), 0644u);
}

TEST(PrivateFile, WritesReplaceALinkInsteadOfFollowingIt) {
  temp_tree t("private_write");
  t.write("victim", "keep");
  std::filesystem::create_symlink(t.path("victim"), t.path("cache"));
  std::string error;
  ASSERT_TRUE(write_private_file(t.path("cache"), "new", &error)) << error;
  EXPECT_EQ(slurp(t.path("victim")), "keep");
  EXPECT_FALSE(std::filesystem::is_symlink(t.path("cache")));
  EXPECT_EQ(slurp(t.path("cache")), "new");
  EXPECT_EQ(mode_of(t.path("cache")), 0600u);
}

TEST(InstallSalt, CreatedOnceOwnerOnlyAndMixedIntoCacheNames) {
  temp_tree a("salt_a");
  temp_tree b("salt_b");
  std::string error;
  const std::string s1 = install_salt(a.path("cache"), &error);
  ASSERT_EQ(s1.size(), 64u) << error;
  EXPECT_EQ(install_salt(a.path("cache"), &error), s1);  // stored
  EXPECT_EQ(mode_of(a.path("cache/salt")), 0600u);
  EXPECT_NE(install_salt(b.path("cache"), &error), s1);  // random per install
  const std::vector<std::string> roots{"/home/u/project"};
  const std::string na = cache_file_for(a.path("cache"), roots);
  EXPECT_EQ(cache_file_for(a.path("cache"), roots), na);
  EXPECT_NE(std::filesystem::path(cache_file_for(b.path("cache"), roots)).filename(),
            std::filesystem::path(na).filename());
  // Many processes' worth of first uses at once agree on one salt.
  temp_tree c("salt_race");
  std::vector<std::string> got(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      std::string e;
      got[i] = install_salt(c.path("cache"), &e);
    });
  for (auto& th : threads) th.join();
  for (const auto& g : got) EXPECT_EQ(g, got[0]);
  EXPECT_EQ(got[0].size(), 64u);
  // A link planted as the salt is refused, not read.
  temp_tree d("salt_link");
  std::filesystem::create_directories(d.path("cache"));
  d.write("elsewhere", std::string(64, 'a'));
  std::filesystem::create_symlink(d.path("elsewhere"), d.path("cache/salt"));
  EXPECT_EQ(install_salt(d.path("cache"), &error), "");
  EXPECT_NE(error.find("symbolic link"), std::string::npos) << error;
}

TEST(DefinitionCache, PrivateUniqueTemporariesAndLinksRefused) {
  temp_tree t("defcache");
  const std::string path = cache_file_for(t.path("cache"), {"/ws"});
  cache_entries entries;
  file_definitions fd;
  definition d;
  d.name = "f";
  d.signature = "def f():";
  fd.definitions.push_back(d);
  entries.emplace(42, fd);
  // Writers at once (each its own temporary file): every save succeeds and the result is whole.
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      std::string e;
      if (save_definition_cache(path, entries, &e)) ++ok;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 8);
  EXPECT_EQ(mode_of(path), 0600u);
  std::string error;
  EXPECT_EQ(load_definition_cache(path, &error).size(), 1u) << error;
  for (const auto& e : std::filesystem::directory_iterator(t.path("cache")))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
  // A link at the cache path is not read through.
  std::filesystem::remove(path);
  std::filesystem::copy_file(t.path("cache/salt"), t.path("other"));
  std::filesystem::create_symlink(t.path("other"), path);
  error.clear();
  EXPECT_TRUE(load_definition_cache(path, &error).empty());
  EXPECT_NE(error.find("symbolic link"), std::string::npos) << error;
}
