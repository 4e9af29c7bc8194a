#include "app/plot_launcher.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace cubesim {
namespace fs = std::filesystem;

namespace {

std::string self_path() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

}  // namespace

std::string find_plot_script() {
  if (const char* env = std::getenv("CUBESIM_PLOT_SCRIPT"); env != nullptr && *env != '\0') return env;
  const fs::path rel = fs::path("app") / "plot" / "cubesim_plot.py";
  if (const std::string self = self_path(); !self.empty()) {
    const fs::path candidate = fs::path(self).parent_path().parent_path() / rel;
    if (is_file(candidate)) return candidate.string();
  }
#ifdef CUBESIM_SOURCE_DIR
  if (const fs::path candidate = fs::path(CUBESIM_SOURCE_DIR) / rel; is_file(candidate)) return candidate.string();
#endif
  return {};
}

int exec_plot_tool(const std::string& tool, const std::vector<std::string>& args) {
  const std::string script = find_plot_script();
  if (script.empty()) {
    std::cerr << "cubesim " << tool << ": cannot find app/plot/cubesim_plot.py (set CUBESIM_PLOT_SCRIPT to its path)\n";
    return 2;
  }
  std::string python = "python3";
  if (const char* env = std::getenv("CUBESIM_PYTHON"); env != nullptr && *env != '\0') {
    python = env;
  } else if (is_file("/usr/bin/python3")) {
    python = "/usr/bin/python3";
  }
  if (const std::string self = self_path(); !self.empty()) setenv("CUBESIM_BIN", self.c_str(), 1);
  std::vector<std::string> all{python, script, tool};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(all.size() + 1);
  for (std::string& s : all) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::cout.flush();
  execvp(argv[0], argv.data());
  std::cerr << "cubesim " << tool << ": cannot run " << python << ": " << std::strerror(errno)
            << " (apt-get install python3-matplotlib)\n";
  return 2;
}

}  // namespace cubesim
