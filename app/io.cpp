#include "app/io.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "sim/input_error.hpp"

namespace cubesim {

namespace {
/// Line and column (1-based) of a byte offset.
std::pair<std::size_t, std::size_t> line_col(const std::string& text, std::size_t offset) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}
}  // namespace

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "cannot read the file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file_atomic(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const fs::path tmp = dir / ("." + target.filename().string() + ".tmp" + std::to_string(::getpid()));
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + tmp.string());
    f << content;
    f.flush();
    if (!f) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, target);
}

ojson parse_json_text(const std::string& text, const std::string& file) {
  try {
    return ojson::parse(text);
  } catch (const ojson::parse_error& e) {
    auto [line, col] = line_col(text, e.byte == 0 ? 0 : e.byte - 1);
    std::string what = e.what();
    // nlohmann's text: "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error while parsing ..."
    auto pos = what.find("syntax error");
    if (pos == std::string::npos) pos = what.find(": ");
    std::string msg = pos == std::string::npos ? what : what.substr(pos);
    throw InputError(file, "line " + std::to_string(line) + ", column " + std::to_string(col), "invalid JSON: " + msg);
  }
}

ojson read_json_file(const std::string& path) { return parse_json_text(read_text_file(path), path); }

}  // namespace cubesim
