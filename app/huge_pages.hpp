#pragma once
/// Transparent huge pages for the simulator's heap (docs/performance.md "Huge pages").
///
/// A large run touches hundreds of megabytes to gigabytes of engine and coroutine state in an
/// order no cache predicts; with 4 KiB pages most of those accesses also miss the TLB. Where the
/// kernel gives huge pages only to memory that asks for them (`madvise` in
/// /sys/kernel/mm/transparent_hugepage/enabled, Debian's default), glibc's malloc asks for them
/// when started with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (glibc 2.35 and later; read once, at
/// start-up, so the binary sets it and executes itself again). Measured: allgather.nrsbt
/// all-port on 2^14 nodes 6.75 -> 5.64 s, peak memory 305 -> 310 MiB (median of 3 paired runs).
/// CUBESIM_HUGEPAGES=0 turns it off; so does any GLIBC_TUNABLES that already names the tunable.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include "app/sanitized.hpp"

namespace cubesim {

/// Whether this build may ask for huge pages at all (not under a sanitizer's allocator).
inline constexpr bool kHugePagesBuild = CUBESIM_SANITIZED == 0;

/// The GLIBC_TUNABLES to run with, or nothing when there is nothing to change: `current` is its
/// value now (null: unset), `thp_mode` the kernel's transparent_hugepage/enabled line.
inline std::optional<std::string> huge_pages_tunables(const char* current, std::string_view thp_mode) {
  constexpr std::string_view kTunable = "glibc.malloc.hugetlb";
  if (thp_mode.find("[madvise]") == std::string_view::npos) return std::nullopt;  // always, never, or unknown
  if (current != nullptr && std::string_view(current).find(kTunable) != std::string_view::npos) return std::nullopt;
  std::string v = current != nullptr && *current != '\0' ? std::string(current) + ":" : std::string();
  return v + std::string(kTunable) + "=1";
}

/// Called first in main(): executes this binary again with huge pages asked for, where that
/// changes anything; on any failure it simply goes on as it is.
inline void use_huge_pages(char** argv) {
  if constexpr (!kHugePagesBuild) return;  // the sanitizers have their own allocator
  if (const char* off = std::getenv("CUBESIM_HUGEPAGES"); off != nullptr && std::strcmp(off, "0") == 0) return;
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  if (!std::getline(f, mode)) return;
  const std::optional<std::string> v = huge_pages_tunables(std::getenv("GLIBC_TUNABLES"), mode);
  if (!v) return;
  if (::setenv("GLIBC_TUNABLES", v->c_str(), 1) != 0) return;
  ::execv("/proc/self/exe", argv);
  ::unsetenv("GLIBC_TUNABLES");  // the exec failed: carry on without
}

}  // namespace cubesim
