#include "app/regress.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include "app/config.hpp"
#include "app/io.hpp"
#include "app/report.hpp"
#include "app/runner.hpp"
#include "sim/input_error.hpp"
#include "sim/number_format.hpp"

namespace cubesim {

namespace fs = std::filesystem;

bool RegressSummary::pass() const {
  return std::all_of(experiments.begin(), experiments.end(), [](const ExperimentVerdict& e) { return e.pass; });
}

namespace {

enum class Expect { as_predicted, exact, upper_bound, approx };

struct SuiteEntry {
  std::string id;    ///< path relative to the suite folder
  std::string path;  ///< path to open
  Expect expect = Expect::as_predicted;
  double tolerance = 0;
};

struct Suite {
  std::string file;
  std::string golden_path;
  std::vector<SuiteEntry> entries;
};

std::string expect_text(const SuiteEntry& e) {
  switch (e.expect) {
    case Expect::as_predicted:
      return "as_predicted";
    case Expect::exact:
      return "exact";
    case Expect::upper_bound:
      return "upper_bound";
    case Expect::approx: {
      char buf[48];
      std::snprintf(buf, sizeof buf, "approx %g", e.tolerance);
      return buf;
    }
  }
  return "?";
}

SuiteEntry parse_entry(const ojson& j, const std::string& file, const std::string& ptr, const fs::path& base) {
  const auto fail = [&](const std::string& p, const std::string& m) { throw InputError(file, p, m); };
  if (!j.is_object()) fail(ptr, "an experiment is an object {\"config\": \"path\", \"expect\": ...}");
  for (const auto& [k, v] : j.items())
    if (k != "config" && k != "expect" && k != "description")
      fail(ptr + "/" + k, "unknown key (known: config, expect, description)");
  if (!j.contains("config") || !j["config"].is_string())
    fail(ptr + "/config", "config must be a path (relative to the suite)");
  SuiteEntry e;
  e.id = j["config"].get<std::string>();
  e.path = (base / e.id).lexically_normal().string();
  std::error_code ec;  // the overloads that report, not throw: a name too long is "no such config"
  if (!fs::exists(e.path, ec))
    fail(ptr + "/config", "no such config: " + e.path + (ec ? " (" + ec.message() + ")" : ""));
  if (j.contains("expect")) {
    const ojson& x = j["expect"];
    if (x.is_string()) {
      const std::string s = x.get<std::string>();
      if (s == "as_predicted")
        e.expect = Expect::as_predicted;
      else if (s == "exact")
        e.expect = Expect::exact;
      else if (s == "upper_bound")
        e.expect = Expect::upper_bound;
      else
        fail(ptr + "/expect", "expect must be \"as_predicted\", \"exact\", \"upper_bound\" or {\"approx\": tolerance}");
    } else if (x.is_object() && x.size() == 1 && x.contains("approx") && x["approx"].is_number() &&
               x["approx"].get<double>() >= 0) {
      e.expect = Expect::approx;
      e.tolerance = x["approx"].get<double>();
    } else {
      fail(ptr + "/expect",
           "expect must be \"as_predicted\", \"exact\", \"upper_bound\" or {\"approx\": tolerance >= 0}");
    }
  }
  return e;
}

Suite load_suite(const std::string& path) {
  Suite s;
  fs::path p(path);
  std::error_code ec;
  if (fs::is_directory(p, ec)) {
    if (fs::exists(p / "suite.json", ec)) return load_suite((p / "suite.json").string());
    s.file = path;
    s.golden_path = (p / "golden.json").string();
    std::vector<std::string> files;
    for (const auto& de : fs::directory_iterator(p, ec))
      if (de.is_regular_file(ec) && de.path().extension() == ".json" && de.path().filename() != "golden.json")
        files.push_back(de.path().filename().string());
    std::sort(files.begin(), files.end());
    if (files.empty()) throw InputError(path, "", "no configs (*.json) in this folder");
    for (const std::string& f : files) s.entries.push_back(SuiteEntry{f, (p / f).string(), Expect::as_predicted, 0});
    return s;
  }
  const ojson j = read_json_file(path);
  s.file = path;
  const auto fail = [&](const std::string& ptr, const std::string& m) { throw InputError(path, ptr, m); };
  if (!j.is_object()) fail("", "a suite is a JSON object");
  for (const auto& [k, v] : j.items())
    if (k != "schema" && k != "name" && k != "description" && k != "golden" && k != "experiments")
      fail("/" + k, "unknown key (known: schema, name, description, golden, experiments)");
  if (!j.contains("schema") || j["schema"] != "cubesim.suite/1") fail("/schema", "schema must be \"cubesim.suite/1\"");
  const fs::path base = p.parent_path();
  std::string golden = "golden.json";
  if (j.contains("golden")) {
    if (!j["golden"].is_string() || j["golden"].get<std::string>().empty())
      fail("/golden", "golden must be a file name");
    golden = j["golden"].get<std::string>();
  }
  s.golden_path = (base / golden).string();
  if (!j.contains("experiments") || !j["experiments"].is_array() || j["experiments"].empty())
    fail("/experiments", "experiments must be a non-empty list");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < j["experiments"].size(); ++i) {
    SuiteEntry e = parse_entry(j["experiments"][i], path, "/experiments/" + std::to_string(i), base);
    if (!seen.insert(e.id).second) fail("/experiments/" + std::to_string(i) + "/config", "listed twice: " + e.id);
    s.entries.push_back(std::move(e));
  }
  return s;
}

std::string label(const RunPoint& p) {
  std::string s;
  for (const auto& [k, v] : p.point) s += (s.empty() ? "" : " ") + k + "=" + v.dump();
  return s.empty() ? "-" : s;
}

ojson point_json(const RunPoint& p) {
  ojson pt = ojson::object();
  for (const auto& [k, v] : p.point) pt[k] = v;
  return pt;
}

ojson golden_run(const RunPoint& p, const RunOutcome& o) {
  return {{"point", point_json(p)},
          {"simulated_ps", o.stats.time.count()},
          {"predicted_ps", o.prediction.time.count()},
          {"startups", o.stats.critical_path.startups},
          {"element_transfers", o.stats.critical_path.element_transfers}};
}

/// "+2.50 %" : how far `value` is from `reference`.
std::string percent_off(double value, double reference) {
  char buf[48];
  if (reference == 0) return value == 0 ? "0 %" : "infinitely far";
  std::snprintf(buf, sizeof buf, "%+.4g %%", 100.0 * (value / reference - 1.0));
  return buf;
}

/// One golden value that differs, readably: times as times, with the percentage.
std::string golden_difference(const std::string& key, const ojson* old, const ojson& now) {
  if (old == nullptr) return "golden " + key + " missing (now " + now.dump() + ")";
  if (key.ends_with("_ps") && old->is_number_integer() && now.is_number_integer()) {
    const std::string what = key.substr(0, key.size() - 3);  // simulated, predicted
    return what + " " + format_time(Time::ps(now.get<std::int64_t>())) + ", golden " +
           format_time(Time::ps(old->get<std::int64_t>())) + " (" +
           percent_off(static_cast<double>(now.get<std::int64_t>()), static_cast<double>(old->get<std::int64_t>())) +
           ", " + std::to_string(now.get<std::int64_t>() - old->get<std::int64_t>()) + " ps)";
  }
  if (old->is_number() && now.is_number())
    return key + " " + now.dump() + ", golden " + old->dump() + " (" +
           percent_off(now.get<double>(), old->get<double>()) + ")";
  return key + " " + now.dump() + ", golden " + old->dump();
}

bool meets(const SuiteEntry& e, const RunOutcome& o) {
  const Time sim = o.stats.time, pred = o.prediction.time;
  switch (e.expect) {
    case Expect::as_predicted:
      return o.relation_holds;
    case Expect::exact:
      return sim == pred;
    case Expect::upper_bound:
      return sim <= pred;
    case Expect::approx:
      return std::isfinite(o.ratio) && std::fabs(o.ratio - 1.0) <= e.tolerance;
  }
  return false;
}

}  // namespace

