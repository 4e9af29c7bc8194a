#include "app/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "app/interrupt.hpp"
#include "app/params_json.hpp"
#include "machines/machine_keys.hpp"
#include "sim/number_format.hpp"

namespace cubesim {

namespace {
double sec(Time t) { return t.seconds(); }

std::string point_label(const RunPoint& p) {
  std::string s;
  for (const auto& [k, v] : p.point) s += (s.empty() ? "" : " ") + k + "=" + v.dump();
  return s.empty() ? "-" : s;
}

/// Where swept values compete (Experiment::compare): at each point of the other swept values, the
/// fastest run's algorithm (winner) and compared values (best), its lead over the runner-up
/// (margin = runner-up / winner - 1) and how far each run is behind it (behind = this run /
/// winner - 1). Runs that failed take no part.
struct Standing {
  std::string winner;
  std::vector<std::string> tied;  ///< the other runs' labels as fast as the winner (margin 0)
  ojson best;                     ///< the fastest run's values of the compared keys
  std::string label;              ///< the winner and its compared values other than the algorithm
  const RunOutcome* fastest = nullptr;
  double margin = NAN, behind = NAN;
};

double run_seconds(const RunOutcome& r) {
  if (r.cycle_ran) return r.error.empty() ? r.stats.time.seconds() : NAN;
  return r.simgrid && r.simgrid->error.empty() ? r.simgrid->stats.time_s : NAN;
}

bool compared(const Experiment& ex, const std::string& key) {
  return std::find(ex.compare.begin(), ex.compare.end(), key) != ex.compare.end();
}

/// "alltoall" of "alltoall.sbnt": the operation, whose algorithms do the same work. The 1-D and
/// 2-D matrix products (matmul1d.*, matmul2d.*) and the mesh's (matmul.*) are one operation, the
/// product of the same matrices (TR-530 §5 compares them, Figs 20-26).
std::string operation_of(const std::string& algorithm) {
  std::string op = algorithm.substr(0, algorithm.find('.'));
  if (op.size() > 2 && op.back() == 'd' && op[op.size() - 2] >= '1' && op[op.size() - 2] <= '3')
    op.resize(op.size() - 2);
  return op;
}

/// The operations of a sweep's algorithms, when it compares more than one (alltoall.* against
/// transpose.*: the same M means different data, so their times are no ranking); else empty.
std::set<std::string> mixed_operations(const Experiment& ex) {
  std::set<std::string> ops;
  if (!compared(ex, "algorithm")) return ops;
  for (const RunPoint& p : ex.runs)
    if (p.info != nullptr) ops.insert(operation_of(p.info->name));
  if (ops.size() < 2) ops.clear();
  return ops;
}

/// The group a run competes in: the values of the keys not compared, and its operation where the
/// sweep mixes operations (each is ranked on its own).
std::string group_of(const Experiment& ex, const RunPoint& p, bool by_operation) {
  std::string g;
  for (const auto& [k, v] : p.point)
    if (!compared(ex, k)) g += (g.empty() ? "" : " ") + k + "=" + v.dump();
  if (by_operation && p.info != nullptr) g += (g.empty() ? "" : " ") + ("(" + operation_of(p.info->name) + ".*)");
  return g.empty() ? "-" : g;
}
std::string group_of(const Experiment& ex, const RunPoint& p) { return group_of(ex, p, !mixed_operations(ex).empty()); }

std::vector<Standing> standings(const Experiment& ex, const std::vector<RunOutcome>& runs) {
  std::vector<Standing> out(runs.size());
  if (ex.compare.empty()) return out;
  std::map<std::string, std::vector<std::size_t>> groups;
  const bool by_operation = !mixed_operations(ex).empty();
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (std::isfinite(run_seconds(runs[i]))) groups[group_of(ex, *runs[i].point, by_operation)].push_back(i);
  for (const auto& [g, idx] : groups) {
    std::vector<std::size_t> order = idx;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return run_seconds(runs[a]) < run_seconds(runs[b]); });
    const RunOutcome& f = runs[order[0]];
    const double best = run_seconds(f);
    Standing st;
    st.fastest = &f;
    st.winner = f.point->info ? f.point->info->name : "";
    st.label = st.winner;
    st.best = ojson::object();
    for (const auto& [k, v] : f.point->point)
      if (compared(ex, k)) {
        st.best[k] = v;
        if (k != "algorithm") st.label += (st.label.empty() ? "" : " ") + k + "=" + v.dump();
      }
    st.margin = order.size() > 1 && best > 0 ? run_seconds(runs[order[1]]) / best - 1 : NAN;
    // Equal times are a tie, not a win: the winner is the first in sweep order, and the others
    // as fast are named (a tie counts for no algorithm in `wins`).
    for (std::size_t k = 1; k < order.size() && run_seconds(runs[order[k]]) == best; ++k) {
      const RunPoint& tp = *runs[order[k]].point;
      std::string l = tp.info ? tp.info->name : "";
      for (const auto& [key, v] : tp.point)
        if (compared(ex, key) && key != "algorithm") l += (l.empty() ? "" : " ") + key + "=" + v.dump();
      st.tied.push_back(l);
    }
    for (std::size_t i : idx) {
      out[i] = st;
      out[i].behind = best > 0 ? run_seconds(runs[i]) / best - 1 : 0.0;
    }
  }
  return out;
}

