#pragma once
/// What two ways of running one point must agree on (the per-packet engine and trains, the engine
/// and the lockstep simulator), and the regression configs they are compared over.
#include <algorithm>
#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "app/report.hpp"
#include "app/runner.hpp"
#include "helpers.hpp"

namespace cubesim::test {

/// The report's "simulated" object without the engine's own counters (events, resumes), the
/// verdicts and the check's message, an error's text.
inline ojson comparable(const RunOutcome& o) {
  ojson j;
  j["error"] = o.error;
  if (!o.error.empty()) return j;
  ojson sim = simulated_json(o.stats, ReportOptions{.reproducible = true});
  sim.erase("events");
  sim.erase("resumes");
  j["simulated"] = std::move(sim);
  j["verified"] = o.verified;
  j["verify_message"] = o.verify_message;
  j["relation_holds"] = o.relation_holds;
  j["terms_match"] = o.terms_match;
  return j;
}

/// `s` on the simple machine's costs (tau = 100 t_c, no message start-up: packets of one size
/// end together, so ties abound) with packets of at most 4 elements, its ports kept.
inline Setup with_simple_costs(Setup s) {
  const Machine m = simple_machine(s.machine.ports, s.machine.packet_elements);
  s.machine.tau = m.tau;
  s.machine.t_c = m.t_c;
  s.machine.t_a = m.t_a;
  s.machine.t_copy = m.t_copy;
  s.machine.tau_msg = Time{};
  s.params.B = std::min<std::int64_t>(4, s.params.B);
  return s;
}

/// The regress configs (configs/regress/*.json but the golden values and the suite), by name.
inline std::vector<std::string> regress_configs() {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(fs::path(CUBESIM_SOURCE_DIR) / "configs" / "regress"))
    if (e.path().extension() == ".json" && e.path().filename() != "golden.json" && e.path().filename() != "suite.json")
      names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// One point of the multiplications' grid (for_each_multiplication_point).
struct MatmulPoint {
  const AlgorithmInfo* info;
  std::string name;
  int n;
  std::array<std::int64_t, 3> pqr;
  std::int64_t K, B;
  int costs;
  /// The point in timing mode on `m` (the n-cube, P, Q, R, K, B set).
  [[nodiscard]] RunPoint on(const Machine& m) const {
    RunPoint rp;
    rp.info = info;
    rp.setup.machine = m;
    rp.setup.topology = Topology::hypercube(n);
    rp.setup.params.P = pqr[0];
    rp.setup.params.Q = pqr[1];
    rp.setup.params.R = pqr[2];
    rp.setup.params.K = K;
    rp.setup.params.B = B;
    rp.setup.data_mode = false;
    return rp;
  }
  [[nodiscard]] std::string where() const {
    return name + " n=" + std::to_string(n) + " P=" + std::to_string(pqr[0]) + " K=" + std::to_string(K) +
           " B=" + std::to_string(B) + " costs " + std::to_string(costs);
  }
};

/// The lockstep tests' grid of the 2-D multiplications with step programs: Cannon (K = 1, 2),
/// Dekel and the outer product (K = 1, 2; square grids: even n) on cubes of 0 to 7 dimensions,
/// P x Q x R = 32^3, 48 x 40 x 36 and 5 x 7 x 3 (blocks the grid divides and does not, rings of
/// two items a node on odd cubes), packets of 1, 4 and 256 elements, and `machines` machines
/// (costs 0 .. machines - 1, the caller's to define).
template <class F>
void for_each_multiplication_point(const Registry& reg, int machines, F&& f) {
  for (const char* algo : {"matmul2d.cannon", "matmul2d.dekel", "matmul2d.outer"}) {
    const AlgorithmInfo* info = reg.find(algo);
    if (info == nullptr) {
      ADD_FAILURE() << algo << " is not registered";
      continue;
    }
    const std::string name(algo);
    for (int n = 0; n <= 7; ++n)
      for (const auto& pqr : {std::array<std::int64_t, 3>{32, 32, 32}, {48, 40, 36}, {5, 7, 3}})
        for (std::int64_t K : {1, 2})
          for (std::int64_t B : {1, 4, 256})
            for (int costs = 0; costs < machines; ++costs)
              if (!(K > 1 && name == "matmul2d.dekel") && !(n % 2 == 1 && name == "matmul2d.outer"))
                f(MatmulPoint{info, name, n, pqr, K, B, costs});
  }
}

}  // namespace cubesim::test