RegressSummary run_regress(const std::string& suite_path, const Registry& registry, const RegressOptions& opt) {
  const auto wall0 = std::chrono::steady_clock::now();
  const Suite suite = load_suite(suite_path);
  ojson golden = ojson::object();
  std::error_code ec;
  if (fs::exists(suite.golden_path, ec)) {
    const ojson g = read_json_file(suite.golden_path);
    if (!g.is_object() || g.value("schema", ojson()) != "cubesim.golden/1" || !g.contains("experiments") ||
        !g["experiments"].is_object())
      throw InputError(suite.golden_path, "",
                       "a golden file is {\"schema\": \"cubesim.golden/1\", \"experiments\": {...}}");
    golden = g["experiments"];
  }
  // Load every config first: a bad one is bad input (exit 2) before anything runs.
  std::vector<Experiment> exps;
  for (const SuiteEntry& e : suite.entries) {
    exps.push_back(load_experiment(e.path, registry));
    check_memory(exps.back(), opt.limits);
  }

  RegressSummary sum;
  sum.suite = suite_path;
  sum.golden_path = suite.golden_path;
  ojson new_golden = ojson::object();
  for (std::size_t i = 0; i < exps.size(); ++i) {
    const SuiteEntry& e = suite.entries[i];
    const Experiment& ex = exps[i];
    ExperimentVerdict v;
    v.id = e.id;
    v.expect = expect_text(e);
    v.runs = ex.runs.size();
    v.min_ratio = INFINITY;
    v.max_ratio = -INFINITY;
    const ojson* gold = golden.contains(e.id) ? &golden[e.id] : nullptr;
    if (gold != nullptr && (!gold->is_array() || gold->size() != ex.runs.size()) && !opt.update)
      v.reason = "golden: " + std::to_string(gold->is_array() ? gold->size() : 0) + " runs recorded, the config has " +
                 std::to_string(ex.runs.size()) + " (run with --update)";
    ojson runs = ojson::array();
    for (std::size_t k = 0; k < ex.runs.size(); ++k) {
      const RunPoint& p = ex.runs[k];
      const RunOutcome o = run_point(p, *p.info, ex.verify, nullptr, opt.limits);
      const std::string where = "run " + std::to_string(k + 1) + " (" + label(p) + ")";
      auto fail = [&](const std::string& why) {
        v.failures.push_back(where + ": " + why);
        if (v.reason.empty()) v.reason = v.failures.back();
      };
      if (!o.error.empty()) {
        fail(o.error);
        continue;
      }
      if (std::isfinite(o.ratio)) {
        v.min_ratio = std::min(v.min_ratio, o.ratio);
        v.max_ratio = std::max(v.max_ratio, o.ratio);
      }
      if (o.verify_ran && !o.verified) fail("data check failed: " + o.verify_message);
      if (!meets(e, o))
        fail("simulated " + format_time(o.stats.time) + ", predicted " + format_time(o.prediction.time) + " (" +
             percent_off(o.stats.time.count(), o.prediction.time.count()) + " from the prediction; " +
             relation_name(o.prediction.relation) + ", " + o.prediction.source + "): expect " + v.expect +
             " does not hold");
      const ojson g = golden_run(p, o);
      runs.push_back(g);
      if (gold != nullptr && gold->is_array() && k < gold->size()) {
        const ojson& old = (*gold)[k];
        for (const char* key : {"point", "simulated_ps", "predicted_ps", "startups", "element_transfers"}) {
          if (old.contains(key) && old[key] == g[key]) continue;
          const std::string change =
              where + ": " + key + " " + (old.contains(key) ? old[key].dump() : "missing") + " -> " + g[key].dump();
          if (opt.update)
            v.golden_changes.push_back(change);
          else
            fail(golden_difference(key, old.contains(key) ? &old[key] : nullptr, g[key]));
        }
      } else if (opt.update) {
        v.golden_changes.push_back(where + ": added");
      }
    }
    if (opt.update && gold != nullptr && gold->is_array())
      for (std::size_t k = ex.runs.size(); k < gold->size(); ++k)
        v.golden_changes.push_back("run " + std::to_string(k + 1) + ": removed (the config has " +
                                   std::to_string(ex.runs.size()) + " runs)");
    if (v.min_ratio > v.max_ratio) v.min_ratio = v.max_ratio = 0;
    v.pass = v.reason.empty();
    new_golden[e.id] = runs;
    sum.experiments.push_back(std::move(v));
  }
  if (opt.update) {
    // Merge, never lose: the suite's experiments replace their own entries (in place, new ones
    // last); the entries of experiments this suite does not run (another suite sharing the golden
    // file) are kept as they were, and the summary names them.
    ojson merged = golden;
    for (const auto& [id, runs] : new_golden.items()) merged[id] = runs;
    for (const auto& [id, runs] : golden.items())
      if (!new_golden.contains(id)) sum.golden_kept.push_back(id);
    const ojson g = {{"schema", "cubesim.golden/1"},
                     {"note", "written by cubesim regress --update: simulated and predicted times of every run"},
                     {"experiments", merged}};
    write_file_atomic(suite.golden_path, g.dump(1) + "\n");
    sum.golden_written = true;
  }
  sum.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return sum;
}