/// How many points each algorithm wins (the volumes of TR-530's selection maps).
std::map<std::string, std::int64_t> wins(const Experiment& ex, const std::vector<RunOutcome>& runs,
                                         const std::vector<Standing>& stand) {
  std::map<std::string, std::int64_t> w;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (stand[i].fastest != nullptr && seen.insert(group_of(ex, *runs[i].point)).second)
      ++w[stand[i].tied.empty() ? stand[i].winner : std::string("(ties)")];
  return w;
}

/// Only the algorithm competes: the reports keep their columns of before "compare" existed.
bool only_algorithm(const Experiment& ex) { return ex.compare.size() == 1 && ex.compare[0] == "algorithm"; }

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string num(double x) { return exact_decimal(x); }
}  // namespace

ojson machine_json(const Machine& m) {
  ojson j;
  j["name"] = m.name;
  j["description"] = m.description;
  for (const MachineKey& k : machine_keys()) k.report(k, m, j);
  ojson src = ojson::object();
  for (const auto& [k, v] : m.sources) src[k] = v;
  j["sources"] = src;
  return j;
}

ojson prediction_json(const Prediction& p) {
  ojson j;
  j["time_s"] = sec(p.time);
  j["time_ps"] = p.time.count();
  j["startups"] = p.startups;
  j["element_transfers"] = p.element_transfers;
  j["msg_startups"] = p.msg_startups;
  j["flops"] = p.flops;
  if (p.copies != 0) j["copies"] = p.copies;
  if (p.delays != Time{}) j["delay_s"] = sec(p.delays);
  j["relation"] = relation_name(p.relation);
  if (p.relation == Relation::approx) j["tolerance"] = p.tolerance;
  j["source"] = p.source;
  if (p.b_opt) j["b_opt"] = *p.b_opt;
  if (p.min_startups) j["min_startups"] = *p.min_startups;
  if (p.n1_opt) j["n1_opt"] = *p.n1_opt;
  return j;
}

ojson predictions_json(const Experiment& ex) {
  ojson arr = ojson::array();
  for (const RunPoint& p : ex.runs) {
    ojson pt = ojson::object();
    for (const auto& [k, v] : p.point) pt[k] = v;
    arr.push_back({{"point", pt},
                   {"topology", p.setup.topology.describe()},
                   {"predicted", prediction_json(p.info->predict(p.setup))}});
  }
  return {{"schema", "cubesim.prediction/1"}, {"name", ex.name}, {"algorithm", ex.algorithm}, {"runs", arr}};
}

