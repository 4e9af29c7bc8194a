// cubesim — the command line (DESIGN.md "Command line").
// Exit codes: 0 success; 1 a verification failed or a prediction's relation did not hold (or a
// simulated process failed); 2 bad input, with one line naming the file, where, and what.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "app/algorithm_docs.hpp"
#include "app/calibrate.hpp"
#include "app/config.hpp"
#include "app/describe.hpp"
#include "app/huge_pages.hpp"
#include "app/interrupt.hpp"
#include "app/io.hpp"
#include "app/plot_launcher.hpp"
#include "app/progress.hpp"
#include "app/regress.hpp"
#include "app/replay.hpp"
#include "app/report.hpp"
#include "app/runner.hpp"
#include "app/sweep.hpp"
#include "app/trace_files.hpp"
#include "app/version.hpp"
#include "machines/machine_keys.hpp"
#include "machines/machine_loader.hpp"
#include "sim/input_error.hpp"
#include "sim/resources.hpp"
#include "sim/simgrid/platform.hpp"
#include "sim/suggest.hpp"

using namespace cubesim;

namespace {

struct TraceArgs {
  std::string formats;  ///< --trace
  std::string nodes;    ///< --trace-nodes
  std::int64_t max_events = 0;
  bool max_events_given = false;
};

trace::TraceFormats trace_formats(const TraceArgs& a, const std::string& out_dir) {
  trace::TraceFormats f;
  if (a.formats.empty()) {
    if (!a.nodes.empty()) throw InputError("", "--trace-nodes", "needs --trace chrome");
    if (a.max_events_given) throw InputError("", "--trace-max-events", "needs --trace chrome");
    return f;
  }
  f = trace::parse_trace_formats(a.formats);
  if (out_dir.empty()) throw InputError("", "--trace", "traces are files: give --out DIR (they go to DIR/traces/)");
  if (!a.nodes.empty()) trace::parse_trace_nodes(a.nodes, f.chrome_options);
  if (a.max_events_given) {
    if (a.max_events < 1)
      throw InputError("", "--trace-max-events", "must be a count of at least 1, not " + std::to_string(a.max_events));
    if (!f.chrome) throw InputError("", "--trace-max-events", "needs --trace chrome");
    f.chrome_options.max_events = a.max_events;
  }
  return f;
}

/// The budgets of the command line (docs/reliability.md "Budgets").
struct BudgetArgs {
  std::int64_t max_events = kDefaultMaxEvents;
  std::string max_memory;    ///< bytes, or with a suffix K, M, G, T (powers of 1024); empty: derived
  bool per_packet = false;   ///< one event per packet: packet trains off (docs/performance.md)
  bool no_lockstep = false;  ///< every run by the engine, none by the lockstep simulator (docs/lockstep.md)
};

/// "4G" -> 4 GiB; "0": none. InputError for anything else.
std::int64_t parse_bytes(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  std::string unit = text.substr(digits);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  if (unit.size() == 2 && (unit[1] == 'i' || unit[1] == 'I')) unit.pop_back();
  int shift = -1;
  if (unit.empty())
    shift = 0;
  else if (unit.size() == 1) {
    const std::string units = "KMGT";
    const auto at = units.find(static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0]))));
    if (at != std::string::npos) shift = 10 * static_cast<int>(at + 1);
  }
  if (digits == 0 || digits > 15 || shift < 0)
    throw InputError("", "--max-memory",
                     "\"" + text + "\" is not a size: bytes, or a number with K, M, G or T (e.g. 8G); 0 for none");
  const std::int64_t v = std::stoll(text.substr(0, digits));
  if (v > (INT64_MAX >> shift)) throw InputError("", "--max-memory", "\"" + text + "\" is more than 2^63 bytes");
  return v << shift;
}

/// Sets the process's memory budget and returns the run limits of the command line.
RunLimits run_limits(const BudgetArgs& a) {
  RunLimits l = make_run_limits(a.max_events, a.per_packet, "--max-events");  // the event budget checked first
  l.lockstep = !a.no_lockstep;
  set_memory_budget(a.max_memory.empty() ? default_memory_budget() : parse_bytes(a.max_memory));
  l.max_resident_bytes = memory_budget();
  return l;
}

struct RunArgs {
  std::string config, out_dir, engine = "cycle";
  bool json = false, reproducible = false, resume = false;
  TraceArgs trace;
  BudgetArgs budget;
  int jobs = 0;                    ///< 0: one per core
  std::string shard;               ///< "I/K": run points I, I+K, I+2K, ... (1-based)
  std::vector<std::string> merge;  ///< cubesim merge: the shards' --out folders
  std::string machine;             ///< --machine: a preset or a machine file in place of the config's
  std::vector<std::string> set;    ///< --set KEY=VALUE
};

