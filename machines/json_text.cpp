#include "machines/json_text.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>
#include <utility>
#include <vector>

#include "sim/input_error.hpp"

namespace cubesim {

namespace {

/// A line and a column, 1-based.
struct Position {
  std::size_t line, column;
};

/// The position of a byte offset in `text`, whose first character is at `o`.
Position position(std::string_view text, std::size_t offset, Position o) {
  Position p = o;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

std::string where(std::string_view text, std::size_t offset, Position o) {
  const Position p = position(text, offset, o);
  return "line " + std::to_string(p.line) + ", column " + std::to_string(p.column);
}

bool number_char(char c) { return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'; }

/// One pass over the text outside strings: the nesting depth, and numbers that no double holds.
/// Syntax is left to the parser; this only refuses what would crash or lose the position.
/// Also refuses a key given twice in one object: the JSON library keeps the last and drops the
/// first without a word, so a config with two "params" blocks ran with half of what it said.
void prescan(std::string_view text, const std::string& file, Position o) {
  int depth = 0;
  bool in_string = false, escaped = false;
  std::size_t string_start = 0;
  // Per open object or array: the keys seen (objects only); a key is a string followed by ':'.
  std::vector<std::pair<bool, std::set<std::string_view>>> open;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
        if (open.empty() || !open.back().first) continue;
        std::size_t j = i + 1;
        while (j < text.size() && (text[j] == ' ' || text[j] == '\t' || text[j] == '\n' || text[j] == '\r')) ++j;
        if (j >= text.size() || text[j] != ':') continue;
        const std::string_view key = text.substr(string_start + 1, i - string_start - 1);
        if (!open.back().second.insert(key).second)
          throw InputError(
              file, where(text, string_start, o),
              "the key \"" + std::string(key) + "\" appears twice in one object (only the last would count): keep one");
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      string_start = i;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw InputError(file, where(text, i, o),
                         "JSON nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
      open.emplace_back(c == '{', std::set<std::string_view>{});
    } else if (c == ']' || c == '}') {
      --depth;
      if (!open.empty()) open.pop_back();
    } else if ((c >= '0' && c <= '9') || c == '-') {
      std::size_t j = i;
      while (j < text.size() && number_char(text[j])) ++j;
      const std::string token(text.substr(i, j - i));
      errno = 0;
      const double v = std::strtod(token.c_str(), nullptr);
      if (std::isinf(v) || (errno == ERANGE && v != 0.0))
        throw InputError(file, where(text, i, o),
                         "the number " + token + " is out of range (a double holds up to about 1.8e308)");
      i = j - 1;
    }
  }
}

}  // namespace

ojson parse_json(std::string_view text, const std::string& file, std::size_t first_line, std::size_t first_column) {
  const Position o{first_line, first_column};
  prescan(text, file, o);
  try {
    return ojson::parse(text);
  } catch (const ojson::parse_error& e) {
    std::string what = e.what();
    // nlohmann's text: "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error while parsing
    // ..."
    auto pos = what.find("syntax error");
    if (pos == std::string::npos) pos = what.find(": ");
    const std::string msg = pos == std::string::npos ? what : what.substr(pos);
    throw InputError(file, where(text, e.byte == 0 ? 0 : e.byte - 1, o), "invalid JSON: " + msg);
  } catch (const ojson::exception& e) {
    // What the prescan did not foresee; the library's text, without its "[json.exception...]" tag.
    std::string what = e.what();
    const auto pos = what.find("] ");
    throw InputError(file, "", "invalid JSON: " + (pos == std::string::npos ? what : what.substr(pos + 2)));
  }
}

}  // namespace cubesim