ojson simulated_json(const RunStats& st, const ReportOptions& opt) {
  ojson sim;
  sim["time_s"] = sec(st.time);
  sim["time_ps"] = st.time.count();
  const PathCounts& cp = st.critical_path;
  sim["critical_path"] = {
      {"startups", cp.startups}, {"element_transfers", cp.element_transfers}, {"flops", cp.flops},
      {"copies", cp.copies},     {"msg_startups", cp.msg_startups},           {"delay_s", sec(cp.delays)}};
  // Node software overheads (o_send, o_recv, t_call): only on machines that have them.
  if (cp.overheads != Time{}) sim["critical_path"]["overhead_s"] = sec(cp.overheads);
  sim["messages"] = st.messages;
  sim["packets"] = st.packets;
  sim["packet_hops"] = st.packet_hops;
  sim["element_hops"] = st.element_hops;
  sim["events"] = st.events;
  sim["resumes"] = st.resumes;
  sim["wall_s"] = opt.reproducible ? 0.0 : st.wall_s;
  sim["events_per_s"] = opt.reproducible || st.wall_s <= 0 ? 0.0 : static_cast<double>(st.events) / st.wall_s;
  sim["links"] = {{"max_load_elements", st.max_link_load},
                  {"mean_load_elements", st.mean_link_load},
                  {"busiest", {{"node", st.busiest_link_node}, {"port", st.busiest_link_port}}}};
  sim["nodes_busy"] = {{"max_comm_s", sec(st.max_node_comm_busy)},
                       {"mean_comm_s", st.mean_node_comm_busy_s},
                       {"max_compute_s", sec(st.max_node_compute_busy)},
                       {"mean_compute_s", st.mean_node_compute_busy_s}};
  sim["unreceived_messages"] = st.unreceived_messages;
  sim["queued_transmissions"] = st.queued_transmissions;
  sim["slot_ties"] = st.slot_ties;
  sim["routed_messages"] = st.routed_messages;
  sim["largest_message_elements"] = st.largest_message;
  if (st.router_cycles > 0) {
    sim["critical_path"]["routing_s"] = sec(cp.routing);
    sim["router"] = {{"dimension_cycles", st.router_cycles},
                     {"collisions", st.router_collisions},
                     {"blocked", st.router_blocked},
                     {"detours", st.router_detours},
                     {"peak_buffer", st.router_peak_buffer}};
  }
  return sim;
}

ojson simgrid_json(const RunOutcome& o, const ReportOptions& opt) {
  ojson j;
  const SimGridOutcome& g = *o.simgrid;
  if (!g.error.empty()) {
    j["error"] = g.error;
    j["verified"] = false;
    return j;
  }
  const SimGridStats& st = g.stats;
  const bool wall = !opt.reproducible;
  j["time_s"] = st.time_s;
  const double pred = o.prediction.time.seconds();
  j["ratio_to_predicted"] = pred > 0 ? ojson(st.time_s / pred) : (st.time_s == 0 ? ojson(1.0) : ojson(nullptr));
  j["relation_holds"] = relation_holds(o.prediction, st.time_s);
  if (o.cycle_ran && o.error.empty()) {
    const double d = relative_difference(st.time_s, o.stats.time);
    j["relative_difference"] = std::isfinite(d) ? ojson(d) : ojson(nullptr);
    j["agrees"] = std::fabs(d) <= kSimGridAgreement;
    j["wall_ratio"] = wall && o.stats.wall_s > 0 ? st.wall_s / o.stats.wall_s : 0.0;
  }
  j["messages"] = st.messages;
  j["packets"] = st.packets;
  j["activities"] = st.activities;
  j["activities_per_s"] = wall && st.wall_s > 0 ? static_cast<double>(st.activities) / st.wall_s : 0.0;
  j["resumes"] = st.resumes;
  j["worker_actors"] = st.workers;
  j["inline_ops"] = st.inline_ops;
  j["unreceived_messages"] = st.unreceived_messages;
  j["platform_s"] = wall ? st.platform_s : 0.0;
  j["wall_s"] = wall ? st.wall_s : 0.0;
  j["process_wall_s"] = wall ? g.process_wall_s : 0.0;
  j["max_rss_bytes"] = wall ? static_cast<std::int64_t>(g.max_rss_kib) * 1024 : 0;
  j["verified"] = g.verified;
  if (!g.verify_ran)
    j["verification"] = "skipped";
  else
    j["verification"] = o.point->setup.data_mode ? "data" : "sizes";
  if (!g.verify_message.empty()) j["verify_error"] = g.verify_message;
  return j;
}

