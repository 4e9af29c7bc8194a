#pragma once
/// What a run will need and what this machine has, so that a run too large is refused before it
/// allocates (docs/reliability.md, "Memory"), not killed by the kernel halfway.
#include <cstdint>
#include <string>

namespace cubesim {

/// The engine's own state for one node in timing mode (the node, its process's coroutine frame,
/// its queues), measured: broadcast.sbt on 2^18 nodes peaks at 478 MB, 1.8 KB a node, of which
/// this is a floor. Algorithms with shared plans or many concurrent strands need more.
inline constexpr std::int64_t kEngineBytesPerNode = 1536;

/// Bytes this process can still allocate: the least of the kernel's MemAvailable, the cgroup's
/// memory.max less memory.current (cgroup v2) and RLIMIT_AS less what is mapped. The variable
/// CUBESIM_MEMORY_LIMIT (bytes) replaces the reading, for tests and batch jobs that know better.
/// With a memory budget set (set_memory_budget), also no more than the budget less what this
/// process holds resident now.
std::int64_t available_memory_bytes();

/// This process's resident memory now (/proc/self/statm); 0 where it cannot be read.
std::int64_t resident_bytes();

/// The memory budget of this process (--max-memory, docs/reliability.md "Budgets"): the most it
/// may hold resident. Runs are refused up front when their estimate does not fit in it; inside a
/// run the heap meter (sim/heap_meter.hpp) refuses an allocation that would take the heap past
/// the budget less what the process holds outside its heap now (set here); and the engine stops
/// a run whose resident memory passes it (EngineOptions::max_resident_bytes).
/// 0: none (the default until the command line sets one).
void set_memory_budget(std::int64_t bytes);
std::int64_t memory_budget();
/// The budget the command line uses when --max-memory is not given: what this process holds
/// now and 90 % of what the machine has available (the rest is left to the kernel and to the
/// growth between two readings).
std::int64_t default_memory_budget();

/// At least what a run on `nodes` nodes needs: the engine's state, and in data mode
/// `payload_elements` elements of 8 bytes. (A point of a config is admitted by its estimate: this
/// floor with no payload, and its algorithm's memory model, app/runner.cpp point_memory_estimate.)
std::int64_t run_memory_floor(std::int64_t nodes, std::int64_t payload_elements);

/// "3.2 GiB"
std::string format_bytes(std::int64_t bytes);

/// What a refusal's `need` is: a floor ("needs at least"), or a model's estimate ("needs about").
enum class MemoryNeed { floor, estimate };
/// Empty when `need` fits in what is available; else the sentence that says why not, naming the
/// need and, under a budget, the budget.
/// `basis` (for an estimate: "broadcast.sbt's memory model") follows the need in parentheses.
std::string memory_refusal(std::int64_t need, const std::string& what, MemoryNeed kind = MemoryNeed::floor,
                           const std::string& basis = "");

}  // namespace cubesim