/// `cubesim run` and `cubesim merge` (app/sweep.hpp): the options parsed and checked, the sweep
/// run, the report printed, the exit status.
int cmd_run(const Registry& reg, const RunArgs& a) {
  SweepOptions o;
  o.config = a.config;
  o.out_dir = a.out_dir;
  o.engine = parse_engine(a.engine, "--engine");
  o.traces = trace_formats(a.trace, a.out_dir);
  if (!a.shard.empty()) o.shard = parse_shard(a.shard);
  o.resume = a.resume;
  o.merge = a.merge;
  o.jobs = a.jobs;
  o.reproducible = a.reproducible;
  o.progress_line = stderr_is_terminal() && !a.json;
  o.machine = a.machine;
  o.set = a.set;
  check_sweep_options(o);
  const SweepResult r = run_sweep_command(reg, o, run_limits(a.budget));
  const Experiment& ex = r.plan.ex;
  if (a.json)
    std::cout << r.report.dump(2) << "\n";
  else
    std::cout << report_text(ex, r.outcomes, r.report_options);
  if (r.stopped != 0)
    spdlog::get("cubesim")->error("stopped by {} after {} of {} points{}", signal_name(r.stopped), r.outcomes.size(),
                                  ex.runs.size(),
                                  a.out_dir.empty() ? std::string(": give --out DIR to keep them")
                                                    : "; " + r.report_options.resume_command + " runs the rest");
  return r.exit_code();
}

int cmd_replay(const Registry& reg, const std::string& path, const trace::ReplayOptions& opt,
               const std::string& out_dir, bool json, bool reproducible, const TraceArgs& targs,
               const BudgetArgs& budget) {
  const trace::TraceFormats formats = trace_formats(targs, out_dir);
  const RunLimits limits = run_limits(budget);
  OutputDir out(out_dir);
  trace::ReplayResult r = trace::prepare_replay(path, opt, reg);
  // The recorder sees the operations a GOAL schedule's replay starts, not the dependencies that
  // ordered them: what it wrote would replay as another schedule.
  if (r.loaded.trace->has_dag() && (formats.cubesim || formats.simgrid || formats.goal))
    throw InputError("", "--trace",
                     "a GOAL schedule's replay can be written as a chrome timeline only: its dependencies are not "
                     "what a recorded process awaits (replay the .goal file itself elsewhere)");
  // Beside collectives the trace's own messages travel with tags -1 - tag (traces/ti_trace.hpp),
  // which the trace formats do not write.
  if (r.loaded.trace->tags_apart && (formats.cubesim || formats.simgrid || formats.goal))
    throw InputError("", "--trace",
                     "a replay with collectives can be written as a chrome timeline only: its messages use tags kept "
                     "apart from the algorithms' that the trace formats do not write");
  trace::TraceSession session(formats, r.setup.topology);
  trace::run_replay(r, reg, session.observer(), limits);
  const ojson report = trace::replay_report(r, reproducible);
  if (out.active()) {
    if (formats.any() && r.error.empty()) {
      const std::string stem = std::filesystem::path(path).stem().string() + "-replay";
      session.write(out.staged("traces"), stem, trace::replay_header(r), r.setup.machine);
    }
    out.write("report.json", report.dump(2) + "\n");
    out.commit("report.json");
  }
  if (json) {
    std::cout << report.dump(2) << "\n";
  } else if (!r.error.empty()) {
    std::cout << path << ": replay failed: " << r.error << "\n";
  } else {
    std::cout << path << " (" << r.loaded.format << " trace, " << r.loaded.trace->steps() << " steps) on "
              << r.setup.machine.name << ", " << r.setup.topology.describe() << ", B=" << r.setup.params.B << "\n";
    if (!r.elements_note.empty()) std::cout << "  " << r.elements_note << "\n";
    if (!r.ranks_note.empty()) std::cout << "  " << r.ranks_note << "\n";
    if (!r.skipped_note.empty()) std::cout << "  " << r.skipped_note << "\n";
    if (!r.node_of.empty()) {
      std::cout << "  ranks onto nodes by --map " << r.map_kind << ":";
      for (std::size_t i = 0; i < r.node_of.size() && i < 16; ++i) std::cout << " " << i << "->" << r.node_of[i];
      std::cout << (r.node_of.size() > 16 ? " ...\n" : "\n");
    }
    if (r.collectives) {
      std::cout << "  collectives: " << r.collectives->runs.size() << " calls, timing mode;";
      for (const auto& [action, algo] : r.collectives->selection)
        std::cout << " " << action << " by " << algo
                  << (r.collectives->given.at(action) ? " (--collectives)" : " (default)") << ";";
      std::cout << " comp_size not charged (the algorithms' own additions are)\n";
    }
    std::cout << "  simulated " << format_time(r.stats.time) << "  (start-ups " << r.stats.critical_path.startups
              << ", element transfers " << r.stats.critical_path.element_transfers << ", " << r.stats.messages
              << " messages, " << r.stats.events << " events)\n";
    if (r.prediction)
      std::cout << "  predicted " << format_time(r.prediction->time) << "  (" << relation_name(r.prediction->relation)
                << (r.relation_holds ? ", holds" : ", DOES NOT HOLD") << "; " << r.prediction->source << ")\n";
    else
      std::cout << "  no prediction: " << r.prediction_note << "\n";
  }
  // As `run`: a failed replay or a prediction whose relation does not hold is exit 1 (issue 39).
  return r.error.empty() && (!r.prediction || r.relation_holds) ? 0 : 1;
}

