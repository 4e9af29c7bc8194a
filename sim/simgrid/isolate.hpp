#pragma once
/// Runs a function in a child process and brings back the string it returns.
///
/// SimGrid 3.32 keeps global state across s4u::Engine instances (a second engine in one process
/// starts at the first one's clock, and its models are set once), and it aborts the process on
/// some errors. Each SimGrid run therefore happens in a fork of its own: the run starts clean,
/// a crash inside SimGrid becomes an error message instead of taking cubesim down, and the
/// child's peak memory is measured on its own.
#include <cstdint>
#include <functional>
#include <string>

namespace cubesim {

struct IsolatedResult {
  bool ok = false;       ///< the function returned (output holds its string)
  std::string output;    ///< what it returned
  std::string error;     ///< what it threw, or how the child died
  long max_rss_kib = 0;  ///< the child's peak resident memory
  double wall_s = 0;     ///< fork to exit, seen from the parent
};

/// Runs `body` in a forked child. Never throws for what happens in the child.
///
/// With `max_resident_bytes` > 0 (the memory budget, docs/reliability.md "Budgets") the child is
/// held to it twice over: its heap allocations are refused past the heap meter's limit
/// (sim/heap_meter.hpp), which ends the child at once with the budget error, and the parent
/// reads the child's resident memory every few milliseconds and kills it when it passes the
/// budget (what SimGrid maps outside the heap: actor stacks). Either way the result is the
/// budget error, never a partial result.
IsolatedResult run_isolated(const std::function<std::string()>& body, std::int64_t max_resident_bytes = 0);

}  // namespace cubesim
