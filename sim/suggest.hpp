#pragma once
/// "Did you mean": the known name closest to a mistyped one, by edit distance (Damerau's optimal
/// string alignment: insertions, deletions, substitutions and swaps of two neighbours, each 1).
/// Used by every error that names an unknown thing (algorithm, machine, key, command, option), so
/// that `broadcast.sbtt` says `did you mean "broadcast.sbt"?` instead of listing sixty names. It
/// sits in sim/ because machines/ and app/ both use it and sim/ includes nothing above it.
#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace cubesim {

/// The optimal-string-alignment distance between a and b, case-insensitive.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  const auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (std::size_t j = 0; j <= m; ++j) prev[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const bool same = lower(a[i - 1]) == lower(b[j - 1]);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    prev2.swap(prev);
    prev.swap(cur);
  }
  return prev[m];
}

/// The known names close enough to `name` to be what was meant, closest first (ties in the
/// order given): within a third of the name's length (at least 1, at most 3 edits), or those
/// that start with it when it is a prefix of at least three characters. At most three.
inline std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& known) {
  const std::size_t limit = std::clamp<std::size_t>(name.size() / 3, 1, 3);
  std::vector<std::pair<std::size_t, std::size_t>> hits;  // (distance, index)
  for (std::size_t i = 0; i < known.size(); ++i) {
    std::size_t d = edit_distance(name, known[i]);
    if (d > limit && name.size() >= 3 && known[i].size() > name.size() &&
        edit_distance(name, std::string_view(known[i]).substr(0, name.size())) == 0)
      d = limit;  // a prefix: "broadcast" -> broadcast.sbt, ...
    if (d <= limit && d > 0) hits.emplace_back(d, i);
  }
  std::stable_sort(hits.begin(), hits.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [d, i] : hits) {
    if (out.size() == 3) break;
    out.push_back(known[i]);
  }
  return out;
}

/// " (did you mean \"x\"?)", " (did you mean \"x\" or \"y\"?)", or "" when nothing is close.
inline std::string did_you_mean(std::string_view name, const std::vector<std::string>& known) {
  const std::vector<std::string> c = closest_names(name, known);
  if (c.empty()) return "";
  std::string s = " (did you mean ";
  for (std::size_t i = 0; i < c.size(); ++i)
    s += (i == 0 ? "" : i + 1 == c.size() ? " or " : ", ") + ("\"" + c[i] + "\"");
  return s + "?)";
}

}  // namespace cubesim
