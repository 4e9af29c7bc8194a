#include "app/resume.hpp"

#include <cstdint>
#include <cstdio>

#include "app/io.hpp"
#include "app/params_json.hpp"
#include "app/stats_json.hpp"
#include "machines/machine_loader.hpp"
#include "machines/topology_json.hpp"
#include "sim/input_error.hpp"

namespace cubesim {

namespace {

// The statistics' serializers are nlohmann::json's (app/stats_json.hpp); the file is ordered.
template <class T>
ojson to_ojson(const T& v) {
  return ojson::parse(nlohmann::json(v).dump());
}
template <class T>
T from_ojson(const ojson& j) {
  return nlohmann::json::parse(j.dump()).get<T>();
}

ojson identity(const RunPoint& p, bool verify, EngineKind engine) {
  const Setup& s = p.setup;
  ojson id;
  id["algorithm"] = p.info != nullptr ? p.info->name : "";
  ojson pt = ojson::object();
  for (const auto& [k, v] : p.point) pt[k] = v;
  id["point"] = pt;
  id["machine"] = machine_to_json(s.machine);
  id["topology"] = topology_to_json(s.topology);
  id["params"] = params_to_json(s.params);
  id["mode"] = s.data_mode ? "data" : "timing";
  id["verify"] = verify;
  id["engine"] = engine_name(engine);
  return id;
}

ojson outcome_json(const RunOutcome& o) {
  ojson j;
  j["cycle_ran"] = o.cycle_ran;
  j["error"] = o.error;
  j["stats"] = to_ojson(o.stats);
  j["verify_ran"] = o.verify_ran;
  j["verified"] = o.verified;
  j["verify_message"] = o.verify_message;
  if (o.simgrid) {
    const SimGridOutcome& g = *o.simgrid;
    j["simgrid"] = {{"stats", to_ojson(g.stats)},         {"verified", g.verified}, {"verify_ran", g.verify_ran},
                    {"verify_message", g.verify_message}, {"error", g.error},       {"max_rss_kib", g.max_rss_kib},
                    {"process_wall_s", g.process_wall_s}};
  }
  return j;
}

}  // namespace

std::string point_identity(const RunPoint& p, bool verify, EngineKind engine) {
  return identity(p, verify, engine).dump();
}

std::string sweep_hash(const Experiment& ex, EngineKind engine) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a, 64 bits
  auto add = [&h](const std::string& s) {
    for (const char c : s) {
      h ^= static_cast<unsigned char>(c);
      h *= 1099511628211ull;
    }
  };
  add(std::to_string(ex.runs.size()));
  for (const RunPoint& p : ex.runs) {
    add("\n");
    add(point_identity(p, ex.verify, engine));
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

namespace {

void put_stamp(ojson& r, const SweepStamp& stamp) {
  if (!stamp.binary.empty()) r["binary"] = stamp.binary;
  if (!stamp.sweep.empty()) r["sweep"] = stamp.sweep;
  if (!stamp.shard.empty()) r["shard"] = stamp.shard;
}

}  // namespace

std::string resume_text(const Experiment& ex, const std::vector<RunOutcome>& finished, EngineKind engine,
                        const SweepStamp& stamp) {
  ojson r;
  r["schema"] = "cubesim.resume/1";
  r["config"] = ex.file;
  put_stamp(r, stamp);
  r["points_total"] = ex.runs.size();
  ojson arr = ojson::array();
  for (const RunOutcome& o : finished)
    arr.push_back({{"identity", identity(*o.point, ex.verify, engine)}, {"outcome", outcome_json(o)}});
  r["finished"] = arr;
  return r.dump(1) + "\n";
}

ResumeTable read_resume(const std::string& path) {
  const ojson r = read_json_file(path);
  if (!r.is_object() || r.value("schema", ojson()) != "cubesim.resume/1")
    throw InputError(path, "/schema", "not a resume file (\"schema\": \"cubesim.resume/1\")");
  if (!r.contains("finished") || !r["finished"].is_array()) throw InputError(path, "/finished", "must be an array");
  ResumeTable t;
  for (std::size_t i = 0; i < r["finished"].size(); ++i) {
    const ojson& e = r["finished"][i];
    const std::string where = "/finished/" + std::to_string(i);
    if (!e.is_object() || !e.contains("identity") || !e.contains("outcome") || !e["outcome"].is_object())
      throw InputError(path, where, "must be an object with \"identity\" and \"outcome\"");
    t[e["identity"].dump()] = e["outcome"];
  }
  return t;
}

SweepStamp read_resume_stamp(const std::string& path) {
  const ojson r = read_json_file(path);
  if (!r.is_object() || r.value("schema", ojson()) != "cubesim.resume/1")
    throw InputError(path, "/schema", "not a resume file (\"schema\": \"cubesim.resume/1\")");
  SweepStamp s;
  auto text = [&r](const char* key) {
    const auto it = r.find(key);
    return it != r.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  s.binary = text("binary");
  s.sweep = text("sweep");
  s.shard = text("shard");
  return s;
}

std::string journal_header(const Experiment& ex, const SweepStamp& stamp) {
  ojson h;
  h["schema"] = "cubesim.journal/1";
  h["config"] = ex.file;
  h["points_total"] = ex.runs.size();
  put_stamp(h, stamp);
  return h.dump() + "\n";
}

std::string journal_line(const Experiment& ex, const RunOutcome& finished, EngineKind engine) {
  const ojson line = {{"identity", identity(*finished.point, ex.verify, engine)}, {"outcome", outcome_json(finished)}};
  return line.dump() + "\n";
}

Journal read_journal(const std::string& path) {
  Journal j;
  const std::string text = read_text_file(path);
  std::size_t at = 0;
  for (std::size_t line = 1;; ++line) {
    const std::size_t end = text.find('\n', at);
    if (end == std::string::npos) break;  // a torn last line (or none)
    ojson v;
    try {
      v = ojson::parse(text.begin() + static_cast<std::ptrdiff_t>(at), text.begin() + static_cast<std::ptrdiff_t>(end));
    } catch (const nlohmann::json::exception&) {
      if (line == 1) throw InputError(path, "line 1", "not a cubesim journal (its first line is not JSON)");
      break;  // a line the disk lost part of: it and what follows run again
    }
    if (line == 1) {
      if (!v.is_object() || v.value("schema", ojson()) != "cubesim.journal/1")
        throw InputError(path, "line 1", "not a cubesim journal (\"schema\": \"cubesim.journal/1\")");
      j.valid = true;
      if (v.contains("binary") && v["binary"].is_string()) j.binary = v["binary"].get<std::string>();
    } else {
      if (!v.is_object() || !v.contains("identity") || !v.contains("outcome") || !v["outcome"].is_object()) break;
      j.table[v["identity"].dump()] = v["outcome"];
    }
    at = end + 1;
  }
  j.keep = at;
  j.dropped = text.size() - at;
  return j;
}

std::optional<RunOutcome> resumed_outcome(const ResumeTable& t, const RunPoint& p, bool verify, EngineKind engine,
                                          const std::string& path) {
  const auto it = t.find(point_identity(p, verify, engine));
  if (it == t.end()) return std::nullopt;
  const ojson& j = it->second;
  RunOutcome o;
  o.point = &p;
  o.prediction = p.info->predict(p.setup);
  try {
    o.cycle_ran = j.at("cycle_ran").get<bool>();
    o.error = j.at("error").get<std::string>();
    o.stats = from_ojson<RunStats>(j.at("stats"));
    o.verify_ran = j.at("verify_ran").get<bool>();
    o.verified = j.at("verified").get<bool>();
    o.verify_message = j.at("verify_message").get<std::string>();
    if (j.contains("simgrid")) {
      const ojson& g = j["simgrid"];
      SimGridOutcome sg;
      sg.stats = from_ojson<SimGridStats>(g.at("stats"));
      sg.verified = g.at("verified").get<bool>();
      sg.verify_ran = g.at("verify_ran").get<bool>();
      sg.verify_message = g.at("verify_message").get<std::string>();
      sg.error = g.at("error").get<std::string>();
      sg.max_rss_kib = g.at("max_rss_kib").get<long>();
      sg.process_wall_s = g.at("process_wall_s").get<double>();
      o.simgrid = std::move(sg);
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path, "",
                     "a finished point's outcome is malformed (" + std::string(e.what()) +
                         "): delete the file to run every point again");
  }
  // A point that failed (a spent budget, a deadlock) runs again: the rerun may give it more.
  if (!o.error.empty() || (o.simgrid && !o.simgrid->error.empty())) return std::nullopt;
  if (o.cycle_ran) judge(o);
  return o;
}

}  // namespace cubesim
