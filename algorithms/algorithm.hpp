#pragma once
/// What every algorithm provides (DESIGN.md "Analytic models"): a simulated process per node, a
/// prediction written from the paper's formula, and a check of the data each node ends with.
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

enum class Relation { exact, upper_bound, approx };
std::string relation_name(Relation r);

struct Prediction {
  Time time;
  std::int64_t startups = 0;           ///< the table's "start-ups" column
  std::int64_t msg_startups = 0;       ///< tau_msg terms (our extension: none in the tables)
  std::int64_t element_transfers = 0;  ///< the table's "element transfers" column
  std::int64_t flops = 0;              ///< arithmetic on the critical path (reductions: the additions)
  Relation relation = Relation::exact;
  double tolerance = 0.0;              ///< for approx: |sim/pred - 1| <= tolerance
  std::string source;                  ///< paper, table, row
  std::optional<double> b_opt;         ///< the table's optimum packet size, where it gives one
  std::optional<double> min_startups;  ///< the table's minimum start-ups, where it gives one
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

struct AlgorithmInfo {
  std::string name;
  std::string summary;
  std::string source;                    ///< paper and section
  std::vector<std::string> params;       ///< accepted keys of "params"
  std::vector<std::string> required;     ///< keys that must be given
  std::function<std::optional<SetupError>(const Setup&)> check;
  std::function<Task<>(Node&, Params)> process;
  std::function<Prediction(const Setup&)> predict;
  std::function<Verdict(const Setup&, const std::vector<Buffer>&)> verify;
};

// Helpers for predictions: table terms with overflow checks.
std::int64_t ceil_div(std::int64_t a, std::int64_t b);

/// The n-part routings (TR-530 §4.1.1 GC(n,1), §4.1.3-4.1.4, §4.2.1 GCEA(n,N)) split a block of
/// M elements into n parts: sizes differ by at most one element, larger parts first.
inline std::int64_t part_size(std::int64_t M, std::int64_t n, std::int64_t i) { return M / n + (i < M % n ? 1 : 0); }
/// Where part i of n starts in the block.
inline std::int64_t part_offset(std::int64_t M, std::int64_t n, std::int64_t i) {
  return i * (M / n) + (i < M % n ? i : M % n);
}
/// time = startups*tau + msg_startups*tau_msg + element_transfers*t_c + flops*t_a, overflow-checked.
Time prediction_time(const Machine& m, const Prediction& p);
/// The row TR-530 Table 2 SBT-b(1,N) and Table 3 SBT-p(1,1) share: element transfers (N-1)M,
/// start-ups sum_{i<n} ceil(2^i M / B), one message per dimension, B_opt = NM/2, min start-ups n.
Prediction predict_sbt_doubling(const Setup& s, std::string source);
/// C(n, k), 0 outside 0 <= k <= n (the tables' binomial coefficients).
std::int64_t binomial(int n, int k);
/// GC(n,1) (Table 1) and GCEA(n,N) (Table 2): N-1 steps of one part on every port, the largest
/// part ceil(M/n) setting each step: element transfers ceil(M/n)(N-1), start-ups
/// ceil(ceil(M/n)/B)(N-1), B_opt M/n, min start-ups N-1.
Prediction predict_rotated_gray(const Setup& s, std::string source);
/// SBT-b(n,N) (Table 2) and SBT-p(n,1) (Table 3): the SBT's busiest port carries C(n-1, i)
/// blocks in step i: element transfers NM/2, start-ups sum_{i<n} ceil(C(n-1,i) M / B),
/// B_opt NM / sqrt(2 pi (n-1)), min start-ups n.
Prediction predict_sbt_levels(const Setup& s, std::string source);
/// SBnT-b(n,N), nRSBT-b(n,N) (Table 2), SBnT-p(n,1), nRSBT-p(n,1) (Table 3): C(n,i)/n blocks a
/// port in step i: element transfers (N-1)M/n, start-ups sum_{i=1}^{n} ceil(C(n,i) M / (nB)),
/// B_opt sqrt(2/pi) NM / n^1.5, min start-ups n. (Exact terms; the caller states the relation.)
Prediction predict_balanced_levels(const Setup& s, std::string source);
/// One common check: a hypercube topology, root inside it, M >= 1, 1 <= B <= B_m.
std::optional<SetupError> check_cube_collective(const Setup& s, bool uses_root);

}  // namespace cubesim