ojson regress_json(const RegressSummary& s, const RegressOptions& opt) {
  ojson arr = ojson::array();
  std::size_t passed = 0;
  for (const ExperimentVerdict& v : s.experiments) {
    passed += v.pass ? 1 : 0;
    ojson e = {{"experiment", v.id},       {"verdict", v.pass ? "pass" : "fail"},
               {"runs", v.runs},           {"expect", v.expect},
               {"min_ratio", v.min_ratio}, {"max_ratio", v.max_ratio},
               {"reason", v.reason},       {"failures", v.failures}};
    if (opt.update) e["golden_changes"] = v.golden_changes;
    arr.push_back(e);
  }
  ojson j = {{"schema", "cubesim.regress/1"},
             {"suite", s.suite},
             {"golden", s.golden_path},
             {"pass", s.pass()},
             {"passed", passed},
             {"failed", s.experiments.size() - passed},
             {"experiments", arr}};
  j["golden_written"] = s.golden_written;
  j["golden_kept"] = s.golden_kept;
  j["wall_s"] = opt.reproducible ? 0.0 : s.wall_s;
  return j;
}

std::string regress_csv(const RegressSummary& s) {
  std::ostringstream o;
  o << "experiment,verdict,runs,expect,min_ratio,max_ratio,reason\n";
  for (const ExperimentVerdict& v : s.experiments) {
    std::string reason = v.reason;
    std::string q = "\"";
    for (char c : reason) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    q += "\"";
    o << v.id << "," << (v.pass ? "pass" : "fail") << "," << v.runs << "," << v.expect << ","
      << exact_decimal(v.min_ratio) << "," << exact_decimal(v.max_ratio) << "," << q << "\n";
  }
  return o.str();
}

