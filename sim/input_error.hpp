#pragma once
/// Bad user input (config, machine, trace, arguments): one line naming the file, where in it
/// (a JSON pointer, or a line and column), and what is wrong. The command line exits 2 on it.
#include <stdexcept>
#include <string>

namespace cubesim {

/// The one-line promise holds whatever the input held: control characters (a key with a
/// newline or a terminal escape in it) are written as \n, \t, \xHH.
inline std::string one_line(const std::string& s) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string r;
  r.reserve(s.size());
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n')
      r += "\\n";
    else if (c == '\t')
      r += "\\t";
    else if (c == '\r')
      r += "\\r";
    else if (c < 0x20 || c == 0x7f)
      r.append("\\x").append(1, hex[c >> 4]).append(1, hex[c & 15]);
    else
      r += ch;
  }
  return r;
}

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string where, std::string message)
      : std::runtime_error(compose(file, where, message)),
        file_(std::move(file)),
        where_(std::move(where)),
        message_(std::move(message)) {}
  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] const std::string& where() const { return where_; }
  [[nodiscard]] const std::string& message() const { return message_; }

 private:
  static std::string compose(const std::string& f, const std::string& w, const std::string& m) {
    std::string s = f.empty() ? std::string("cubesim") : f;  // the command line: no file
    if (!w.empty()) s += ": " + w;
    return one_line(s + ": " + m);
  }
  std::string file_, where_, message_;
};

}  // namespace cubesim
