// The replaced global operator new and delete of the cubesim binaries: every allocation is counted
// into the heap meter (sim/heap_meter.hpp), and one inside a run that would pass the memory budget
// is refused (docs/reliability.md "Budgets"). Linked into the executables only (CMakeLists.txt),
// never into a library, so that a program embedding the libraries keeps its own allocator.
//
// Left out of the sanitizer build: AddressSanitizer replaces operator new itself, and two
// replacements do not link. There the meter reads metered() == false and the readings of
// resident memory alone keep the budget.
#include <malloc.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#include "app/sanitized.hpp"
#include "sim/heap_meter.hpp"

#if !CUBESIM_SANITIZED

namespace {

using cubesim::heap::g_counters;

/// Blocks from this size up may be mapped on their own (glibc's mmap threshold starts at 128 KiB):
/// their cost is read from the allocator; below it, it is glibc's chunk size, computed.
constexpr std::size_t kLarge = std::size_t{64} << 10;

/// What a block of n bytes asked for costs the process, for n < kLarge: glibc's chunk, n and its
/// 8-byte header rounded up to 16, at least 32 (malloc.c request2size), so that many small blocks
/// are not undercounted. Computed, not read, because reading it (malloc_usable_size) on every
/// allocation and free was a measurable part of the cost of counting.
constexpr std::int64_t chunk_bytes(std::size_t n) {
  const std::size_t c = (n + 8 + 15) & ~std::size_t{15};
  return static_cast<std::int64_t>(c < 32 ? 32 : c);
}

/// The same for any block, read from the allocator: malloc_usable_size + 8 is the chunk size of a
/// block from the heap (the formula above); a mapped block counts its pages less 8.
inline std::int64_t charged(void* p) { return static_cast<std::int64_t>(::malloc_usable_size(p)) + 8; }

void* allocate(std::size_t n) {
  cubesim::heap::admit(n);
  const std::size_t asked = n != 0 ? n : 1;
  void* p = std::malloc(asked);
  if (p == nullptr) throw std::bad_alloc();
  cubesim::heap::charge(asked < kLarge ? chunk_bytes(asked) : charged(p));
  return p;
}

void* allocate_aligned(std::size_t n, std::align_val_t al) {
  cubesim::heap::admit(n);
  void* p = nullptr;
  const std::size_t a = static_cast<std::size_t>(al) < sizeof(void*) ? sizeof(void*) : static_cast<std::size_t>(al);
  if (::posix_memalign(&p, a, n != 0 ? n : 1) != 0) throw std::bad_alloc();
  cubesim::heap::charge(charged(p));
  return p;
}

/// Frees a block whose size is not known (unsized delete, and every aligned block).
inline void release(void* p) noexcept {
  if (p == nullptr) return;
  cubesim::heap::charge(-charged(p));
  std::free(p);
}

/// Frees a block of n bytes asked for by allocate().
inline void release_sized(void* p, std::size_t n) noexcept {
  if (p == nullptr) return;
  const std::size_t asked = n != 0 ? n : 1;
  cubesim::heap::charge(-(asked < kLarge ? chunk_bytes(asked) : charged(p)));
  std::free(p);
}

// Dynamic initialization: the meter says it counts once this binary's operators are in place
// (they are from the first allocation on; the flag only tells readers the counts mean something).
const bool kHeapMeterInstalled = [] {
  g_counters.metered.store(true, std::memory_order_relaxed);
  return true;
}();

}  // namespace

void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return allocate(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return allocate(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t n, std::align_val_t al) { return allocate_aligned(n, al); }
void* operator new[](std::size_t n, std::align_val_t al) { return allocate_aligned(n, al); }
void* operator new(std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  try {
    return allocate_aligned(n, al);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  try {
    return allocate_aligned(n, al);
  } catch (...) {
    return nullptr;
  }
}

void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t n) noexcept { release_sized(p, n); }
void operator delete[](void* p, std::size_t n) noexcept { release_sized(p, n); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }

#endif  // !CUBESIM_SANITIZED
