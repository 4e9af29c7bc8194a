#pragma once
/// Kernel: asking the cache for a whole record ahead of its use (engine internals: the event
/// window's stages, sim/engine.cpp "The event window", and the network models' prefetch()).
/// A hint: it reads nothing and changes nothing.
#include <cstddef>

namespace cubesim::detail {

/// Asks the cache for the line at `p` (`write`: for writing). The empty volatile asm after it
/// keeps GCC from deleting the hint: GCC 12 at -O3 finds a function that only reads memory and
/// prefetches "pure" (a prefetch is not a side effect to it), and deletes every call of it whose
/// result is unused -- that is, every call. MatchTable::prefetch and with it every search of a
/// receiver's match slot that the event window and a group's stages asked for compiled to nothing
/// from 2026-11-27 to 2026-11-28 (docs/performance.md "Prefetches that were not there";
/// tests/check_prefetch_codegen.sh checks the hints survive).
inline void prefetch(const void* p, bool write = false) {
  if (write)
    __builtin_prefetch(p, 1);
  else
    __builtin_prefetch(p, 0);
  asm volatile("" : : "r"(p));
}

/// Every 64-byte cache line `record` spans, aligned or not. Asking for its first line only left
/// misses wherever a later field was read (an OpState's waiter, at byte 48 of 88, is in the
/// second line of every other Op of a vector).
template <class T>
void prefetch_lines(const T& record, bool write = false) {
  const auto* p = reinterpret_cast<const char*>(&record);
  for (std::size_t off = 0; off < sizeof(T) + 63; off += 64) prefetch(p + off, write);
}

}  // namespace cubesim::detail
