#pragma once
/// Running the cubesim binary from a test, as a user would (exit code, stdout, stderr).
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace cubesim::test {

struct Result {
  int code;
  std::string out, err;
};

inline Result run_command(const std::string& command) {
  const std::string err_file = std::filesystem::temp_directory_path() / ("cubesim_err_" + std::to_string(::getpid()));
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
  const auto p = std::filesystem::temp_directory_path() / name;
  std::ofstream(p) << text;
  return p.string();
}

inline std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A fresh, empty temporary folder.
inline std::string temp_dir(const std::string& name) {
  const auto p = std::filesystem::temp_directory_path() / ("cubesim_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

}  // namespace cubesim::test