int cmd_regress(const Registry& reg, const std::string& suite, const std::string& out_dir, bool json, bool update,
                bool reproducible, const BudgetArgs& budget) {
  const RegressOptions opt{update, reproducible, run_limits(budget)};
  OutputDir out(out_dir);
  const RegressSummary s = run_regress(suite, reg, opt);
  const ojson j = regress_json(s, opt);
  if (out.active()) {
    out.write("regress.csv", regress_csv(s));
    out.write("regress.json", j.dump(2) + "\n");
    out.commit("regress.json");
  }
  if (json)
    std::cout << j.dump(2) << "\n";
  else
    std::cout << regress_text(s);
  return s.pass() ? 0 : 1;
}

int cmd_export_platform(const Registry& reg, const std::string& config, const std::string& out, std::int64_t point) {
  if (point < 1) throw InputError("", "--point", "points are numbered from 1, not " + std::to_string(point));
  Experiment ex = load_experiment(config, reg);
  if (static_cast<std::size_t>(point) > ex.runs.size())
    throw InputError("", "--point",
                     "the config has " + std::to_string(ex.runs.size()) + " point(s); " + std::to_string(point) +
                         " is not one of them");
  const Setup& s = ex.runs[static_cast<std::size_t>(point) - 1].setup;
  if (auto why = sgplat::unsupported(s.machine, s.topology))
    throw InputError(ex.file, why->machine ? "/machine" : "/topology", why->message);
  const std::string xml = sgplat::platform_xml(s.machine, s.topology, s.machine.tau);
  if (out.empty()) {
    std::cout << xml;
    return 0;
  }
  try {
    write_file_atomic(out, xml);
  } catch (const std::exception& e) {
    throw InputError(out, "", std::string("cannot write the platform: ") + e.what());
  }
  spdlog::get("cubesim")->info("wrote {} ({}, {})", out, s.machine.name, s.topology.describe());
  return 0;
}

int cmd_predict(const Registry& reg, const std::string& config, bool json, const std::vector<KeyOverride>& overrides) {
  Experiment ex = load_experiment(config, reg, overrides);
  if (json) {
    std::cout << predictions_json(ex).dump(2) << "\n";
    return 0;
  }
  for (const RunPoint& p : ex.runs) {
    Prediction pr = p.info->predict(p.setup);
    std::string label;
    for (const auto& [k, v] : p.point) label += (label.empty() ? "" : " ") + k + "=" + v.dump();
    std::printf("%-28s %16s  start-ups %lld  element transfers %lld  (%s, %s)\n", label.empty() ? "-" : label.c_str(),
                format_time(pr.time).c_str(), static_cast<long long>(pr.startups),
                static_cast<long long>(pr.element_transfers), relation_name(pr.relation).c_str(), pr.source.c_str());
  }
  return 0;
}

int cmd_validate(const Registry& reg, const std::string& config, const std::vector<KeyOverride>& overrides) {
  Experiment ex = load_experiment(config, reg, overrides);
  std::printf("%s: valid (%s, %zu run%s)\n", config.c_str(), ex.algorithm.c_str(), ex.runs.size(),
              ex.runs.size() == 1 ? "" : "s");
  return 0;
}

