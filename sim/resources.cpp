#include "sim/resources.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "sim/heap_meter.hpp"

namespace cubesim {

namespace {

/// The number in a one-number file ("max" or unreadable: none).
std::int64_t read_number(const char* path) {
  std::ifstream f(path);
  std::string s;
  if (!(f >> s) || s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 18) return -1;
  return std::stoll(s);
}

std::int64_t g_memory_budget = 0;

std::int64_t page_bytes() { return static_cast<std::int64_t>(::sysconf(_SC_PAGESIZE)); }

/// What the machine (kernel, cgroup, rlimit) lets this process still allocate, or the variable
/// CUBESIM_MEMORY_LIMIT.
std::int64_t machine_available_bytes() {
  if (const char* env = std::getenv("CUBESIM_MEMORY_LIMIT")) {
    char* end = nullptr;
    const long long v = std::strtoll(env, &end, 10);
    if (end != env && *end == '\0' && v > 0) return v;
  }
  std::int64_t avail = INT64_MAX;
  {
    std::ifstream f("/proc/meminfo");
    for (std::string key; f >> key;) {
      std::int64_t kib = 0;
      f >> kib;
      if (key == "MemAvailable:") avail = std::min(avail, kib * 1024);
      f.ignore(64, '\n');
    }
  }
  const std::int64_t max = read_number("/sys/fs/cgroup/memory.max"), cur = read_number("/sys/fs/cgroup/memory.current");
  if (max > 0 && cur >= 0) avail = std::min(avail, std::max<std::int64_t>(max - cur, 0));
  rlimit rl{};
  if (::getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    std::int64_t mapped = 0;
    std::ifstream statm("/proc/self/statm");
    if (statm >> mapped) mapped *= page_bytes();
    avail = std::min(avail, std::max<std::int64_t>(static_cast<std::int64_t>(rl.rlim_cur) - mapped, 0));
  }
  return avail;
}

}  // namespace

std::int64_t available_memory_bytes() {
  const std::int64_t avail = machine_available_bytes();
  if (g_memory_budget <= 0) return avail;
  return std::min(avail, std::max<std::int64_t>(g_memory_budget - resident_bytes(), 0));
}

std::int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * page_bytes();
}

void set_memory_budget(std::int64_t bytes) {
  g_memory_budget = std::max<std::int64_t>(bytes, 0);
  // The heap may hold what the budget leaves beside what this process holds resident outside
  // its heap (the binary, the libraries, the stacks): measured now, before any run.
  if (g_memory_budget == 0 || !heap::metered()) {
    heap::set_limit(0);
    return;
  }
  const std::int64_t outside = std::max<std::int64_t>(resident_bytes() - heap::live_bytes(), 0);
  heap::set_limit(std::max<std::int64_t>(g_memory_budget - outside, 1));
}

std::int64_t memory_budget() { return g_memory_budget; }

std::int64_t default_memory_budget() {
  const std::int64_t avail = machine_available_bytes();
  const std::int64_t rss = resident_bytes();
  if (avail >= INT64_MAX / 2) return 0;  // nothing known: no budget
  return rss + avail / 10 * 9;
}

std::int64_t run_memory_floor(std::int64_t nodes, std::int64_t payload_elements) {
  return nodes * kEngineBytesPerNode + payload_elements * 8;
}

std::string format_bytes(std::int64_t bytes) {
  char buf[32];
  const double b = static_cast<double>(bytes);
  if (b >= 1024.0 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f GiB", b / (1024.0 * 1024 * 1024));
  else if (b >= 1024.0 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1024.0 * 1024));
  else
    std::snprintf(buf, sizeof buf, "%.0f KiB", b / 1024.0);
  return buf;
}

std::string memory_refusal(std::int64_t need, const std::string& what, MemoryNeed kind, const std::string& basis) {
  const std::int64_t avail = available_memory_bytes();
  if (need <= avail) return "";
  std::string s = what + (kind == MemoryNeed::floor ? " needs at least " : " needs about ") + format_bytes(need) +
                  " of memory" + (basis.empty() ? "" : " (" + basis + ")") + " and " + format_bytes(avail) +
                  " is available";
  if (g_memory_budget > 0 && avail < machine_available_bytes())
    s += " under the memory budget of " + format_bytes(g_memory_budget) + " (--max-memory)";
  return s + " (smaller dimensions, timing mode, or a larger machine)";
}

}  // namespace cubesim