ojson report_json(const Experiment& ex, const std::vector<RunOutcome>& runs, const ReportOptions& opt) {
  ojson r;
  r["schema"] = "cubesim.report/1";
  r["name"] = ex.name;
  r["algorithm"] = ex.algorithm;
  r["config"] = ex.file;
  if (!opt.command_line.empty()) r["command_line"] = opt.command_line;
  r["engine"] = engine_name(opt.engine);
  r["machine"] = runs.empty() ? ojson::object() : machine_json(runs.front().point->setup.machine);
  ojson arr = ojson::array();
  const std::vector<Standing> stand = standings(ex, runs);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunOutcome& o = runs[i];
    const Setup& s = o.point->setup;
    ojson run;
    ojson pt = ojson::object();
    for (const auto& [k, v] : o.point->point) pt[k] = v;
    run["point"] = pt;
    if (ex.algorithm_swept && o.point->info) run["algorithm"] = o.point->info->name;
    if (stand[i].fastest != nullptr) {
      run["winner"] = stand[i].winner;
      if (!stand[i].tied.empty()) run["tied_with"] = stand[i].tied;
      if (!only_algorithm(ex)) run["best"] = stand[i].best;
      run["margin"] = std::isfinite(stand[i].margin) ? ojson(stand[i].margin) : ojson(nullptr);
      run["behind"] = stand[i].behind;
    }
    run["topology"] = s.topology.describe();
    run["nodes"] = s.topology.size();
    run["params"] = report_params(s.params);
    run["mode"] = s.data_mode ? "data" : "timing";
    // A sweep over machine or machine_overrides: each run carries the machine it ran on.
    if (ojson mj = machine_json(s.machine); mj != r["machine"]) run["machine"] = std::move(mj);
    if (!o.cycle_ran) {  // --engine simgrid: SimGrid's run is the run
      run["predicted"] = prediction_json(o.prediction);
      run["simgrid"] = simgrid_json(o, opt);
      if (o.simgrid->error.empty()) {
        run["ratio"] = run["simgrid"]["ratio_to_predicted"];
        run["relation_holds"] = run["simgrid"]["relation_holds"];
      } else {
        run["error"] = o.simgrid->error;
      }
      run["verified"] = o.simgrid->verified;
      arr.push_back(run);
      continue;
    }
    if (!o.error.empty()) {
      run["error"] = o.error;
      run["verified"] = false;
      if (o.simgrid) run["simgrid"] = simgrid_json(o, opt);
      arr.push_back(run);
      continue;
    }
    run["simulated"] = simulated_json(o.stats, opt);
    if (o.simgrid) run["simgrid"] = simgrid_json(o, opt);
    run["predicted"] = prediction_json(o.prediction);
    run["ratio"] = std::isfinite(o.ratio) ? ojson(o.ratio) : ojson(nullptr);
    run["relation_holds"] = o.relation_holds;
    run["terms_match"] = o.terms_match;
    run["verified"] = o.verified && (!o.simgrid || o.simgrid->verified || !o.simgrid->verify_ran);
    if (!o.verify_ran)
      run["verification"] = "skipped";
    else
      run["verification"] = s.data_mode ? "data" : "sizes";
    if (!o.verify_message.empty()) run["verify_error"] = o.verify_message;
    arr.push_back(run);
  }
  r["runs"] = arr;
  if (opt.interrupted_by != 0)
    r["partial"] = {{"signal", signal_name(opt.interrupted_by)},
                    {"points_finished", runs.size()},
                    {"points_total", ex.runs.size()},
                    {"resume", opt.resume_command}};
  if (!ex.compare.empty()) {
    r["compare"] = ex.compare;
    ojson w = ojson::object();
    for (const auto& [name, count] : wins(ex, runs, stand)) w[name] = count;
    r["wins"] = w;
  }
  return r;
}

