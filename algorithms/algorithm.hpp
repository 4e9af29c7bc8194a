#pragma once
/// What every algorithm provides (DESIGN.md "Analytic models"): a simulated process per node, a
/// prediction written from the paper's formula, and a check of the data each node ends with.
#include <bit>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/params.hpp"
#include "sim/buffer.hpp"
#include "sim/machine.hpp"
#include "sim/node.hpp"
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
  PortDoc one_port;  ///< one-port (and k-port) machines
  PortDoc all_port;  ///< n-port machines
};

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