std::string regress_text(const RegressSummary& s) {
  std::ostringstream o;
  std::size_t passed = 0;
  char line[512];
  for (const ExperimentVerdict& v : s.experiments) {
    passed += v.pass ? 1 : 0;
    std::snprintf(line, sizeof line, "%s  %-40s %4zu runs  %-13s ratio %.6f..%.6f", v.pass ? "PASS" : "FAIL",
                  v.id.c_str(), v.runs, v.expect.c_str(), v.min_ratio, v.max_ratio);
    o << line;
    o << "\n";
    // Every failing run (the first ten), one a line, and what to do if the change is intended.
    for (std::size_t i = 0; i < v.failures.size() && i < 10; ++i) o << "      " << v.failures[i] << "\n";
    if (v.failures.size() > 10) o << "      ... and " << v.failures.size() - 10 << " more (regress --json lists all)\n";
    if (std::any_of(v.failures.begin(), v.failures.end(),
                    [](const std::string& f) { return f.find(", golden ") != std::string::npos; }))
      o << "      (if the change is intended: cubesim regress " << s.suite
        << " --update rewrites the golden values and lists what changed)\n";
    for (const std::string& c : v.golden_changes) o << "      golden " << c << "\n";
  }
  o << passed << " of " << s.experiments.size() << " experiments passed";
  if (s.golden_written) {
    o << "; golden values written to " << s.golden_path;
    if (!s.golden_kept.empty()) {
      o << " (kept as they were: " << s.golden_kept.size() << " experiment" << (s.golden_kept.size() == 1 ? "" : "s")
        << " this suite does not run: ";
      for (std::size_t i = 0; i < s.golden_kept.size() && i < 3; ++i) o << (i == 0 ? "" : ", ") << s.golden_kept[i];
      if (s.golden_kept.size() > 3) o << " and " << s.golden_kept.size() - 3 << " more";
      o << ")";
    }
  }
  o << "\n";
  return o.str();
}

}  // namespace cubesim
