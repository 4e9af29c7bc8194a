#pragma once
/// Running the cubesim binary from a test, as a user would (exit code, stdout, stderr).
#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace cubesim::test {

/// This test process's own scratch folder (mkdtemp under the system's temporary folder), removed
/// with everything in it when the process ends: tests leave nothing behind, and tests running in
/// parallel (ctest -j, one process per test) never share a file name.
class Scratch {
 public:
  static const std::filesystem::path& dir() {
    static Scratch s;
    return s.dir_;
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

 private:
  Scratch() {
    std::string t = (std::filesystem::temp_directory_path() / "cubesim_test_XXXXXX").string();
    if (::mkdtemp(t.data()) == nullptr) throw std::runtime_error("cannot create a scratch folder in " + t);
    dir_ = t;
  }
  ~Scratch() {
    if (::getpid() != owner_) return;  // a forked child leaves its parent's folder alone
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::filesystem::path dir_;
  pid_t owner_ = ::getpid();
};

/// A path inside the scratch folder (nothing is created).
inline std::string scratch_path(const std::string& name) { return (Scratch::dir() / name).string(); }

struct Result {
  int code;
  std::string out, err;
};

inline Result run_command(const std::string& command) {
  const std::string err_file = scratch_path("stderr");
  const std::string cmd = command + " 2>" + err_file;
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  while (std::size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int status = pclose(p);
  std::ifstream e(err_file);
  std::stringstream ss;
  ss << e.rdbuf();
  std::filesystem::remove(err_file);
  return {WEXITSTATUS(status), out, ss.str()};
}

inline Result run_cli(const std::string& args) { return run_command(std::string(CUBESIM_BINARY) + " " + args); }

inline std::string write_temp(const std::string& name, const std::string& text) {
  const auto p = Scratch::dir() / name;
  std::ofstream(p) << text;
  return p.string();
}

inline std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A fresh, empty folder inside the scratch folder.
inline std::string temp_dir(const std::string& name) {
  const auto p = Scratch::dir() / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

}  // namespace cubesim::test