/// `cubesim calibrate` (docs/calibrate.md): the fit printed; the machine file written only when
/// the fit converged (exit 1 when it did not).
int cmd_calibrate(const Registry& reg, CalibrateOptions o, const std::string& residuals, bool json,
                  const BudgetArgs& budget) {
  if (residuals != "relative" && residuals != "absolute")
    throw InputError("", "--residuals", "must be relative or absolute, not \"" + residuals + "\"");
  o.absolute = residuals == "absolute";
  o.limits = run_limits(budget);
  const Calibration c = calibrate(reg, o);
  const bool write = c.converged && !o.out.empty();
  if (write) {
    const ojson m = calibrated_machine_json(c, std::filesystem::path(o.out).stem().string());
    try {
      write_file_atomic(o.out, m.dump(2) + "\n");
    } catch (const std::exception& e) {
      throw InputError(o.out, "", std::string("cannot write the machine file: ") + e.what());
    }
  }
  if (json)
    std::cout << calibration_json(c, write ? o.out : "").dump(2) << "\n";
  else
    std::cout << calibration_text(c) << (write ? "wrote " + o.out + " (kind calibrated)\n" : "");
  if (!c.converged) {
    spdlog::get("cubesim")->error("{}: the fit did not converge ({}){}", o.measured, c.stop,
                                  o.out.empty() ? "" : ": " + o.out + " not written");
    return 1;
  }
  return 0;
}

int cmd_list(const Registry& reg, const std::string& what, bool markdown, bool summary) {
  if (what == "machines") {
    for (const std::string& n : preset_names()) {
      Machine m = machine_from_json(*preset_json(n), "machines/presets/" + n + ".json", "", true);
      // switching and kind: what preset selectors ("presets:kind=formula,...") most often filter by.
      const auto text = [&](const char* key) {
        return find_machine_key(key)->get(*find_machine_key(key), m).get<std::string>();
      };
      // With the units of machines/machine_keys.cpp: "t_c 4 us per element" (cubesim describe NAME: every key).
      const auto unit = [](const char* key) { return std::string(find_machine_key(key)->unit); };
      std::printf("%-14s tau %-9s %s  t_c %-8s %s  B_m %-5lld %s  ports %-4s switching %-19s kind %-12s %s\n",
                  n.c_str(), format_time(m.tau).c_str(), unit("tau").c_str(), format_time(m.t_c).c_str(),
                  unit("t_c").c_str(), static_cast<long long>(m.packet_elements), unit("packet_elements").c_str(),
                  m.ports.name().c_str(), text("switching").c_str(), text("kind").c_str(), m.description.c_str());
    }
    return 0;
  }
  if (what == "algorithms") {
    if (markdown) {
      std::fputs((summary ? algorithms_summary_markdown(reg) : algorithms_markdown(reg)).c_str(), stdout);
      return 0;
    }
    for (const AlgorithmInfo* a : reg.all())
      std::printf("%-16s %s [%s]\n", a->name.c_str(), a->summary.c_str(), a->source.c_str());
    return 0;
  }
  throw InputError("", "list", "list what? \"machines\" or \"algorithms\", not \"" + what + "\"");
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> v;
  for (const CLI::App* c : app.get_subcommands([](const CLI::App*) { return true; })) v.push_back(c->get_name());
  return v;
}

/// Every spelling of every option of `c` ("--out", "-j", ...).
std::vector<std::string> option_names(const CLI::App& c) {
  std::vector<std::string> v;
  for (const CLI::Option* o : c.get_options()) {
    for (const std::string& l : o->get_lnames()) v.push_back("--" + l);
    for (const std::string& sn : o->get_snames()) v.push_back("-" + sn);
  }
  return v;
}

/// `cubesim completion bash`: a completion function generated from the command tree, so that it
/// cannot fall behind the options (commands after `cubesim`, each command's options after it,
/// file names elsewhere).
std::string bash_completion(const CLI::App& app) {
  std::string s =
      "# bash completion for cubesim (generated by `cubesim completion bash`):\n"
      "#   source <(cubesim completion bash)   or save it as /etc/bash_completion.d/cubesim\n"
      "_cubesim() {\n"
      "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" cmd=\"\" i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case \"${COMP_WORDS[i]}\" in -*) ;; *) cmd=\"${COMP_WORDS[i]}\"; break ;; esac\n"
      "  done\n"
      "  local opts\n"
      "  case \"$cmd\" in\n";
  std::string global;
  for (const std::string& o : option_names(app)) global += (global.empty() ? "" : " ") + o;
  std::string cmds;
  for (const CLI::App* c : app.get_subcommands([](const CLI::App*) { return true; })) {
    cmds += (cmds.empty() ? "" : " ") + c->get_name();
    std::string opts = global;
    for (const std::string& o : option_names(*c)) opts += " " + o;
    if (c->get_prefix_command()) opts += " --help";
    s += "    " + c->get_name() + ") opts=\"" + opts + "\" ;;\n";
  }
  s += "    \"\") opts=\"" + global +
       "\"\n"
       "        if [[ \"$cur\" != -* ]]; then COMPREPLY=($(compgen -W \"" +
       cmds +
       "\" -- \"$cur\")); return; fi ;;\n"
       "  esac\n"
       "  if [[ \"$cur\" == -* ]]; then COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\")); return; fi\n"
       "  COMPREPLY=($(compgen -f -- \"$cur\"))\n"
       "}\n"
       "complete -o filenames -o bashdefault -F _cubesim cubesim\n";
  return s;
}

