#pragma once
/// Bad user input (config, machine, trace, arguments): one line naming the file, where in it
/// (a JSON pointer, or a line and column), and what is wrong. The command line exits 2 on it.
#include <stdexcept>
#include <string>

namespace cubesim {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string where, std::string message)
      : std::runtime_error(compose(file, where, message)), file_(std::move(file)), where_(std::move(where)),
        message_(std::move(message)) {}
  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] const std::string& where() const { return where_; }
  [[nodiscard]] const std::string& message() const { return message_; }

 private:
  static std::string compose(const std::string& f, const std::string& w, const std::string& m) {
    std::string s = f.empty() ? std::string("<input>") : f;
    if (!w.empty()) s += ": " + w;
    return s + ": " + m;
  }
  std::string file_, where_, message_;
};

}  // namespace cubesim
