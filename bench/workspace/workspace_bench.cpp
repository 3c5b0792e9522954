// workspace_bench: indexes a generated workspace (or --root DIR) and prints
// the index time, the memory it holds (RSS and heap in use, before and after)
// and the restart time from the disk cache.
//
//   workspace_bench [--files N] [--root DIR] [--keep]
//
// Generated files mix Python, TypeScript, C and Go, about 40 lines and 8
// definitions each, in folders of 100.
#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "indexing/workspace_index.h"

namespace {

using steady = std::chrono::steady_clock;

long rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

double heap_mib() { return static_cast<double>(mallinfo2().uordblks) / (1 << 20); }

std::string python_file(int i) {
  std::string s = "import os\nfrom .common import base_helper\n\n";
  for (int k = 0; k < 4; ++k)
    s += "def handler_" + std::to_string(i) + "_" + std::to_string(k) + "(request, *, timeout: float = 1.0) -> dict:\n"
         "    \"\"\"Handles request kind " + std::to_string(k) + ".\"\"\"\n    return {'ok': True}\n\n";
  s += "class Service" + std::to_string(i) + ":\n    \"\"\"A service.\"\"\"\n    def start(self) -> None:\n        pass\n"
       "    def stop(self) -> None:\n        pass\n\nMAX_ITEMS_" + std::to_string(i) + " = 100\n";
  return s;
}

std::string ts_file(int i) {
  std::string n = std::to_string(i);
  return "import { util } from './util';\n\n/** A widget. */\nexport interface Widget" + n +
         " {\n  id: string;\n  render(): void;\n}\n\nexport function makeWidget" + n +
         "(id: string): Widget" + n + " {\n  return { id, render() {} };\n}\n\nexport class Store" + n +
         " {\n  private items: string[] = [];\n  add(item: string): void { this.items.push(item); }\n"
         "  size(): number { return this.items.length; }\n}\n\nexport const LIMIT_" + n + " = 10;\n";
}

std::string c_file(int i) {
  std::string n = std::to_string(i);
  return "#include \"common.h\"\n#include <stdio.h>\n\n#define BUF_" + n + " 256\n\n/* A record. */\nstruct record_" + n +
         " {\n  int id;\n  char name[32];\n};\n\n/// Opens a record.\nint record_open_" + n +
         "(struct record_" + n + "* r, const char* path);\n\nstatic int helper_" + n +
         "(int x) {\n  return x * 2;\n}\n\nint record_close_" + n + "(struct record_" + n +
         "* r) {\n  return helper_" + n + "(r->id);\n}\n";
}

std::string go_file(int i) {
  std::string n = std::to_string(i);
  return "package pkg\n\nimport (\n\t\"fmt\"\n)\n\n// Limit is a limit.\nconst Limit" + n + " = 3\n\n// Item" + n +
         " is an item.\ntype Item" + n + " struct {\n\tID   int\n\tName string\n}\n\n// String formats it.\nfunc (it *Item" +
         n + ") String() string {\n\treturn fmt.Sprint(it.ID)\n}\n\nfunc NewItem" + n + "(id int) *Item" + n +
         " {\n\treturn &Item" + n + "{ID: id}\n}\n";
}

void generate(const std::string& root, int files) {
  for (int i = 0; i < files; ++i) {
    const std::string dir = root + "/d" + std::to_string(i / 100);
    if (i % 100 == 0) std::filesystem::create_directories(dir);
    static const char* ext[] = {".py", ".ts", ".c", ".go"};
    std::ofstream f(dir + "/f" + std::to_string(i) + ext[i % 4]);
    switch (i % 4) {
      case 0: f << python_file(i); break;
      case 1: f << ts_file(i); break;
      case 2: f << c_file(i); break;
      default: f << go_file(i); break;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int files = 10000;
  std::string root;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--files") && i + 1 < argc) files = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--root") && i + 1 < argc) root = argv[++i];
    else if (!std::strcmp(argv[i], "--keep")) keep = true;
    else {
      std::fprintf(stderr, "usage: workspace_bench [--files N] [--root DIR] [--keep]\n");
      return 2;
    }
  }
  const bool generated = root.empty();
  const std::string tmp = (std::filesystem::temp_directory_path() / ("qf_workspace_bench_" + std::to_string(::getpid()))).string();
  if (generated) {
    root = tmp + "/ws";
    const auto g0 = steady::now();
    generate(root, files);
    std::printf("generated %d files in %s (%.1f s)\n", files, root.c_str(),
                std::chrono::duration<double>(steady::now() - g0).count());
  }
  const std::string cache_dir = tmp + "/cache";
  qf::index::workspace_options o;
  o.cache_dir = cache_dir;
  o.idle_priority = false;  // measure the work, not the scheduler
  malloc_trim(0);
  const long rss0 = rss_kib();
  const double heap0 = heap_mib();
  qf::index::workspace_stats st;
  {
    qf::index::workspace_index idx(o);
    const auto t0 = steady::now();
    idx.set_roots({root});
    idx.wait_idle(std::chrono::minutes(30));
    const double secs = std::chrono::duration<double>(steady::now() - t0).count();
    st = idx.stats();
    malloc_trim(0);
    const long rss1 = rss_kib();
    const double heap1 = heap_mib();
    std::printf("cold index: %zu files, %zu definitions, %zu parsed in %.2f s (%.0f files/s)\n", st.files,
                st.definitions, st.parses, secs, st.files / secs);
    std::printf("memory held by the index: RSS +%.1f MiB, heap in use +%.1f MiB (%.0f bytes per definition)\n",
                (rss1 - rss0) / 1024.0, heap1 - heap0,
                st.definitions ? (heap1 - heap0) * (1 << 20) / static_cast<double>(st.definitions) : 0.0);
    const auto l0 = steady::now();
    std::size_t hits = 0;
    for (int i = 0; i < 10000; ++i) hits += idx.lookup("start", 8).size();
    std::printf("lookup(\"start\", 8): %.2f us each (%zu results)\n",
                std::chrono::duration<double, std::micro>(steady::now() - l0).count() / 10000, hits / 10000);
  }
  {
    qf::index::workspace_index idx(o);
    const auto t0 = steady::now();
    idx.set_roots({root});
    idx.wait_idle(std::chrono::minutes(30));
    const double secs = std::chrono::duration<double>(steady::now() - t0).count();
    const auto s = idx.stats();
    std::printf("restart from the disk cache: %zu files, %zu parsed, %zu from the cache in %.2f s\n", s.files, s.parses,
                s.cache_hits, secs);
    std::error_code ec;
    std::printf("cache file: %.1f MiB\n", std::filesystem::file_size(idx.cache_path(), ec) / 1048576.0);
  }
  if (!keep) std::filesystem::remove_all(tmp);
  return 0;
}
