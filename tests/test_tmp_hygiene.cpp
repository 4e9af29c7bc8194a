// Tests leave nothing behind (issue 18, item 12), checked in every test process: each works in a
// TMPDIR of its own, made when the process starts, and fails when a test left anything in it.
// (This replaced a ctest that ran three suites a second time in a fresh TMPDIR: every test is
// checked now, at no cost.) hygiene.a_left_file_fails runs the disabled test below and must fail.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

std::string& private_dir() {
  static std::string dir;
  return dir;
}
pid_t owner = 0;

/// At exit, after the static destructors of everything made during the tests (the scratch folder
/// of tests/cli_helpers.hpp goes then): whatever is left fails the process, named. A forked child
/// (the SimGrid runs) leaves its parent's folder alone.
void check_at_exit() {
  if (::getpid() != owner || private_dir().empty()) return;
  std::string left;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(private_dir(), ec)) left += " " + e.path().filename().string();
  fs::remove_all(private_dir(), ec);
  if (!left.empty()) {
    std::fprintf(stderr, "FAILED: the tests left these in their TMPDIR (%s):%s\n", private_dir().c_str(), left.c_str());
    std::fflush(stderr);
    std::_Exit(1);
  }
}

class PrivateTmpdir : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/cubesim_tests_XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) return;  // no private folder: the tests use TMPDIR as it is
    private_dir() = tmpl;
    owner = ::getpid();
    setenv("TMPDIR", tmpl.c_str(), 1);
    std::atexit(check_at_exit);  // registered before any test made a static: runs after their destructors
  }
};

[[maybe_unused]] ::testing::Environment* const kPrivateTmpdir = ::testing::AddGlobalTestEnvironment(new PrivateTmpdir);

// Run only by hygiene.a_left_file_fails (which expects the process to fail).
TEST(Hygiene, DISABLED_LeavesAFileInTmpdir) { std::ofstream(fs::temp_directory_path() / "left-behind.txt") << "x\n"; }

}  // namespace