/// What the command line says before CLI11 reads it: the command word (the first argument that
/// is not an option), so that a missing, misspelled or `help` command gets its own answer.
struct CommandWord {
  std::string word;
  int index = 0;  ///< in argv; 0: none
};
CommandWord command_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") break;
    if (!a.empty() && a[0] == '-') continue;
    return {a, i};
  }
  return {};
}

/// The options of the command line that `c` (and the global ones) do not know, each with the
/// closest known spelling: "unknown option \"--jsn\" (did you mean \"--json\"?)".
std::string unknown_options(const CLI::App& app, const CLI::App* c, int argc, char** argv, int from) {
  std::vector<std::string> known = option_names(app);
  if (c != nullptr)
    for (const std::string& o : option_names(*c)) known.push_back(o);
  std::string msg;
  for (int i = from; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") break;
    if (a.size() < 2 || a[0] != '-' || (a[1] >= '0' && a[1] <= '9')) continue;
    a = a.substr(0, a.find('='));
    if (std::find(known.begin(), known.end(), a) != known.end()) continue;
    if (a.size() > 2 && a[1] != '-') {  // -j4: a short option with its value
      if (std::find(known.begin(), known.end(), a.substr(0, 2)) != known.end()) continue;
    }
    msg += (msg.empty() ? "" : "; ") + ("unknown option \"" + a + "\"") + did_you_mean(a, known);
  }
  return msg;
}

}  // namespace

