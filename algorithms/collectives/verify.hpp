#pragma once
/// The data check every collective shares: node x must end with exactly `size(x)` elements, the
/// i-th equal to `value(x, i)`. In timing-only mode only the sizes are checked.
#include <string>
#include <vector>

#include "algorithms/algorithm.hpp"

namespace cubesim {

template <class SizeFn, class ValueFn>
Verdict verify_each(const Setup& s, const std::vector<Buffer>& results, SizeFn size, ValueFn value) {
  for (std::size_t x = 0; x < results.size(); ++x) {
    const Buffer& b = results[x];
    const NodeId node = static_cast<NodeId>(x);
    const std::int64_t want = size(node);
    if (b.size() != want)
      return {false, "node " + std::to_string(x) + " ends with " + std::to_string(b.size()) + " elements, expected " +
                         std::to_string(want)};
    if (!s.data_mode || want == 0) continue;
    if (!b.has_data()) return {false, "node " + std::to_string(x) + " ends with no data in data mode"};
    auto v = b.values();
    for (std::int64_t i = 0; i < want; ++i) {
      const Element e = value(node, i);
      if (v[i] != e)
        return {false, "node " + std::to_string(x) + " element " + std::to_string(i) + " is " + std::to_string(v[i]) +
                           ", expected " + std::to_string(e)};
    }
  }
  return {};
}

}  // namespace cubesim
