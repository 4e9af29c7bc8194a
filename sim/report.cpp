#include "sim/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

namespace cubesim {

namespace {
double sec(Time t) { return t.seconds(); }

std::string point_label(const RunPoint& p) {
  std::string s;
  for (const auto& [k, v] : p.point) s += (s.empty() ? "" : " ") + k + "=" + v.dump();
  return s.empty() ? "-" : s;
}

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}
}  // namespace

ojson machine_json(const Machine& m) {
  ojson j;
  j["name"] = m.name;
  j["description"] = m.description;
  j["tau_s"] = sec(m.tau);
  j["tau_msg_s"] = sec(m.tau_msg);
  j["t_c_s"] = sec(m.t_c);
  j["t_a_s"] = sec(m.t_a);
  j["t_copy_s"] = sec(m.t_copy);
  j["tau_ps"] = m.tau.count();
  j["tau_msg_ps"] = m.tau_msg.count();
  j["t_c_ps"] = m.t_c.count();
  j["t_a_ps"] = m.t_a.count();
  j["t_copy_ps"] = m.t_copy.count();
  j["packet_elements"] = m.packet_elements;
  j["element_bytes"] = m.element_bytes;
  j["ports"] = m.ports.name();
  j["switching"] = switching_name(m.switching);
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
  j["relation"] = relation_name(p.relation);
  if (p.relation == Relation::approx) j["tolerance"] = p.tolerance;
  j["source"] = p.source;
  if (p.b_opt) j["b_opt"] = *p.b_opt;
  if (p.min_startups) j["min_startups"] = *p.min_startups;
  return j;
}

ojson simulated_json(const RunStats& st, const ReportOptions& opt) {
  ojson sim;
  sim["time_s"] = sec(st.time);
  sim["time_ps"] = st.time.count();
  const PathCounts& cp = st.critical_path;
  sim["critical_path"] = {{"startups", cp.startups},       {"element_transfers", cp.element_transfers},
                          {"flops", cp.flops},             {"copies", cp.copies},
                          {"msg_startups", cp.msg_startups}, {"delay_s", sec(cp.delays)}};
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
  return sim;
}

ojson report_json(const Experiment& ex, const std::vector<RunOutcome>& runs, const ReportOptions& opt) {
  ojson r;
  r["schema"] = "cubesim.report/1";
  r["name"] = ex.name;
  r["algorithm"] = ex.algorithm;
  r["config"] = ex.file;
  r["engine"] = "cycle";
  r["machine"] = runs.empty() ? ojson::object() : machine_json(runs.front().point->setup.machine);
  ojson arr = ojson::array();
  for (const RunOutcome& o : runs) {
    const Setup& s = o.point->setup;
    ojson run;
    ojson pt = ojson::object();
    for (const auto& [k, v] : o.point->point) pt[k] = v;
    run["point"] = pt;
    run["topology"] = s.topology.describe();
    run["nodes"] = s.topology.size();
    run["params"] = {{"root", s.params.root}, {"M", s.params.M}, {"B", s.params.B}};
    run["mode"] = s.data_mode ? "data" : "timing";
    // A sweep over machine or machine_overrides: each run carries the machine it ran on.
    if (ojson mj = machine_json(s.machine); mj != r["machine"]) run["machine"] = std::move(mj);
    if (!o.error.empty()) {
      run["error"] = o.error;
      run["verified"] = false;
      arr.push_back(run);
      continue;
    }
    run["simulated"] = simulated_json(o.stats, opt);
    run["predicted"] = prediction_json(o.prediction);
    run["ratio"] = std::isfinite(o.ratio) ? ojson(o.ratio) : ojson(nullptr);
    run["relation_holds"] = o.relation_holds;
    run["terms_match"] = o.terms_match;
    run["verified"] = o.verified;
    if (!o.verify_ran) run["verification"] = "skipped";
    else run["verification"] = s.data_mode ? "data" : "sizes";
    if (!o.verify_message.empty()) run["verify_error"] = o.verify_message;
    arr.push_back(run);
  }
  r["runs"] = arr;
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
       "wall_s,verified,error\n";
  for (const RunOutcome& r : runs) {
    const Setup& s = r.point->setup;
    for (const auto& [k, v] : r.point->point) o << csv_escape(v.is_string() ? v.get<std::string>() : v.dump()) << ",";
    o << s.topology.size() << "," << s.params.M << "," << s.params.B << ",";
    o << num(r.stats.time.seconds()) << "," << r.stats.time.count() << "," << num(r.prediction.time.seconds()) << ","
      << r.prediction.time.count() << "," << (std::isfinite(r.ratio) ? num(r.ratio) : "") << ","
      << relation_name(r.prediction.relation) << "," << (r.relation_holds ? "true" : "false") << ","
      << r.stats.critical_path.startups << "," << r.stats.critical_path.element_transfers << ","
      << r.prediction.startups << "," << r.prediction.element_transfers << "," << (r.terms_match ? "true" : "false")
      << "," << r.stats.messages << "," << r.stats.packets << "," << r.stats.element_hops << "," << r.stats.events << ","
      << num(opt.reproducible ? 0.0 : r.stats.wall_s) << "," << (r.verified ? "true" : "false") << ","
      << csv_escape(r.error) << "\n";
  }
  return o.str();
}

std::string report_text(const Experiment& ex, const std::vector<RunOutcome>& runs) {
  std::ostringstream o;
  const Setup* first = runs.empty() ? nullptr : &runs.front().point->setup;
  o << ex.name << ": " << ex.algorithm;
  if (first) o << " on " << first->machine.name << " (ports " << first->machine.ports.name() << ")";
  o << "\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-28s %16s %16s %9s %-11s %10s %12s %s\n", "point", "simulated", "predicted",
                "ratio", "relation", "startups", "elements", "verified");
  o << line;
  for (const RunOutcome& r : runs) {
    if (!r.error.empty()) {
      o << point_label(*r.point) << "  ERROR: " << r.error << "\n";
      continue;
    }
    std::string rel = relation_name(r.prediction.relation) + (r.relation_holds ? "" : "!");
    std::string terms = std::to_string(r.stats.critical_path.startups) + (r.terms_match ? "" : "*");
    std::snprintf(line, sizeof line, "%-28s %16s %16s %9.6f %-11s %10s %12lld %s\n", point_label(*r.point).c_str(),
                  format_time(r.stats.time).c_str(), format_time(r.prediction.time).c_str(), r.ratio, rel.c_str(),
                  terms.c_str(), static_cast<long long>(r.stats.critical_path.element_transfers),
                  !r.verify_ran ? "skipped" : r.verified ? "yes" : ("NO: " + r.verify_message).c_str());
    o << line;
  }
  std::vector<std::string> sources;  // each distinct table row, in the order the runs use them
  for (const RunOutcome& r : runs)
    if (r.error.empty() && std::find(sources.begin(), sources.end(), r.prediction.source) == sources.end())
      sources.push_back(r.prediction.source);
  for (const std::string& src : sources) o << "prediction: " << src << "\n";
  o << "('!' after the relation: it does not hold; '*' after start-ups: the critical path differs from the table's terms)\n";
  return o.str();
}

void write_file_atomic(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const fs::path tmp = dir / ("." + target.filename().string() + ".tmp" + std::to_string(::getpid()));
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + tmp.string());
    f << content;
    f.flush();
    if (!f) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, target);
}

}  // namespace cubesim
