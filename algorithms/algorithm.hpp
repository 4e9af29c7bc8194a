#pragma once
/// What every algorithm provides (DESIGN.md "Analytic models"): a simulated process per node, a
/// prediction written from the paper's formula, and a check of the data each node ends with.
#include <bit>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/params.hpp"
#include "sim/buffer.hpp"
#include "sim/machine.hpp"
#include "sim/node.hpp"
#include "sim/steps.hpp"
#include "sim/task.hpp"
#include "sim/topology.hpp"

namespace cubesim {

/// The resolved inputs of one run.
struct Setup {
  Machine machine;
  Topology topology = Topology::hypercube(0);
  Params params;
  bool data_mode = true;
};

/// exact: simulated == predicted; upper_bound: simulated <= predicted; lower_bound: simulated >=
/// predicted (TR-572 Theorem 3); approx: |simulated/predicted - 1| <= tolerance.
enum class Relation { exact, upper_bound, approx, lower_bound };
std::string relation_name(Relation r);

struct Prediction {
  Time time;
  std::int64_t startups = 0;           ///< the table's "start-ups" column
  std::int64_t msg_startups = 0;       ///< tau_msg terms (our extension: none in the tables)
  std::int64_t element_transfers = 0;  ///< the table's "element transfers" column
  std::int64_t flops = 0;              ///< arithmetic on the critical path (reductions: the additions)
  std::int64_t copies = 0;             ///< elements copied on the critical path (TR-572 §8.1 t_copy terms)
  Time delays;  ///< idle time the schedule itself waits on the critical path (TR-572 §6.1.3's rounds)
  Relation relation = Relation::exact;
  double tolerance = 0.0;              ///< for approx: |sim/pred - 1| <= tolerance
  std::string source;                  ///< paper, table, row
  std::optional<double> b_opt;         ///< the table's optimum packet size, where it gives one
  std::optional<double> min_startups;  ///< the table's minimum start-ups, where it gives one
  std::optional<double> n1_opt;        ///< the table's optimum number of processor rows (TR-530 Table 12, Fig. 24)
};

struct Verdict {
  bool ok = true;
  std::string message;  ///< the first discrepancy, when not ok
};

/// A problem with the inputs of a run: which part of the config, and what.
struct SetupError {
  std::string pointer;  ///< JSON pointer into the config, e.g. "/params/root"
  std::string message;
};

/// The worst departure from a row that the exact-grid test (tests/test_algorithms_exact.cpp)
/// measures for one promised relation: the largest |simulated/predicted - 1| where the row is an
/// approximation of that tolerance, the lowest simulated/predicted where it is an upper bound.
/// The test fails when a figure here differs from what it measures, so the figures cannot drift.
struct Deviation {
  Relation relation = Relation::approx;  ///< approx or upper_bound
  double tolerance = 0;                  ///< approx: the tolerance promised
  double worst = 0;                      ///< rounded to 3 significant digits
  std::string at;                        ///< the grid point, "n=6 M=257 B=256"
};

/// What an algorithm predicts on one port model, in words (docs/primitives.md is generated from
/// these: `cubesim list algorithms --markdown`).
struct PortDoc {
  std::string row;                    ///< the table row or derivation, e.g. "T1 SBT-b(1,1), subtree by subtree"
  std::string relation;               ///< e.g. "exact when B divides M; approx <= 10 %; bound on a 1-cube"
  std::vector<Deviation> deviations;  ///< measured over the exact grid; empty where exact everywhere
};

/// A step program's part in the memory of its run (AlgorithmInfo::steps_memory): whether its
/// chains carry flops (StepProgram::wide()), the strands a node runs (StepProgram::strands()), and
/// the bytes the program itself holds (its plan, its tables), all nodes together.
struct StepsMemory {
  bool wide = false;
  int strands = 1;
  bool repeats = false;  ///< StepProgram::repeats promises a repeat somewhere (LockstepShape::repeats)
  std::int64_t program_bytes = 0;
};

/// One algorithm: its process, its prediction, its data check, and its documentation. Register
/// with designated initializers (algorithms/registry.hpp).
struct AlgorithmInfo {
  std::string name;                   ///< "<operation>.<routing>" (DESIGN.md)
  std::string summary;                ///< one line for `cubesim list algorithms`
  std::string source;                 ///< paper, section and table rows
  std::vector<std::string> params;    ///< accepted keys of "params" (algorithms/params.hpp)
  std::vector<std::string> required;  ///< keys that must be given
  std::function<std::optional<SetupError>(const Setup&)> check;
  std::function<Task<>(Node&, Params)> process;
  std::function<Prediction(const Setup&)> predict;
  std::function<Verdict(const Setup&, const std::vector<Buffer>&)> verify;
  /// The memory model (docs/reliability.md "Budgets"): the bytes a run holds at its peak beyond
  /// the engine's own state for each node (sim/resources.hpp kEngineBytesPerNode), from the
  /// parameters and the plan, in the run's mode. Measured and stated beside the algorithm; held
  /// to the measured peak by tests/test_memory.cpp. Empty: default_memory().
  std::function<std::int64_t(const Setup&)> memory;
  /// The process as a step program (sim/steps.hpp), for the lockstep simulator: the same
  /// operations in the same order as `process`, checked against it by tests/test_lockstep.cpp.
  /// Empty, or null for a setup: the engine runs `process`.
  std::function<std::unique_ptr<StepProgram>(const Setup&)> steps;
  /// The memory of a run of that program by the lockstep simulator, stated beside it, without
  /// making the program: its shape (the simulator's records follow from it: app/runner.cpp adds
  /// them, sim/lockstep.hpp lockstep_memory) and its own state; nullopt exactly where `steps`
  /// declines the setup (the two share their condition; tests/test_lockstep.cpp checks both, and
  /// the shape against the program's). Held to the measured peak by tests/test_memory.cpp. Empty:
  /// the engine's model (`memory`) stands for every run.
  std::function<std::optional<StepsMemory>(const Setup&)> steps_memory;
  PortDoc one_port;  ///< one-port (and k-port) machines
  PortDoc all_port;  ///< n-port machines
};

/// A memory model of the usual shape: `node_bytes` for each node (its plan, its strands and the
/// messages it has in flight, in both modes) and, in data mode, `element_bytes` for each of the
/// elements that the nodes hold together at the peak (an element is 8 bytes; the rest is the
/// copies of a block in flight, the vectors that hold the blocks, and the check of the data).
struct MemoryModel {
  double node_bytes = 0;
  double element_bytes = 0;
};
/// The bytes of a model for `elements` elements held in data mode (none in timing mode);
/// saturates at INT64_MAX.
std::int64_t model_bytes(const Setup& s, MemoryModel m, double elements);
/// The elements the nodes hold together by default: N M, or the three matrices P Q + Q R + P R.
std::int64_t default_elements(const Setup& s);
/// N M and N^2 M elements (a block on every node; N blocks on every node), as doubles: N^2 M may
/// pass 2^63 where the run would be refused anyway.
inline double block_elements(const Setup& s) {
  return static_cast<double>(s.topology.size()) * static_cast<double>(s.params.M);
}
inline double all_blocks_elements(const Setup& s) { return static_cast<double>(s.topology.size()) * block_elements(s); }
/// The model of an algorithm that states none: 1 KiB a node and 24 bytes an element of
/// default_elements() (three copies of each: the data, a message in flight, the result).
inline constexpr MemoryModel kDefaultMemory{1024, 24};
std::int64_t default_memory(const Setup& s);
/// The memory of a run of `a` by its model, or by the default.
std::int64_t algorithm_memory(const AlgorithmInfo& a, const Setup& s);

// Helpers for predictions: table terms with overflow checks.
std::int64_t ceil_div(std::int64_t a, std::int64_t b);
/// C(n, k), 0 outside 0 <= k <= n (the tables' binomial coefficients).
std::int64_t binomial(int n, int k);

/// The n-part routings (TR-530 §4.1.1 GC(n,1), §4.1.3-4.1.4, §4.2.1 GCEA(n,N)) split a block of
/// M elements into n parts: sizes differ by at most one element, larger parts first.
inline std::int64_t part_size(std::int64_t M, std::int64_t n, std::int64_t i) { return M / n + (i < M % n ? 1 : 0); }
/// Where part i of n starts in the block.
inline std::int64_t part_offset(std::int64_t M, std::int64_t n, std::int64_t i) {
  return i * (M / n) + (i < M % n ? i : M % n);
}
/// time = startups*tau + msg_startups*tau_msg + element_transfers*t_c + flops*t_a + copies*t_copy,
/// overflow-checked.
Time prediction_time(const Machine& m, const Prediction& p);
/// The dimension of the lowest 1-bit of a (non-zero, relative) node address: the dimension a
/// node is reached over in an SBT, the parent's direction.
inline int lowest_one(NodeId x) { return std::countr_zero(static_cast<std::uint64_t>(x)); }
/// log2 of a power of two, or -1 (TR-572's P = 2^p, TR-530's N1 = 2^n1).
inline int log2_exact(std::int64_t x) {
  return x > 0 && (x & (x - 1)) == 0 ? std::countr_zero(static_cast<std::uint64_t>(x)) : -1;
}
/// The number of 1-bits of an address: a node's depth in a shortest-path spanning tree.
inline int ones(NodeId x) { return std::popcount(static_cast<std::uint64_t>(x)); }

/// The sizes every run keeps to, so that every count and time the predictions and the engine
/// form stays inside 64 bits (docs/reliability.md, "Sizes"): at most kMaxElements elements in a
/// node's data (N M for the collectives, whose busiest node holds N blocks of M; P Q, Q R and P R
/// for the matrices) and at most kMaxFlops multiply-adds (P Q R K). 2^40 elements are 8 TiB of
/// doubles; the papers' largest runs hold 2^30.
inline constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;
inline constexpr std::int64_t kMaxFlops = std::int64_t{1} << 50;
/// Every config and replay passes this before its algorithm's own check.
std::optional<SetupError> check_sizes(const Setup& s);

/// One common check: a hypercube topology, root inside it, M >= 1, 1 <= B <= B_m.
std::optional<SetupError> check_cube_collective(const Setup& s, bool uses_root);
/// M >= 1 and 1 <= B <= B_m: a collective's block and packet size.
std::optional<SetupError> check_block(const Setup& s);

}  // namespace cubesim
