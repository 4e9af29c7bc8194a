#pragma once
/// Transparent huge pages for the few large arrays a simulator walks in no order a cache predicts
/// (docs/performance.md "Huge pages, where they pay").
///
/// A vector with this allocator asks the kernel for huge pages (madvise MADV_HUGEPAGE) when it
/// holds at least kHugeArrayBytes; smaller ones are ordinary allocations. The lockstep
/// simulators' per-node and per-link arrays use it: their runs are long and their arrays a few
/// hundred megabytes at most, so fewer TLB misses pay for the slower first touch of a huge page
/// (on this project's virtual machines a fresh huge page costs six to nine times what 512
/// small ones do). Asking for huge pages for the whole heap (CUBESIM_HUGEPAGES=1, app/huge_pages.hpp)
/// made the engine's runs, which touch far more memory once, slower. Only a hint: where the
/// kernel gives no huge pages (or is not Linux) nothing changes; the contents are the same.
#include <cstddef>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace cubesim::detail {

/// The size from which an array asks for huge pages (two huge pages: a smaller one would mostly
/// round up to one, touched whole).
inline constexpr std::size_t kHugePage = std::size_t{2} << 20;
inline constexpr std::size_t kHugeArrayBytes = 2 * kHugePage;

template <class T>
struct HugeArrayAllocator {
  using value_type = T;
  HugeArrayAllocator() noexcept = default;
  template <class U>
  HugeArrayAllocator(const HugeArrayAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)

  static constexpr std::size_t kAlign = alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__ ? alignof(T) : 0;

  /// Whether n elements take the huge-page path (the same answer at allocate and deallocate).
  static bool huge(std::size_t n) { return n * sizeof(T) >= kHugeArrayBytes; }
  static std::size_t rounded(std::size_t n) { return (n * sizeof(T) + kHugePage - 1) / kHugePage * kHugePage; }

  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    if (!huge(n)) {
      if constexpr (kAlign != 0) return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{kAlign}));
      return static_cast<T*>(::operator new(n * sizeof(T)));
    }
    // Through operator new (the heap meter counts it: sim/heap_meter.hpp), aligned to a huge page.
    void* p = ::operator new (rounded(n), std::align_val_t{kHugePage});
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    ::madvise(p, rounded(n), MADV_HUGEPAGE);  // a hint: a failure changes nothing
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (!huge(n)) {
      if constexpr (kAlign != 0)
        ::operator delete (p, std::align_val_t{kAlign});
      else
        ::operator delete(p);
      return;
    }
    ::operator delete (p, std::align_val_t{kHugePage});
  }
  template <class U>
  bool operator==(const HugeArrayAllocator<U>&) const noexcept {
    return true;
  }
};

/// A vector whose storage asks for huge pages once it is large (HugeArrayAllocator).
template <class T>
using HugeArray = std::vector<T, HugeArrayAllocator<T>>;

}  // namespace cubesim::detail
