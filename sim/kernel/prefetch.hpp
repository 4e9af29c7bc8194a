#pragma once
/// Kernel: asking the cache for a whole record ahead of its use (engine internals: the event
/// window's stages, sim/engine.cpp "The event window", and the network models' prefetch()).
/// A hint: it reads nothing and changes nothing.
#include <cstddef>

namespace cubesim::detail {

/// Every 64-byte cache line `record` spans, aligned or not. Asking for its first line only left
/// misses wherever a later field was read (an OpState's waiter is in its second line).
template <class T>
void prefetch_lines(const T& record) {
  const auto* p = reinterpret_cast<const char*>(&record);
  for (std::size_t off = 0; off < sizeof(T) + 63; off += 64) __builtin_prefetch(p + off);
}

}  // namespace cubesim::detail
