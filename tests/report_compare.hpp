#pragma once
/// What two ways of running one point must agree on (the per-packet engine and trains, the engine
/// and the lockstep simulator), and the regression configs they are compared over.
#include <algorithm>
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

}  // namespace cubesim::test
