// The layers of DESIGN.md, checked on the sources: includes run one way,
// app -> {traces, algorithms, machines} -> sim, and algorithms see only the kernel's public API.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/cli_helpers.hpp"

namespace {

namespace fs = std::filesystem;

struct Include {
  std::string file;
  int line;
  std::string target;  ///< "sim/node.hpp"
};

/// Every project include ("dir/file") in the C++ files under `dir`.
std::vector<Include> includes_under(const std::string& dir) {
  std::vector<Include> out;
  const std::regex re(R"re(^\s*#\s*include\s*"([^"]+)")re");
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
    std::ifstream in(e.path());
    int n = 0;
    for (std::string ln; std::getline(in, ln);) {
      ++n;
      std::smatch m;
      if (std::regex_search(ln, m, re)) out.push_back({e.path().string(), n, m[1]});
    }
  }
  return out;
}

std::string top(const std::string& target) { return target.substr(0, target.find('/')); }

/// Checks that every include under `dir` lands in one of `allowed` top-level folders.
void expect_layer(const std::string& dir, const std::set<std::string>& allowed) {
  const auto incs = includes_under(dir);
  ASSERT_FALSE(incs.empty()) << "no includes found under " << dir << ": is the working directory the project root?";
  for (const Include& i : incs)
    EXPECT_TRUE(allowed.count(top(i.target)) == 1) << i.file << ":" << i.line << " includes \"" << i.target
                                                   << "\": " << dir << "/ may include only what lies below it";
}

TEST(Layers, SimIncludesNothingOutsideSim) { expect_layer("sim", {"sim"}); }
TEST(Layers, MachinesIncludeOnlyTheKernel) { expect_layer("machines", {"machines", "sim"}); }
TEST(Layers, AlgorithmsIncludeOnlyTheKernel) { expect_layer("algorithms", {"algorithms", "sim"}); }
TEST(Layers, TracesAreFormatsWithoutApplicationCode) { expect_layer("traces", {"traces", "machines", "sim"}); }

TEST(Layers, ThePythonModuleSitsAboveTheApplication) {
  // python/ (docs/python.md) calls the application's library; nothing below includes it.
  expect_layer("python", {"python", "app", "traces", "algorithms", "machines", "sim"});
  for (const char* dir : {"app", "traces", "algorithms", "machines", "sim"})
    for (const Include& i : includes_under(dir))
      EXPECT_NE(top(i.target), "python") << i.file << ":" << i.line << " includes \"" << i.target << "\"";
}

TEST(Layers, AlgorithmsSeeOnlyThePublicNodeApi) {
  // Algorithms know no engine internals (DESIGN.md): not the engine, its observers, its kernel
  // types or the SimGrid backend.
  const std::vector<std::string> forbidden = {"sim/engine.hpp", "sim/observer.hpp", "sim/kernel/", "sim/net/",
                                              "sim/simgrid/"};
  for (const Include& i : includes_under("algorithms"))
    for (const std::string& f : forbidden)
      EXPECT_NE(i.target.rfind(f, 0), 0u)
          << i.file << ":" << i.line << " includes \"" << i.target << "\", an engine internal";
}

TEST(Layers, TheKernelNamesNoNetworkModel) {
  // The kernel knows a network model only through sim/net/network.hpp (docs/architecture.md
  // "Machine models"): nothing in sim/ outside sim/net/ includes a model's header, so a new model
  // is its own file(s) under sim/net/.
  std::size_t seen = 0;
  for (const Include& i : includes_under("sim")) {
    if (i.file.find("sim/net/") != std::string::npos || i.target.rfind("sim/net/", 0) != 0) continue;
    ++seen;
    EXPECT_EQ(i.target, "sim/net/network.hpp") << i.file << ":" << i.line << " includes a network model";
  }
  EXPECT_GE(seen, 1u) << "the kernel includes sim/net/network.hpp";
}

TEST(Layers, TheCheckCatchesAWrongInclude) {
  // The check itself can fail: a scratch tree whose sim/ includes app/.
  const fs::path root = cubesim::test::scratch_path("layers");
  fs::create_directories(root / "sim");
  std::ofstream(root / "sim" / "x.cpp") << "#include \"app/config.hpp\"\n";
  const auto incs = includes_under((root / "sim").string());
  ASSERT_EQ(incs.size(), 1u);
  EXPECT_EQ(top(incs[0].target), "app");
}

}  // namespace
