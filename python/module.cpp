// The Python module's compiled part, `cubesim._cubesim` (docs/python.md): the library the command
// line runs, called in-process. Each function is the command's own code path (app/sweep.hpp's
// run_sweep_command for `run`, load_experiment for `predict` and `validate`, app/replay.hpp for
// `replay`), so that a report is the command line's byte for byte. python/cubesim/__init__.py
// wraps it: keyword overrides, DataFrames, the progress bar, the exceptions' Python classes.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>

#include "algorithms/registry.hpp"
#include "app/config.hpp"
#include "app/describe.hpp"
#include "app/replay.hpp"
#include "app/report.hpp"
#include "app/runner.hpp"
#include "app/sweep.hpp"
#include "machines/machine_loader.hpp"
#include "sim/errors.hpp"
#include "sim/input_error.hpp"
#include "sim/resources.hpp"
#include "traces/ti_trace.hpp"

namespace py = pybind11;
using namespace cubesim;

namespace {

/// One registry for the module's life: make_registry() runs every algorithm file's registration.
const Registry& registry() {
  static const Registry reg = make_registry();
  return reg;
}

/// nlohmann's ordered JSON as Python objects (dicts keep the report's key order).
py::object to_python(const ojson& j) {
  switch (j.type()) {
    case ojson::value_t::null:
      return py::none();
    case ojson::value_t::boolean:
      return py::bool_(j.get<bool>());
    case ojson::value_t::number_integer:
      return py::int_(j.get<std::int64_t>());
    case ojson::value_t::number_unsigned:
      return py::int_(j.get<std::uint64_t>());
    case ojson::value_t::number_float:
      return py::float_(j.get<double>());
    case ojson::value_t::string:
      return py::str(j.get_ref<const std::string&>());
    case ojson::value_t::array: {
      py::list l;
      for (const ojson& e : j) l.append(to_python(e));
      return l;
    }
    case ojson::value_t::object: {
      py::dict d;
      for (const auto& [k, v] : j.items()) d[py::str(k)] = to_python(v);
      return d;
    }
    default:
      return py::none();
  }
}

/// The command line's budgets (app/main.cpp run_limits): the memory budget of the process, the
/// event budget, packet trains.
RunLimits limits(std::int64_t max_events, std::int64_t max_memory, bool per_packet) {
  RunLimits l = make_run_limits(max_events, per_packet, "max_events");  // the event budget checked first
  // -1: None in Python, the command line's default (90 % of what the machine has available).
  if (max_memory < -1)
    throw InputError("", "max_memory", "must be bytes (0 for none), not " + std::to_string(max_memory));
  // The budget is the process's (sim/resources.hpp): runs from several Python threads at once (the
  // claims command's) set it under a lock, and only when it changes.
  static std::mutex budget_mutex;
  {
    const std::lock_guard<std::mutex> lock(budget_mutex);
    // The default once a process, as the command line takes it once a run.
    static const std::int64_t default_budget = default_memory_budget();
    const std::int64_t budget = max_memory == -1 ? default_budget : max_memory;
    if (budget != memory_budget()) set_memory_budget(budget);
  }
  l.max_resident_bytes = memory_budget();
  return l;
}

/// Runs `work` on a thread of its own while this (the Python) thread waits without the GIL,
/// waking every 50 ms to call `progress` and to look for a pending signal: Ctrl-C sets `stop`
/// (the engines check it within 4,096 events), and `work` then ends with what it finished.
/// Returns whether a KeyboardInterrupt (or another signal's exception) asked to stop; the Python
/// error is cleared here, the caller says it was stopped.
bool run_interruptible(const std::function<void()>& work, std::atomic<int>& stop,
                       const std::function<void()>& progress) {
  std::exception_ptr failure;
  std::atomic<bool> finished{false};
  std::thread worker([&] {
    try {
      work();
    } catch (...) {
      failure = std::current_exception();
    }
    finished.store(true, std::memory_order_release);
  });
  bool interrupted = false;
  while (!finished.load(std::memory_order_acquire)) {
    {
      py::gil_scoped_release release;
      for (int i = 0; i < 50 && !finished.load(std::memory_order_acquire); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (finished.load(std::memory_order_acquire)) break;
    if (!interrupted && PyErr_CheckSignals() != 0) {
      PyErr_Clear();
      interrupted = true;
      stop.store(SIGINT, std::memory_order_relaxed);
    }
    if (progress && !interrupted) {
      try {
        progress();
      } catch (const py::error_already_set&) {  // a progress bar that fails does not stop the run
        PyErr_Clear();
      }
    }
  }
  {
    py::gil_scoped_release release;
    worker.join();
  }
  if (failure) std::rethrow_exception(failure);
  return interrupted;
}

/// `cubesim.run`: run_sweep_command as `cubesim run` calls it.
py::dict run(const std::string& config, const std::optional<std::string>& config_text, const std::string& machine,
             const std::vector<std::string>& set, const std::string& out, int jobs, const std::string& engine,
             bool reproducible, std::int64_t max_events, std::int64_t max_memory, bool per_packet,
             const std::function<void(std::size_t, std::size_t)>& progress) {
  SweepOptions o;
  o.config = config;
  o.config_text = config_text;
  o.out_dir = out;
  o.engine = parse_engine(engine, "engine");
  o.jobs = jobs;
  o.reproducible = reproducible;
  o.machine = machine;
  o.set = set;
  check_sweep_options(o);
  std::atomic<int> stop{0};
  std::atomic<std::size_t> done{0};
  o.points_done = &done;
  RunLimits l = limits(max_events, max_memory, per_packet);
  l.stop = &stop;
  std::optional<SweepResult> r;
  const bool interrupted = run_interruptible([&] { r.emplace(run_sweep_command(registry(), o, l)); }, stop,
                                             [&] {
                                               if (progress) progress(done.load(std::memory_order_relaxed), 0);
                                             });
  py::dict d;
  d["report"] = to_python(r->report);
  d["json_text"] = r->report.dump(2) + "\n";
  d["text"] = report_text(r->plan.ex, r->outcomes, r->report_options);
  d["exit_code"] = r->exit_code();
  d["stopped"] = interrupted ? SIGINT : r->stopped;
  d["points"] = r->plan.ex.runs.size();
  return d;
}

/// The experiment of a config given as a path or as text (a dict), with the overrides.
Experiment experiment(const std::string& config, const std::optional<std::string>& text, const std::string& machine,
                      const std::vector<std::string>& set) {
  const std::vector<KeyOverride> overrides = command_overrides(machine, set);
  return text ? parse_experiment(*text, config, registry(), overrides) : load_experiment(config, registry(), overrides);
}

/// `cubesim.replay`: `cubesim replay` without its files (traces of the replay are not written).
py::dict replay(const std::string& path, const trace::ReplayOptions& opt, bool reproducible, std::int64_t max_events,
                std::int64_t max_memory, bool per_packet) {
  std::atomic<int> stop{0};
  RunLimits l = limits(max_events, max_memory, per_packet);
  l.stop = &stop;
  trace::ReplayResult r = trace::prepare_replay(path, opt, registry());
  bool interrupted = false;
  try {
    interrupted = run_interruptible([&] { trace::run_replay(r, registry(), nullptr, l); }, stop, {});
  } catch (const Interrupted&) {
    interrupted = true;
  }
  if (interrupted) {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  const ojson report = trace::replay_report(r, reproducible);
  py::dict d;
  d["report"] = to_python(report);
  d["json_text"] = report.dump(2) + "\n";
  d["exit_code"] = r.error.empty() && (!r.prediction || r.relation_holds) ? 0 : 1;
  return d;
}

const char* step_name(trace::StepKind k) {
  switch (k) {
    case trace::StepKind::await:
      return "await";
    case trace::StepKind::fork:
      return "fork";
    case trace::StepKind::start:
      return "start";
    case trace::StepKind::wait:
      return "wait";
    case trace::StepKind::collective:
      return "collective";
  }
  return "?";
}

/// `cubesim.trace_events`: a trace as columns (one entry an operation, or a step without one:
/// fork, wait, collective), for a DataFrame. Loaded as `cubesim replay` loads it.
py::dict trace_events(const std::string& path, const trace::ReplayOptions& opt) {
  const trace::ReplayResult r = trace::prepare_replay(path, opt, registry());
  const trace::Trace& t = *r.loaded.trace;
  std::vector<std::int64_t> node, strand, step, peer, amount, tag, id;
  std::vector<std::string> kind, op;
  const auto row = [&](std::size_t n, std::size_t s, std::size_t k, const char* sk, const trace::TraceOp* o,
                       std::int64_t rid) {
    node.push_back(static_cast<std::int64_t>(n));
    strand.push_back(static_cast<std::int64_t>(s));
    step.push_back(static_cast<std::int64_t>(k));
    kind.emplace_back(sk);
    op.emplace_back(o != nullptr ? trace::op_name(o->code) : "");
    peer.push_back(o != nullptr ? o->peer : -1);
    amount.push_back(o != nullptr ? o->amount : 0);
    tag.push_back(o != nullptr ? o->tag : 0);
    id.push_back(rid);
  };
  for (std::size_t n = 0; n < t.nodes.size(); ++n) {
    const trace::NodeTrace& nt = t.nodes[n];
    for (std::size_t s = 0; s < nt.strands.size(); ++s)
      for (std::size_t k = 0; k < nt.strands[s].size(); ++k) {
        const trace::Step& st = nt.strands[s][k];
        if (st.ops.empty())
          row(n, s, k, step_name(st.kind), nullptr, st.kind == trace::StepKind::fork ? st.first : st.id);
        for (const trace::TraceOp& o : st.ops) row(n, s, k, step_name(st.kind), &o, st.id);
      }
    for (std::size_t k = 0; k < nt.dag.size(); ++k) row(n, 0, k, "dag", &nt.dag[k].op, 0);
  }
  py::dict d;
  d["node"] = node;
  d["strand"] = strand;
  d["step"] = step;
  d["kind"] = kind;
  d["op"] = op;
  d["peer"] = peer;
  d["amount"] = amount;
  d["tag"] = tag;
  d["id"] = id;
  py::dict meta;
  meta["format"] = r.loaded.format;
  meta["header"] = to_python(t.header);
  meta["nodes"] = t.nodes.size();
  meta["steps"] = t.steps();
  d["meta"] = meta;
  return d;
}

}  // namespace

PYBIND11_MODULE(_cubesim, m) {
  m.doc() = "cubesim's library, in-process (docs/python.md); use the package `cubesim`, not this module";
  // Warnings and errors on stderr as the command line writes them ("warning ..."); the library
  // logs through the logger named "cubesim" (app/sweep.hpp command_log).
  if (!spdlog::get("cubesim")) {
    auto log = spdlog::stderr_logger_mt("cubesim");
    log->set_pattern("%l %v");
    log->set_level(spdlog::level::warn);
  }
  static py::exception<InputError> input_error(m, "InputError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      py::object inst = py::handle(input_error.ptr())(py::str(e.what()));
      inst.attr("file") = py::str(e.file());
      inst.attr("pointer") = py::str(e.where());
      inst.attr("reason") = py::str(e.message());
      PyErr_SetObject(input_error.ptr(), inst.ptr());
    }
  });

  m.def("set_log_level",
        [](const std::string& level) { spdlog::get("cubesim")->set_level(spdlog::level::from_str(level)); });
  m.def("run", &run, py::arg("config"), py::arg("config_text"), py::arg("machine"), py::arg("set"), py::arg("out"),
        py::arg("jobs"), py::arg("engine"), py::arg("reproducible"), py::arg("max_events"), py::arg("max_memory"),
        py::arg("per_packet"), py::arg("progress"));
  m.def(
      "predict",
      [](const std::string& config, const std::optional<std::string>& text, const std::string& machine,
         const std::vector<std::string>& set) {
        return to_python(predictions_json(experiment(config, text, machine, set)));
      },
      py::arg("config"), py::arg("config_text"), py::arg("machine"), py::arg("set"));
  m.def(
      "validate",
      [](const std::string& config, const std::optional<std::string>& text, const std::string& machine,
         const std::vector<std::string>& set) {
        const Experiment ex = experiment(config, text, machine, set);
        py::dict d;
        d["name"] = ex.name;
        d["algorithm"] = ex.algorithm;
        d["runs"] = ex.runs.size();
        return d;
      },
      py::arg("config"), py::arg("config_text"), py::arg("machine"), py::arg("set"));
  m.def("machines", [] {
    py::list l;
    for (const std::string& n : preset_names()) {
      const Machine mach = machine_from_json(*preset_json(n), "machines/presets/" + n + ".json", "", true);
      l.append(to_python(machine_json(mach)));
    }
    return l;
  });
  m.def("algorithms", [] {
    py::list l;
    for (const AlgorithmInfo* a : registry().all()) {
      py::dict d;
      d["name"] = a->name;
      d["summary"] = a->summary;
      d["source"] = a->source;
      d["params"] = a->params;
      d["required"] = a->required;
      l.append(d);
    }
    return l;
  });
  m.def("describe", [](const std::string& name) { return describe(registry(), name); });
  py::class_<trace::ReplayOptions>(m, "ReplayOptions")
      .def(py::init<>())
      .def_readwrite("machine", &trace::ReplayOptions::machine)
      .def_readwrite("topology", &trace::ReplayOptions::topology)
      .def_readwrite("packet", &trace::ReplayOptions::packet)
      .def_readwrite("format", &trace::ReplayOptions::format)
      .def_readwrite("elements", &trace::ReplayOptions::elements)
      .def_readwrite("collectives", &trace::ReplayOptions::collectives)
      .def_readwrite("map", &trace::ReplayOptions::map);
  m.def("replay", &replay, py::arg("trace"), py::arg("options"), py::arg("reproducible"), py::arg("max_events"),
        py::arg("max_memory"), py::arg("per_packet"));
  m.def("trace_events", &trace_events, py::arg("trace"), py::arg("options"));
  m.attr("default_max_events") = kDefaultMaxEvents;
}
