// cubesim — the command line (DESIGN.md "Command line").
// Exit codes: 0 success; 1 a verification failed or a prediction's relation did not hold (or a
// simulated process failed); 2 bad input, with one line naming the file, where, and what.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "machines/machine_loader.hpp"
#include "sim/config.hpp"
#include "sim/input_error.hpp"
#include "sim/report.hpp"
#include "sim/runner.hpp"

using namespace cubesim;

namespace {

int cmd_run(const Registry& reg, const std::string& config, const std::string& out_dir, bool json, bool reproducible,
            const std::string& engine, const std::string& trace) {
  if (engine != "cycle")
    throw InputError("", "--engine", "engine \"" + engine + "\" is not available yet (the SimGrid backend is a later issue); use --engine cycle");
  if (!trace.empty()) throw InputError("", "--trace", "traces are not available yet (a later issue)");
  Experiment ex = load_experiment(config, reg);
  auto log = spdlog::get("cubesim");
  std::vector<RunOutcome> outcomes;
  outcomes.reserve(ex.runs.size());
  for (const RunPoint& p : ex.runs) {
    outcomes.push_back(run_point(p, *ex.info, ex.verify));
    const RunOutcome& o = outcomes.back();
    if (!o.error.empty()) log->error("{}: {}", ex.name, o.error);
    else
      log->info("{} point {}: simulated {} predicted {} ({} events, {:.3f} s wall)", ex.name, outcomes.size(),
                format_time(o.stats.time), format_time(o.prediction.time), o.stats.events, o.stats.wall_s);
  }
  ReportOptions opt{reproducible};
  const ojson report = report_json(ex, outcomes, opt);
  if (!out_dir.empty()) {
    std::filesystem::create_directories(out_dir);
    write_file_atomic((std::filesystem::path(out_dir) / "report.json").string(), report.dump(2) + "\n");
    write_file_atomic((std::filesystem::path(out_dir) / "runs.csv").string(), report_csv(ex, outcomes, opt));
  }
  if (json) std::cout << report.dump(2) << "\n";
  else std::cout << report_text(ex, outcomes);
  bool ok = true;
  for (const RunOutcome& o : outcomes) ok = ok && o.ok();
  return ok ? 0 : 1;
}

int cmd_predict(const Registry& reg, const std::string& config, bool json) {
  Experiment ex = load_experiment(config, reg);
  ojson arr = ojson::array();
  for (const RunPoint& p : ex.runs) {
    Prediction pr = ex.info->predict(p.setup);
    ojson pt = ojson::object();
    for (const auto& [k, v] : p.point) pt[k] = v;
    arr.push_back({{"point", pt}, {"topology", p.setup.topology.describe()}, {"predicted", prediction_json(pr)}});
    if (!json) {
      std::string label;
      for (const auto& [k, v] : p.point) label += (label.empty() ? "" : " ") + k + "=" + v.dump();
      std::printf("%-28s %16s  start-ups %lld  element transfers %lld  (%s, %s)\n", label.empty() ? "-" : label.c_str(),
                  format_time(pr.time).c_str(), static_cast<long long>(pr.startups),
                  static_cast<long long>(pr.element_transfers), relation_name(pr.relation).c_str(), pr.source.c_str());
    }
  }
  if (json) {
    ojson r = {{"schema", "cubesim.prediction/1"}, {"name", ex.name}, {"algorithm", ex.algorithm}, {"runs", arr}};
    std::cout << r.dump(2) << "\n";
  }
  return 0;
}

int cmd_validate(const Registry& reg, const std::string& config) {
  Experiment ex = load_experiment(config, reg);
  std::printf("%s: valid (%s, %zu run%s)\n", config.c_str(), ex.algorithm.c_str(), ex.runs.size(), ex.runs.size() == 1 ? "" : "s");
  return 0;
}

int cmd_list(const Registry& reg, const std::string& what) {
  if (what == "machines") {
    for (const std::string& n : preset_names()) {
      Machine m = machine_from_json(*preset_json(n), "machines/presets/" + n + ".json", "", true);
      std::printf("%-14s tau %-9s t_c %-8s B_m %-5lld ports %-4s %s\n", n.c_str(), format_time(m.tau).c_str(),
                  format_time(m.t_c).c_str(), static_cast<long long>(m.packet_elements), m.ports.name().c_str(),
                  m.description.c_str());
    }
    return 0;
  }
  if (what == "algorithms") {
    for (const AlgorithmInfo* a : reg.all()) std::printf("%-16s %s [%s]\n", a->name.c_str(), a->summary.c_str(), a->source.c_str());
    return 0;
  }
  throw InputError("", "list", "list what? \"machines\" or \"algorithms\", not \"" + what + "\"");
}

}  // namespace

int main(int argc, char** argv) {
  auto log = spdlog::stderr_color_mt("cubesim");
  log->set_pattern("%^%l%$ %v");
  log->set_level(spdlog::level::warn);

  CLI::App app{"cubesim: cycle-accurate simulation of message-passing hypercube and mesh machines"};
  app.require_subcommand(1);
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "log each run to stderr");

  std::string config, out_dir, engine = "cycle", trace, what;
  bool json = false, reproducible = false;
  auto* run = app.add_subcommand("run", "simulate a config (one run or a sweep) and report simulated vs predicted");
  run->add_option("config", config, "experiment config (JSON)")->required();
  run->add_option("--out", out_dir, "write report.json and runs.csv into this folder (atomically)");
  run->add_flag("--json", json, "print the JSON report on stdout and nothing else");
  run->add_option("--engine", engine, "cycle (the discrete-event engine)");
  run->add_option("--trace", trace, "trace format (not available yet)");
  run->add_flag("--reproducible", reproducible, "leave wall-clock fields at 0 so that reports are bit-identical");
  auto* pred = app.add_subcommand("predict", "print the analytic predictions of a config");
  pred->add_option("config", config, "experiment config (JSON)")->required();
  pred->add_flag("--json", json, "JSON on stdout");
  auto* val = app.add_subcommand("validate", "check a config (schema and semantics) without running it");
  val->add_option("config", config, "experiment config (JSON)")->required();
  auto* list = app.add_subcommand("list", "list machines or algorithms");
  list->add_option("what", what, "machines | algorithms")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "cubesim: " << e.what() << "\n";
    return 2;
  }
  if (verbose) log->set_level(spdlog::level::info);
  try {
    const Registry reg = make_registry();
    if (*run) return cmd_run(reg, config, out_dir, json, reproducible, engine, trace);
    if (*pred) return cmd_predict(reg, config, json);
    if (*val) return cmd_validate(reg, config);
    if (*list) return cmd_list(reg, what);
  } catch (const InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "cubesim: error: " << e.what() << "\n";
    return 1;
  }
  return 2;
}