std::string report_csv(const Experiment& ex, const std::vector<RunOutcome>& runs, const ReportOptions& opt) {
  std::ostringstream o;
  std::vector<std::string> keys;
  if (!ex.runs.empty())
    for (const auto& [k, v] : ex.runs.front().point) keys.push_back(k);
  for (const auto& k : keys) o << csv_escape(k) << ",";
  o << "nodes,M,B,simulated_s,simulated_ps,predicted_s,predicted_ps,ratio,relation,relation_holds,cp_startups,"
       "cp_element_transfers,pred_startups,pred_element_transfers,terms_match,messages,packets,element_hops,events,"
       "wall_s,verified,error";
  const bool sg = opt.engine != EngineKind::cycle;
  if (sg)
    o << ",simgrid_s,simgrid_relative_difference,simgrid_wall_s,wall_ratio,simgrid_max_rss_bytes,simgrid_verified,"
         "simgrid_error";
  if (!ex.compare.empty()) o << ",winner,margin,behind";
  if (!ex.compare.empty() && !only_algorithm(ex)) o << ",best";
  o << "\n";
  const std::vector<Standing> stand = standings(ex, runs);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunOutcome& r = runs[i];
    const Setup& s = r.point->setup;
    for (const auto& [k, v] : r.point->point) o << csv_escape(v.is_string() ? v.get<std::string>() : v.dump()) << ",";
    o << s.topology.size() << "," << s.params.M << "," << s.params.B << ",";
    if (r.cycle_ran) {
      o << num(r.stats.time.seconds()) << "," << r.stats.time.count() << ",";
    } else {
      o << ",,";
    }
    o << num(r.prediction.time.seconds()) << "," << r.prediction.time.count() << ",";
    if (r.cycle_ran) {
      o << (std::isfinite(r.ratio) ? num(r.ratio) : "") << "," << relation_name(r.prediction.relation) << ","
        << (r.relation_holds ? "true" : "false") << "," << r.stats.critical_path.startups << ","
        << r.stats.critical_path.element_transfers << ",";
    } else {
      o << "," << relation_name(r.prediction.relation) << ",,,,";
    }
    o << r.prediction.startups << "," << r.prediction.element_transfers << ",";
    if (r.cycle_ran) {
      o << (r.terms_match ? "true" : "false") << "," << r.stats.messages << "," << r.stats.packets << ","
        << r.stats.element_hops << "," << r.stats.events << "," << num(opt.reproducible ? 0.0 : r.stats.wall_s) << ","
        << (r.verified ? "true" : "false") << "," << csv_escape(r.error);
    } else {
      o << ",,,,,,,";
    }
    if (sg && r.simgrid) {
      const SimGridOutcome& g = *r.simgrid;
      const bool wall = !opt.reproducible;
      const double d = r.cycle_ran && r.error.empty() ? relative_difference(g.stats.time_s, r.stats.time) : NAN;
      o << "," << (g.error.empty() ? num(g.stats.time_s) : "") << "," << (std::isfinite(d) ? num(d) : "") << ","
        << num(wall ? g.stats.wall_s : 0.0) << ","
        << num(wall && r.cycle_ran && r.stats.wall_s > 0 ? g.stats.wall_s / r.stats.wall_s : 0.0) << ","
        << (wall ? static_cast<std::int64_t>(g.max_rss_kib) * 1024 : 0) << "," << (g.verified ? "true" : "false") << ","
        << csv_escape(g.error);
    }
    if (!ex.compare.empty())
      o << "," << stand[i].winner << "," << (std::isfinite(stand[i].margin) ? num(stand[i].margin) : "") << ","
        << (std::isfinite(stand[i].behind) ? num(stand[i].behind) : "");
    if (!ex.compare.empty() && !only_algorithm(ex)) o << "," << csv_escape(stand[i].label);
    o << "\n";
  }
  return o.str();
}