int main(int argc, char** argv) {
  cubesim::use_huge_pages(argv);  // may execute this binary again, with huge pages (app/huge_pages.hpp)
  auto log = spdlog::stderr_color_mt("cubesim");
  log->set_pattern("%^%l%$ %v");
  log->set_level(spdlog::level::warn);

  CLI::App app{"cubesim: cycle-accurate simulation of message-passing hypercube and mesh machines"};
  app.require_subcommand(1);
  app.fallthrough();  // the global options (-v) are accepted after the command too
  app.set_version_flag("--version", version_text(), "print the version (with the git revision) and exit");
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "log each run to stderr");

  std::string config, out_dir, engine = "cycle", what;
  TraceArgs targs;
  BudgetArgs budget;
  bool json = false, reproducible = false, resume = false;
  int jobs = 0;
  std::string shard, run_machine;
  std::vector<std::string> merge_dirs;
  // The budgets (docs/reliability.md "Budgets"), on every command that runs the engine.
  auto add_budgets = [&budget](CLI::App* c) {
    c->add_option("--max-events", budget.max_events,
                  "stop a run after this many events (a livelock; default 10000000000, 0 for none): exit 1");
    c->add_option("--max-memory", budget.max_memory,
                  "memory budget, e.g. 8G: refuse runs that need more (exit 2), stop those that grow past it (exit 1); "
                  "default: 90 % of what the machine has available");
    c->add_flag("--per-packet", budget.per_packet,
                "one event per packet (packet trains off): the same results, more events (docs/performance.md)");
    c->add_flag("--no-lockstep", budget.no_lockstep,
                "every run by the event engine, none by the lockstep simulator: the same results (docs/lockstep.md)");
  };
  auto* run = app.add_subcommand("run", "simulate a config (one run or a sweep) and report simulated vs predicted");
  run->add_option("config", config, "experiment config (JSON)")->required();
  run->add_option("--out", out_dir, "write report.json and runs.csv into this folder (atomically)");
  run->add_option("--machine", run_machine,
                  "run on this machine instead of the config's: a preset name or a machine file (NAME.json)");
  run->add_flag("--json", json, "print the JSON report on stdout and nothing else");
  run->add_option("--engine", engine,
                  "cycle (the discrete-event engine, default), simgrid (SimGrid S4U), or both side by side");
  run->add_option("--trace", targs.formats,
                  "write traces into OUT/traces: cubesim, chrome, simgrid, goal (comma-separated)");
  run->add_option("--trace-nodes", targs.nodes, "chrome trace: only nodes A-B");
  run->add_option("--trace-max-events", targs.max_events,
                  "chrome trace: stop after this many events (default 2000000)");
  run->add_flag("--reproducible", reproducible, "leave wall-clock fields at 0 so that reports are bit-identical");
  run->add_flag("--resume", resume, "finish an interrupted run: reuse the points OUT/resume.json holds, run the rest");
  run->add_option("--jobs,-j", jobs, "points run at once (default 0: one per core); the report is the same");
  run->add_option("--shard", shard,
                  "run only shard I of K (points I, I+K, ...; 1 <= I <= K), for a batch system; "
                  "needs --out; `cubesim merge` joins the shards");
  std::vector<std::string> set_args;
  const char* set_help =
      "set a config key for this run, repeatable: params.M=1024, machine.tau=100us (a machine key), "
      "topology.dim=5, sweep.params.M=[1,2,4], name=x; validated as the file is";
  run->add_option("--set", set_args, set_help)->allow_extra_args(false);
  add_budgets(run);
  auto* merge = app.add_subcommand(
      "merge", "join the --out folders of `cubesim run --shard I/K` into the report of the whole sweep");
  merge->add_option("config", config, "the experiment config the shards ran")->required();
  merge->add_option("shards", merge_dirs, "the shards' --out folders")->required();
  merge->add_option("--out", out_dir, "write report.json and runs.csv into this folder (atomically)");
  merge->add_flag("--json", json, "print the JSON report on stdout and nothing else");
  merge->add_flag("--reproducible", reproducible, "leave wall-clock fields at 0 so that reports are bit-identical");
  merge->add_option("--engine", engine, "the --engine the shards ran with (default cycle)");
  merge->add_option("--machine", run_machine, "the --machine the shards ran with");
  merge->add_option("--set", set_args, "the --set KEY=VALUE the shards ran with (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  add_budgets(merge);
  std::string trace_path;
  trace::ReplayOptions ropt;
  auto* rep = app.add_subcommand("replay", "re-time a recorded trace (cubesim, SimGrid TI or GOAL) on a machine model");
  rep->add_option("trace", trace_path, "a .trace file, a SimGrid TI index or action file, or a GOAL schedule")
      ->required();
  rep->add_option("--machine", ropt.machine, "preset name, machine JSON file, or \"recorded\" (default)");
  rep->add_option("--topology", ropt.topology,
                  "hypercube:n (dimension n), hypercube:nodes=N, mesh:AxB[xC] or torus:AxB[xC] (default: see "
                  "docs/traces.md)");
  rep->add_option("--packet", ropt.packet, "packet size B in elements (default: see docs/traces.md)");
  rep->add_option("--format", ropt.format, "auto (default), cubesim, simgrid or goal");
  rep->add_option("--elements", ropt.elements,
                  "keep (default): the recorded element counts; bytes: counts scaled to keep each message's bytes "
                  "when the machine's element_bytes differ from the recorded one's");
  rep->add_option("--collectives", ropt.collectives,
                  "the algorithm of each collective of a SimGrid trace: ACTION=ALGORITHM,... (e.g. "
                  "bcast=broadcast.nesbt,allreduce=allreduce.sbt; default: per machine, docs/traces.md)");
  rep->add_option("--map", ropt.map,
                  "ranks onto nodes: identity (default), gray, random[:SEED], or a file of one node per line");
  rep->add_option("--out", out_dir, "write report.json (and traces) into this folder");
  rep->add_flag("--json", json, "print the JSON report on stdout and nothing else");
  rep->add_flag("--reproducible", reproducible, "leave wall-clock fields at 0");
  rep->add_option("--trace", targs.formats,
                  "write traces of the replay into OUT/traces: cubesim, chrome, simgrid, goal");
  rep->add_option("--trace-nodes", targs.nodes, "chrome trace: only nodes A-B");
  rep->add_option("--trace-max-events", targs.max_events, "chrome trace: stop after this many events");
  add_budgets(rep);
  std::string suite;
  bool update = false;
  auto* reg_cmd =
      app.add_subcommand("regress", "check a suite of configs: simulated against predicted (and golden) times");
  reg_cmd->add_option("suite", suite, "suite JSON (cubesim.suite/1) or a folder of configs")->required();
  reg_cmd->add_option("--out", out_dir, "write regress.json and regress.csv into this folder");
  reg_cmd->add_flag("--json", json, "print the JSON summary on stdout and nothing else");
  reg_cmd->add_flag("--update", update, "rewrite the golden values with the current ones, listing what changed");
  reg_cmd->add_flag("--reproducible", reproducible, "leave wall-clock fields at 0");
  add_budgets(reg_cmd);
  std::int64_t point = 1;
  auto* expl =
      app.add_subcommand("export-platform", "write the SimGrid platform (XML) of a config's machine and topology");
  expl->add_option("config", config, "experiment config (JSON)")->required();
  expl->add_option("--out", out_dir, "the XML file to write (default: standard output)");
  expl->add_option("--point", point, "which point of a sweep (1-based, default 1)");
  CalibrateOptions copt;
  std::string residuals = "relative";
  auto* cal = app.add_subcommand(
      "calibrate",
      "fit a machine's time keys (tau, t_c, ...) to measured times, with 95 % intervals (docs/calibrate.md)");
  cal->add_option("measured", copt.measured, "MEASURED.csv: config, config keys, time (and weight) per row")
      ->required();
  cal->add_option("--machine", copt.machine, "the machine to calibrate: a preset name or a machine file")->required();
  cal->add_option("--fit", copt.fit, "the time keys to fit, comma-separated (e.g. tau,t_c)")->required();
  cal->add_option("--out", out_dir, "write the calibrated machine file here (atomically; only when the fit converged)");
  cal->add_flag("--json", json, "print the calibration as JSON on stdout and nothing else");
  cal->add_option("--residuals", residuals,
                  "relative (default: (simulated - measured) / measured) or absolute (seconds)");
  cal->add_option("--jobs,-j", copt.jobs, "runs at once (default 0: one per core); the result is the same");
  cal->add_option("--max-iterations", copt.max_iterations, "stop after this many iterations (default 50): exit 1");
  add_budgets(cal);
  auto* pred = app.add_subcommand("predict", "print the analytic predictions of a config");
  pred->add_option("config", config, "experiment config (JSON)")->required();
  pred->add_flag("--json", json, "JSON on stdout");
  auto* val = app.add_subcommand("validate", "check a config (schema and semantics) without running it");
  val->add_option("config", config, "experiment config (JSON)")->required();
  for (CLI::App* c : {pred, val}) {
    c->add_option("--machine", run_machine, "a preset name or a machine file (NAME.json) in place of the config's");
    c->add_option("--set", set_args, set_help)->allow_extra_args(false);
  }
  auto* list = app.add_subcommand("list", "list machines or algorithms");
  list->add_option("what", what, "machines | algorithms")->required();
  // Plots (docs/figures.md): drawn by app/plot/cubesim_plot.py with matplotlib; every argument
  // after the subcommand, --help included, is the script's.
  auto* plot =
      app.add_subcommand("plot", "plot a sweep: simulated beside predicted, a line per series (cubesim plot --help)");
  auto* figs = app.add_subcommand("figures", "regenerate the papers' figures into figures/ (cubesim figures --help)");
  auto* fit = app.add_subcommand(
      "fit", "fit a line or a power law through a sweep's runs, with 95 % intervals (cubesim fit --help)");
  auto* claims = app.add_subcommand(
      "claims", "check the papers' claims (claims/ledger.json) and write docs/claims.md (cubesim claims --help)");
  for (CLI::App* c : {plot, figs, fit, claims}) {
    c->prefix_command();
    c->fallthrough(false);  // every argument after the command is the script's
    c->set_help_flag();
  }
  std::string shell = "bash", help_topic;
  auto* completion =
      app.add_subcommand("completion", "print a shell completion script: source <(cubesim completion bash)");
  completion->add_option("shell", shell, "bash (the only one so far)");
  auto* help = app.add_subcommand("help", "show the help of cubesim, or of one command: cubesim help run");
  help->add_option("command", help_topic, "the command");
  // `cubesim describe NAME` (issue 33; app/describe.hpp): an algorithm's or a preset's reference;
  // --reference and --schema-descriptions: what scripts/gen-docs.sh writes into docs/reference.md
  // and configs/schema.json.
  std::string describe_name;
  bool describe_reference = false, describe_schema = false;
  auto* desc = app.add_subcommand(
      "describe", "an algorithm's parameters (meaning, unit, default, bounds), paper and formula, or a machine's keys");
  desc->add_option("name", describe_name, "an algorithm (cubesim list algorithms) or a machine preset");
  desc->add_flag("--reference", describe_reference, "docs/reference.md's generated part (Markdown)");
  desc->add_flag("--schema-descriptions", describe_schema, "configs/schema.json's descriptions, by JSON pointer");
  bool markdown = false, summary = false;
  list->add_flag("--markdown", markdown,
                 "algorithms: the docs' table (row, relation, measured deviations per port model)");
  list->add_flag("--summary", summary, "with --markdown: one row per algorithm (the README's table)");

  // The command word first: a missing or misspelled command gets its own line, not CLI11's.
  const std::vector<std::string> commands = command_names(app);
  std::string command_list;
  for (const std::string& c : commands) command_list += (command_list.empty() ? "" : ", ") + c;
  const CommandWord cw = command_word(argc, argv);
  bool asks = false;  // --help or --version: CLI11 answers those
  for (int i = 1; i < argc && (cw.index == 0 || i < cw.index); ++i)
    asks =
        asks || std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h" || std::string(argv[i]) == "--version";
  if (cw.index == 0 && !asks) {
    std::cerr << "cubesim: a command is required: " << command_list << " (cubesim help COMMAND)\n";
    return 2;
  }
  if (cw.index != 0 && std::find(commands.begin(), commands.end(), cw.word) == commands.end()) {
    std::cerr << "cubesim: unknown command \"" << cw.word << "\"" << did_you_mean(cw.word, commands)
              << " (commands: " << command_list << ")\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    const CLI::App* sub = cw.index == 0 ? nullptr : app.get_subcommand(cw.word);
    const std::string unknown = unknown_options(app, sub, argc, argv, 1);
    const std::string who = cw.index == 0 ? "cubesim" : "cubesim " + cw.word;
    if (!unknown.empty())
      std::cerr << one_line(who + ": " + unknown + " (" + who + " --help)") << "\n";
    else
      std::cerr << one_line(who + ": " + e.what()) << "\n";
    return 2;
  }
  if (*help) {
    if (help_topic.empty()) {  // app.help() would describe the selected command, `help` itself
      std::cout << app.get_formatter()->make_help(&app, "cubesim", CLI::AppFormatMode::Normal);
      return 0;
    }
    if (std::find(commands.begin(), commands.end(), help_topic) == commands.end()) {
      std::cerr << "cubesim help: unknown command \"" << help_topic << "\"" << did_you_mean(help_topic, commands)
                << " (commands: " << command_list << ")\n";
      return 2;
    }
    CLI::App* c = app.get_subcommand(help_topic);
    if (c->get_prefix_command()) return exec_plot_tool(help_topic, {"--help"});
    std::cout << c->help("cubesim");
    return 0;
  }
  if (*completion) {
    if (shell != "bash") {
      std::cerr << "cubesim completion: no completion for \"" << shell << "\" (bash only so far)\n";
      return 2;
    }
    std::cout << bash_completion(app);
    return 0;
  }
  if (*plot) return exec_plot_tool("plot", plot->remaining());
  if (*figs) return exec_plot_tool("figures", figs->remaining());
  if (*fit) return exec_plot_tool("fit", fit->remaining());
  if (*claims) return exec_plot_tool("claims", claims->remaining());
  if (verbose) {
    log->set_level(spdlog::level::info);
    const char* t = std::getenv("GLIBC_TUNABLES");
    log->info("huge pages: {}", t != nullptr && std::strstr(t, "glibc.malloc.hugetlb") != nullptr
                                    ? "asked for (GLIBC_TUNABLES glibc.malloc.hugetlb)"
                                    : "not asked for");
  }
  targs.max_events_given = run->count("--trace-max-events") + rep->count("--trace-max-events") > 0;
  try {
    const Registry reg = make_registry();
    if (*run)
      return cmd_run(reg, RunArgs{config,
                                  out_dir,
                                  engine,
                                  json,
                                  reproducible,
                                  resume,
                                  targs,
                                  budget,
                                  jobs,
                                  shard,
                                  {},
                                  run_machine,
                                  set_args});
    if (*merge)
      return cmd_run(reg, RunArgs{config, out_dir, engine, json, reproducible, false, targs, budget, 1, "", merge_dirs,
                                  run_machine, set_args});
    if (*reg_cmd) return cmd_regress(reg, suite, out_dir, json, update, reproducible, budget);
    if (*rep) return cmd_replay(reg, trace_path, ropt, out_dir, json, reproducible, targs, budget);
    if (*expl) return cmd_export_platform(reg, config, out_dir, point);
    if (*cal) {
      copt.out = out_dir;
      return cmd_calibrate(reg, copt, residuals, json, budget);
    }
    if (*pred) return cmd_predict(reg, config, json, command_overrides(run_machine, set_args));
    if (*val) return cmd_validate(reg, config, command_overrides(run_machine, set_args));
    if (*list) return cmd_list(reg, what, markdown, summary);
    if (*desc) {
      if (describe_reference + describe_schema + !describe_name.empty() != 1)
        throw InputError("cubesim describe", "", "give one of: NAME, --reference, --schema-descriptions");
      std::cout << (describe_reference ? reference_markdown(reg)
                    : describe_schema  ? schema_descriptions().dump(2) + "\n"
                                       : describe(reg, describe_name));
      return 0;
    }
  } catch (const InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << one_line(std::string("cubesim: error: ") + e.what()) << "\n";
    return 1;
  }
  return 2;
}
