#include "sim/runner.hpp"

#include <cmath>

namespace cubesim {

bool relation_holds(const Prediction& p, Time simulated) {
  switch (p.relation) {
    case Relation::exact: return simulated == p.time;
    case Relation::upper_bound: return simulated <= p.time;
    case Relation::approx: {
      if (p.time == Time{}) return simulated == Time{};
      const double r = static_cast<double>(simulated.count()) / static_cast<double>(p.time.count());
      return std::fabs(r - 1.0) <= p.tolerance;
    }
  }
  return false;
}

RunOutcome run_point(const RunPoint& point, const AlgorithmInfo& info, bool verify) {
  RunOutcome out;
  out.point = &point;
  const Setup& s = point.setup;
  out.prediction = info.predict(s);
  Engine engine(s.machine, s.topology, EngineOptions{s.params.B, s.data_mode});
  const Params params = s.params;
  try {
    out.stats = engine.run([&](Node& node) { return info.process(node, params); });
  } catch (const SimulationError& e) {
    out.error = e.what();
    return out;
  }
  const Time sim = out.stats.time, pred = out.prediction.time;
  out.ratio = pred.count() == 0 ? (sim.count() == 0 ? 1.0 : INFINITY)
                                : static_cast<double>(sim.count()) / static_cast<double>(pred.count());
  out.relation_holds = relation_holds(out.prediction, sim);
  const PathCounts& cp = out.stats.critical_path;
  out.terms_match = cp.startups == out.prediction.startups && cp.element_transfers == out.prediction.element_transfers &&
                    cp.msg_startups == out.prediction.msg_startups;
  if (verify) {
    out.verify_ran = true;
    Verdict v = info.verify(s, engine.results());
    out.verified = v.ok;
    out.verify_message = v.message;
  }
  return out;
}

}  // namespace cubesim
