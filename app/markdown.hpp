#pragma once
/// Helpers of the Markdown tables cubesim generates (cubesim describe, list --markdown).
#include <string>

namespace cubesim {

/// A table cell's text, with every '|' escaped.
inline std::string markdown_cell(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '|' ? std::string("\\|") : std::string(1, c);
  return o;
}

}  // namespace cubesim
