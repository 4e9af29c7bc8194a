#pragma once
/// Transparent huge pages for the whole heap, on request (docs/performance.md "Huge pages, where
/// they pay").
///
/// Where the kernel gives huge pages only to memory that asks for them (`madvise` in
/// /sys/kernel/mm/transparent_hugepage/enabled, Debian's default), glibc's malloc asks for them
/// when started with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (glibc 2.35 and later; read once, at
/// start-up, so the binary sets it and executes itself again). CUBESIM_HUGEPAGES=1 asks for it;
/// the default does not (since 2026-11-29): fewer TLB misses did not pay for the first touch of
/// a fresh huge page, which on this project's virtual machines costs six to nine times what 512
/// small pages do once the host has taken back the guest's free memory (700 MiB touched: 2.1-3.2 s
/// in huge pages, 0.35 s in small ones). Paired, matmul2d.a5 all-port on 2^16 nodes ran in 0.90
/// of the time without (system time 1.15 -> 0.30 s); in one pass over the 18 rows of the 2-D
/// multiplications with idle seconds between runs, 10 of the engine's 12 ran in 0.59-0.86 of the
/// time without (the other two 0.96 and 1.05), the lockstep simulator's six 0.79-1.37: the
/// lockstep simulators now ask for huge pages for their own large arrays only
/// (sim/kernel/huge_array.hpp). A GLIBC_TUNABLES that already names the tunable is left alone.
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

/// Whether CUBESIM_HUGEPAGES (null: unset) asks for huge pages for the whole heap: "1" only.
inline bool huge_pages_requested(const char* env) { return env != nullptr && std::strcmp(env, "1") == 0; }

/// Called first in main(): where CUBESIM_HUGEPAGES=1 asks for it, executes this binary again with
/// huge pages asked for, where that changes anything; on any failure it simply goes on as it is.
inline void use_huge_pages(char** argv) {
  if constexpr (!kHugePagesBuild) return;  // the sanitizers have their own allocator
  if (!huge_pages_requested(std::getenv("CUBESIM_HUGEPAGES"))) return;
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
