#include "app/runner.hpp"

#include <cmath>
#include <optional>

#include "app/params_json.hpp"
#include "app/stats_json.hpp"
#include "machines/machine_loader.hpp"
#include "sim/heap_meter.hpp"
#include "sim/input_error.hpp"
#include "sim/lockstep.hpp"
#include "sim/resources.hpp"
#include "sim/simgrid/isolate.hpp"
#include "traces/ti_trace.hpp"

namespace cubesim {

bool relation_holds(const Prediction& p, Time simulated) {
  switch (p.relation) {
    case Relation::exact:
      return simulated == p.time;
    case Relation::upper_bound:
      return simulated <= p.time;
    case Relation::lower_bound:
      return simulated >= p.time;
    case Relation::approx: {
      if (p.time == Time{}) return simulated == Time{};
      const double r = static_cast<double>(simulated.count()) / static_cast<double>(p.time.count());
      return std::fabs(r - 1.0) <= p.tolerance;
    }
  }
  return false;
}

bool relation_holds(const Prediction& p, double sim) {
  const double pred = p.time.seconds();
  const double slack = kSimGridAgreement * std::max(std::fabs(pred), std::fabs(sim));
  switch (p.relation) {
    case Relation::exact:
      return std::fabs(sim - pred) <= slack;
    case Relation::upper_bound:
      return sim <= pred + slack;
    case Relation::lower_bound:
      return sim >= pred - slack;
    case Relation::approx: {
      if (pred == 0) return std::fabs(sim) <= slack;
      return std::fabs(sim / pred - 1.0) <= p.tolerance + kSimGridAgreement;
    }
  }
  return false;
}

double relative_difference(double simgrid_s, Time cycle) {
  const double c = cycle.seconds();
  if (c == 0) return simgrid_s == 0 ? 0.0 : INFINITY;
  return (simgrid_s - c) / c;
}

void judge(RunOutcome& out) {
  const Machine& m = out.point->setup.machine;
  const Time sim = out.stats.time, pred = out.prediction.time;
  out.ratio = pred.count() == 0 ? (sim.count() == 0 ? 1.0 : INFINITY)
                                : static_cast<double>(sim.count()) / static_cast<double>(pred.count());
  out.relation_holds = relation_holds(out.prediction, sim);
  const PathCounts& cp = out.stats.critical_path;
  out.terms_match = cp.startups == out.prediction.startups &&
                    cp.element_transfers == out.prediction.element_transfers &&
                    (m.tau_msg == Time{} || cp.msg_startups == out.prediction.msg_startups) &&
                    cp.delays == out.prediction.delays && (m.t_copy == Time{} || cp.copies == out.prediction.copies) &&
                    // Free terms (t_a, t_copy or tau_msg = 0) take no time, so no chain is made longer
                    // by them: chains of equal time may count them differently.
                    (m.t_a == Time{} || cp.flops == out.prediction.flops);
}

EngineOptions engine_options(const Setup& s, const RunLimits& limits) {
  EngineOptions o{s.params.B, s.data_mode};
  o.max_events = limits.max_events;
  o.max_resident_bytes = limits.max_resident_bytes;
  o.stop = limits.stop;
  o.packet_trains = limits.packet_trains;
  o.progress = limits.progress;
  o.threads = limits.threads;
  o.lockstep_repeats = limits.lockstep_repeats;
  o.lockstep_uniform = limits.lockstep_uniform;
  return o;
}

std::string budget_message(const BudgetError& e) {
  return e.what() + std::string(e.budget() == BudgetError::Budget::events ? " (--max-events sets the budget)"
                                                                          : " (--max-memory sets the budget)");
}

std::string heap_budget_message() {
  return "the memory budget of " + format_bytes(memory_budget()) + " is spent: the run asked for " +
         format_bytes(heap::refused_bytes()) + " more with " + format_bytes(heap::refused_live_bytes()) +
         " held on the heap, which may hold " + format_bytes(heap::limit()) +
         " beside the rest of the process (--max-memory sets the budget)";
}

namespace {

/// Whether the lockstep simulator may run `info` on setup s under `limits` (`observed`: a run an
/// observer records never): the one condition run_engine and the memory estimate both ask, before
/// the algorithm's factory says whether it has a program for s.
bool lockstep_may_run(const AlgorithmInfo& info, const Setup& s, const RunLimits& limits, bool observed) {
  return limits.lockstep && !observed && info.steps && lockstep_supports(s.machine, engine_options(s, limits));
}

RunOutcome run_engine(const RunPoint& point, const AlgorithmInfo& info, bool verify, EngineObserver* observer,
                      const RunLimits& limits) {
  RunOutcome out;
  out.point = &point;
  const Setup& s = point.setup;
  out.prediction = info.predict(s);
  // A step program goes to the lockstep simulator where it times it as the engine would
  // (docs/lockstep.md); where it cannot tell what the engine would do, the engine runs the point.
  std::unique_ptr<StepProgram> program;
  if (lockstep_may_run(info, s, limits, observer != nullptr)) program = info.steps(s);
  std::optional<Engine> engine;
  std::vector<Buffer> lockstep_results;
  const Params params = s.params;
  try {
    std::optional<RunStats> stats;
    if (program) stats = run_lockstep(s.machine, s.topology, engine_options(s, limits), *program, lockstep_results);
    if (!stats) {
      engine.emplace(s.machine, s.topology, engine_options(s, limits));
      engine->set_observer(observer);
      stats = engine->run([&](Node& node) { return info.process(node, params); });
    }
    out.stats = *stats;
  } catch (const BudgetError& e) {
    out.error = budget_message(e);
    return out;
  } catch (const SimulationError& e) {
    out.error = e.what();
    return out;
  } catch (const std::overflow_error& e) {
    // Simulated time past the 64-bit picosecond clock (an approximate row predicted less): this
    // point fails, and the points of a sweep already run are kept in the report.
    out.error = e.what();
    return out;
  }
  judge(out);
  if (verify) {
    out.verify_ran = true;
    Verdict v = info.verify(s, engine ? engine->results() : lockstep_results);
    out.verified = v.ok;
    out.verify_message = v.message;
  }
  return out;
}

}  // namespace

RunOutcome run_point(const RunPoint& point, const AlgorithmInfo& info, bool verify, EngineObserver* observer,
                     const RunLimits& limits) {
  // Inside the scope every allocation of the run (the engine's set-up, its events, the check of
  // its data) is held to the memory budget (sim/heap_meter.hpp); a refusal unwinds the run,
  // whose engine then frees what it held, and is this point's error.
  const auto failed = [&](std::string error) {
    RunOutcome out;
    out.point = &point;
    out.prediction = info.predict(point.setup);
    out.error = std::move(error);
    return out;
  };
  try {
    const heap::HeapBudgetScope scope;
    return run_engine(point, info, verify, observer, limits);
  } catch (const heap::HeapBudgetExceeded&) {
    return failed(heap_budget_message());
  } catch (const std::bad_alloc&) {
    // The machine ran out before the budget (or between two readings of resident memory where
    // the heap is not metered): this point fails, and the points of a sweep already run are kept.
    return failed("out of memory (--max-memory sets a budget that stops a run before the machine runs out)");
  }
}

std::string engine_name(EngineKind k) {
  switch (k) {
    case EngineKind::cycle:
      return "cycle";
    case EngineKind::simgrid:
      return "simgrid";
    case EngineKind::both:
      return "both";
  }
  return "?";
}

SimGridOutcome run_simgrid(const Setup& s, const AlgorithmInfo& info, bool verify, SimGridOptions opt,
                           std::int64_t max_resident_bytes) {
  SimGridOutcome out;
  const IsolatedResult r = run_isolated(
      [&]() -> std::string {
        SimGridEngine engine(s.machine, s.topology, EngineOptions{s.params.B, s.data_mode}, opt);
        const Params params = s.params;
        nlohmann::json j;
        try {
          j["stats"] = engine.run([&](Node& node) { return info.process(node, params); });
          if (verify) {
            const Verdict v = info.verify(s, engine.results());
            j["verified"] = v.ok;
            j["verify_message"] = v.message;
          }
        } catch (const SimulationError& e) {
          j["error"] = e.what();
        }
        return j.dump();
      },
      max_resident_bytes);
  out.max_rss_kib = r.max_rss_kib;
  out.process_wall_s = r.wall_s;
  if (!r.ok) {
    out.error = r.error;
    return out;
  }
  const nlohmann::json j = nlohmann::json::parse(r.output);
  if (j.contains("error")) {
    out.error = j["error"].get<std::string>();
    return out;
  }
  out.stats = j["stats"].get<SimGridStats>();
  if (j.contains("verified")) {
    out.verify_ran = true;
    out.verified = j["verified"].get<bool>();
    out.verify_message = j["verify_message"].get<std::string>();
  }
  return out;
}

RunOutcome run_point(const RunPoint& point, const AlgorithmInfo& info, bool verify, EngineKind engines,
                     EngineObserver* observer, const RunLimits& limits) {
  RunOutcome out;
  if (engines != EngineKind::simgrid) {
    out = run_point(point, info, verify, observer, limits);
  } else {
    out.point = &point;
    out.prediction = info.predict(point.setup);
    out.cycle_ran = false;
  }
  if (engines != EngineKind::cycle) out.simgrid = run_simgrid(point.setup, info, verify, {}, limits.max_resident_bytes);
  return out;
}

namespace {
/// The program's part in the memory of p's run (AlgorithmInfo::steps_memory) where the lockstep
/// simulator will run p, as run_engine decides, without making the program: nullopt where it will
/// not, or where the algorithm states no part.
std::optional<StepsMemory> lockstep_part(const RunPoint& p, const RunLimits& limits, bool observed) {
  const Setup& s = p.setup;
  if (p.info == nullptr || !p.info->steps_memory || !lockstep_may_run(*p.info, s, limits, observed))
    return std::nullopt;
  std::optional<StepsMemory> m = p.info->steps_memory(s);
  // A one-port program that forks is the engine's (run_lockstep_one_port).
  if (m && s.machine.ports.kind == PortKind::one && m->strands != 1) return std::nullopt;
  return m;
}

/// The lockstep simulator's estimate of p, where it runs p.
std::optional<std::int64_t> lockstep_estimate(const RunPoint& p, const RunLimits& limits, bool observed) {
  const std::optional<StepsMemory> m = lockstep_part(p, limits, observed);
  if (!m) return std::nullopt;
  const Setup& s = p.setup;
  const std::int64_t sim =
      lockstep_memory(s.machine, s.topology, {.wide = m->wide, .strands = m->strands, .repeats = m->repeats});
  return sim > INT64_MAX - m->program_bytes ? INT64_MAX : sim + m->program_bytes;
}
}  // namespace

bool lockstep_takes(const RunPoint& p, const RunLimits& limits, bool observed) {
  return lockstep_part(p, limits, observed).has_value();
}

std::int64_t point_memory_estimate(const RunPoint& p, const RunLimits& limits, bool observed) {
  if (const auto l = lockstep_estimate(p, limits, observed)) return *l;
  const Setup& s = p.setup;
  const std::int64_t engine = run_memory_floor(s.topology.size(), 0);
  const std::int64_t algorithm = p.info != nullptr ? algorithm_memory(*p.info, s) : default_memory(s);
  return algorithm > INT64_MAX - engine ? INT64_MAX : engine + algorithm;
}

void check_memory(const Experiment& ex, const RunLimits& limits, bool observed) {
  for (const RunPoint& p : ex.runs) {
    const Setup& s = p.setup;
    const bool lockstep = lockstep_estimate(p, limits, observed).has_value();
    const std::string why =
        memory_refusal(point_memory_estimate(p, limits, observed),
                       s.topology.describe() + (s.data_mode ? " in data mode" : ""), MemoryNeed::estimate,
                       (p.info != nullptr ? p.info->name : ex.algorithm) + "'s memory model" +
                           (lockstep ? " on the lockstep simulator" : ""));
    if (why.empty()) continue;
    throw InputError(ex.file, p.point.empty() ? "/topology" : sweep_pointer(p), why);
  }
}

std::string sweep_pointer(const RunPoint& p) {
  if (p.point.empty()) return "";
  std::string at;
  for (const auto& [k, v] : p.point) at += (at.empty() ? "" : ", ") + k + "=" + v.dump();
  return "/sweep (at " + at + ")";
}

ojson trace_header(const std::string& name, const std::string& algorithm, const Setup& s, const RunStats& st) {
  ojson h;
  h["schema"] = trace::kSchema;
  h["generator"] = "cubesim";
  h["name"] = name;
  h["algorithm"] = algorithm;
  const Params& p = s.params;
  h["params"] = params_to_json(p);
  h["machine"] = machine_to_json(s.machine);
  h["topology"] = topology_to_json(s.topology);
  h["nodes"] = s.topology.size();
  h["packet_elements"] = p.B;
  // B equal to the machine's B_m reads as "the machine's packet size": a replay on another machine
  // then uses that machine's B_m (docs/traces.md).
  h["packet_elements_explicit"] = p.B != s.machine.packet_elements;
  h["mode"] = s.data_mode ? "data" : "timing";
  const PathCounts& cp = st.critical_path;
  h["recorded"] = {{"time_ps", st.time.count()},
                   {"critical_path",
                    {{"startups", cp.startups},
                     {"msg_startups", cp.msg_startups},
                     {"element_transfers", cp.element_transfers},
                     {"flops", cp.flops},
                     {"copies", cp.copies},
                     {"delay_ps", cp.delays.count()}}},
                   {"messages", st.messages},
                   {"events", st.events}};
  return h;
}

EngineKind parse_engine(const std::string& e, const std::string& option) {
  if (e == "cycle") return EngineKind::cycle;
  if (e == "simgrid") return EngineKind::simgrid;
  if (e == "both") return EngineKind::both;
  throw InputError("", option, "unknown engine \"" + e + "\": cycle, simgrid or both");
}

RunLimits make_run_limits(std::int64_t max_events, bool per_packet, const std::string& option) {
  if (max_events < 0)
    throw InputError("", option, "must be a count of events (0 for none), not " + std::to_string(max_events));
  RunLimits l;
  l.max_events = max_events;
  l.max_resident_bytes = memory_budget();
  l.packet_trains = !per_packet;
  return l;
}

}  // namespace cubesim