namespace {

/// "a, b and c" of the distinct values, in the order met.
std::string distinct(const std::vector<std::string>& values) {
  std::vector<std::string> d;
  for (const std::string& v : values)
    if (std::find(d.begin(), d.end(), v) == d.end()) d.push_back(v);
  std::string s;
  for (std::size_t i = 0; i < d.size(); ++i) s += (i == 0 ? "" : i + 1 == d.size() ? " and " : ", ") + d[i];
  return s;
}

/// What ran: the algorithms, machines and port models of every run (not only the first's), what
/// the command line changed, and the parameters every run shares.
std::string header_text(const Experiment& ex, const std::vector<RunOutcome>& runs, const ReportOptions& opt) {
  std::vector<std::string> algos, machines, ports;
  for (const RunOutcome& r : runs) {
    const Setup& s = r.point->setup;
    algos.push_back(r.point->info ? r.point->info->name : ex.algorithm);
    machines.push_back(s.machine.name);
    ports.push_back(s.machine.ports.name());
  }
  std::string h = ex.name + ": " + (runs.empty() ? ex.algorithm : distinct(algos));
  if (!runs.empty()) h += " on " + distinct(machines) + " (ports " + distinct(ports) + ")";
  if (opt.engine != EngineKind::cycle) h += ", engine " + engine_name(opt.engine);
  h += "\n";
  if (!opt.command_line.empty()) {
    std::string c;
    for (const std::string& s : opt.command_line) c += (c.empty() ? "" : " ") + s;
    h += "set on the command line: " + c + "\n";
  }
  // The parameters no run differs in (the swept ones are in each row).
  if (!runs.empty()) {
    const ojson first = report_params(runs.front().point->setup.params);
    std::string same;
    for (const auto& item : first.items()) {  // not a structured binding: clang 14 cannot capture one
      const std::string k = item.key();
      const ojson& v = item.value();
      const bool all = std::all_of(runs.begin(), runs.end(), [&](const RunOutcome& r) {
        const ojson p = report_params(r.point->setup.params);
        return p.contains(k) && p[k] == v;
      });
      if (all) same += (same.empty() ? "" : " ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
    }
    const std::string topo = runs.front().point->setup.topology.describe();
    const bool one_topology = std::all_of(
        runs.begin(), runs.end(), [&](const RunOutcome& r) { return r.point->setup.topology.describe() == topo; });
    if (!same.empty() || one_topology)
      h += "every run: " + same + (one_topology ? std::string(same.empty() ? "" : "; ") + topo : "") + "\n";
  }
  if (const std::set<std::string> ops = mixed_operations(ex); !ops.empty()) {
    std::vector<std::string> v(ops.begin(), ops.end());
    for (std::string& x : v) x += ".*";
    h += "note: " + distinct(v) +
         " do different work (the same parameters are different amounts of data): each operation is ranked on its "
         "own\n";
  }
  return h;
}

}  // namespace

std::string report_text(const Experiment& ex, const std::vector<RunOutcome>& runs, const ReportOptions& opt) {
  std::ostringstream o;
  o << header_text(ex, runs, opt);
  const bool cycle = opt.engine != EngineKind::simgrid, sg = opt.engine != EngineKind::cycle;
  char line[640];
  std::string head;
  std::snprintf(line, sizeof line, "%-28s %16s", "point", cycle ? "simulated" : "simgrid");
  head += line;
  if (cycle && sg) {
    std::snprintf(line, sizeof line, " %16s %10s", "simgrid", "sg/cycle-1");
    head += line;
  }
  std::snprintf(line, sizeof line, " %16s %9s %-11s %10s %12s %s\n", "predicted", "ratio", "relation", "startups",
                "elements", "verified");
  o << head << line;
  auto verdict = [](bool ran, bool ok, const std::string& msg) {
    return !ran ? std::string("skipped") : ok ? std::string("yes") : "NO: " + msg;
  };
  bool ties = false;
  for (const RunOutcome& r : runs) {
    const std::string& err = r.cycle_ran ? r.error : r.simgrid->error;
    if (!err.empty()) {
      o << point_label(*r.point) << "  ERROR: " << err << "\n";
      continue;
    }
    std::string row;
    if (cycle) {
      std::snprintf(line, sizeof line, "%-28s %16s", point_label(*r.point).c_str(), format_time(r.stats.time).c_str());
      row += line;
      if (sg) {
        const SimGridOutcome& g = *r.simgrid;
        if (g.error.empty()) {
          const double d = relative_difference(g.stats.time_s, r.stats.time);
          std::snprintf(line, sizeof line, " %16s %9.1e%c", format_time(time_from_seconds(g.stats.time_s)).c_str(), d,
                        r.stats.slot_ties > 0 ? 't' : ' ');
          ties = ties || r.stats.slot_ties > 0;
        } else {
          std::snprintf(line, sizeof line, " %16s %10s", "ERROR", "-");
        }
        row += line;
      }
      std::string rel = relation_name(r.prediction.relation) + (r.relation_holds ? "" : "!");
      std::string terms = std::to_string(r.stats.critical_path.startups) + (r.terms_match ? "" : "*");
      std::string ver = verdict(r.verify_ran, r.verified, r.verify_message);
      if (sg && !r.simgrid->error.empty())
        ver += "; simgrid ERROR: " + r.simgrid->error;
      else if (sg && r.simgrid->verify_ran && !r.simgrid->verified)
        ver += "; simgrid NO: " + r.simgrid->verify_message;
      std::snprintf(line, sizeof line, " %16s %9.6f %-11s %10s %12lld %s\n", format_time(r.prediction.time).c_str(),
                    r.ratio, rel.c_str(), terms.c_str(),
                    static_cast<long long>(r.stats.critical_path.element_transfers), ver.c_str());
      row += line;
    } else {
      const SimGridOutcome& g = *r.simgrid;
      const double pred = r.prediction.time.seconds();
      std::string rel =
          relation_name(r.prediction.relation) + (relation_holds(r.prediction, g.stats.time_s) ? "" : "!");
      std::snprintf(line, sizeof line, "%-28s %16s %16s %9.6f %-11s %10s %12s %s\n", point_label(*r.point).c_str(),
                    format_time(time_from_seconds(g.stats.time_s)).c_str(), format_time(r.prediction.time).c_str(),
                    pred > 0 ? g.stats.time_s / pred : 1.0, rel.c_str(), "-", "-",
                    verdict(g.verify_ran, g.verified, g.verify_message).c_str());
      row += line;
    }
    o << row;
  }
  if (!ex.compare.empty()) {  // the fastest at each point of the other swept values
    const std::vector<Standing> stand = standings(ex, runs);
    std::set<std::string> seen;
    std::size_t points = 0;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const std::string g = group_of(ex, *runs[i].point);
      if (stand[i].fastest == nullptr || !seen.insert(g).second) continue;
      if (++points > 64) continue;   // a map's worth of lines: the counts below sum them up
      if (!stand[i].tied.empty()) {  // equal times: no winner
        std::vector<std::string> all{stand[i].label};
        all.insert(all.end(), stand[i].tied.begin(), stand[i].tied.end());
        o << "tie at " << g << ": " << distinct(all) << " (equal times)";
      } else {
        o << "fastest at " << g << ": " << stand[i].label;
      }
      if (stand[i].tied.empty() && std::isfinite(stand[i].margin)) {
        char m[64];
        std::snprintf(m, sizeof m, " (the next is %.2f %% slower)", 100 * stand[i].margin);
        o << m;
      }
      if (compared(ex, "params.N1") && stand[i].fastest->prediction.n1_opt) {
        char m[96];
        std::snprintf(m, sizeof m, "; the table's optimum N1 = %.3g", *stand[i].fastest->prediction.n1_opt);
        o << m;
      }
      o << "\n";
    }
    if (points > 64) o << "(" << points - 64 << " more points: see the JSON or CSV report)\n";
    if (points > 1) {
      o << "wins over " << points << " points:";
      for (const auto& [name, count] : wins(ex, runs, stand)) {
        char m[160];
        std::snprintf(m, sizeof m, " %s %lld (%.1f %%)", name.c_str(), static_cast<long long>(count),
                      100.0 * static_cast<double>(count) / static_cast<double>(points));
        o << m;
      }
      o << "\n";
    }
  }
  std::vector<std::string> sources;  // each distinct table row, in the order the runs use them
  for (const RunOutcome& r : runs)
    if (std::find(sources.begin(), sources.end(), r.prediction.source) == sources.end())
      sources.push_back(r.prediction.source);
  for (const std::string& src : sources) o << "prediction: " << src << "\n";
  if (opt.interrupted_by != 0) {
    o << "PARTIAL: stopped by " << signal_name(opt.interrupted_by) << " after " << runs.size() << " of "
      << ex.runs.size() << " points";
    if (!opt.resume_command.empty()) o << "; " << opt.resume_command << " runs the rest";
    o << "\n";
  }
  if (cycle)
    o << "('!' after the relation: it does not hold; '*' after start-ups: the critical path differs from the table's "
         "terms)\n";
  else
    o << "('!' after the relation: it does not hold within 1e-9 relative; SimGrid reports no critical path)\n";
  if (sg)
    o << "(SimGrid's time is compared, not judged: routed sends and shared links differ by design, docs/simgrid.md)\n";
  if (ties)
    o << "('t' after sg/cycle-1: packets asked for one receiver's slot at the same picosecond (simulated.slot_ties); "
         "each engine serves such a tie in its own order, docs/simgrid.md \"Ties\")\n";
  return o.str();
}

}  // namespace cubesim
