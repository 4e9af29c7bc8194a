#include "app/replay.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "algorithms/algorithm.hpp"
#include "app/config.hpp"
#include "app/params_json.hpp"
#include "app/report.hpp"
#include "app/runner.hpp"
#include "machines/machine_loader.hpp"
#include "sim/heap_meter.hpp"
#include "sim/input_error.hpp"
#include "traces/goal.hpp"
#include "traces/simgrid_ti.hpp"

namespace cubesim::trace {

Topology parse_topology_spec(const std::string& spec) {
  const auto fail = [&](const std::string& msg) -> Topology { throw InputError("", "--topology", msg); };
  const auto colon = spec.find(':');
  if (colon == std::string::npos)
    return fail(
        "expected hypercube:n (dimension n), hypercube:nodes=N, mesh:AxB[xC], torus:AxB[xC], mesh_of_trees:AxB[xC] or "
        "mesh_of_cliques:AxB[xC], got \"" +
        spec + "\"");
  const std::string kind = spec.substr(0, colon), rest = spec.substr(colon + 1);
  std::optional<long long> not_power;  // hypercube:nodes=N with N not a power of two
  ojson j;
  j["kind"] = kind;
  try {
    if (kind == "hypercube") {
      // The papers write n for the dimension and N = 2^n for the nodes: both spellings, and a
      // bare number is the dimension (as a config's topology.dim).
      const bool nodes = rest.rfind("nodes=", 0) == 0 || rest.rfind("N=", 0) == 0;
      const std::string num =
          nodes ? rest.substr(rest.find('=') + 1)
                : (rest.rfind("dim=", 0) == 0 || rest.rfind("n=", 0) == 0 ? rest.substr(rest.find('=') + 1) : rest);
      std::size_t used = 0;
      const long long n = std::stoll(num, &used);
      if (used != num.size()) throw std::invalid_argument("");
      if (nodes) {
        j["dim"] = log2_exact(n);
        if (j["dim"] == -1) not_power = n;
      } else {
        j["dim"] = n;
      }
    } else {
      ojson shape = ojson::array();
      std::stringstream ss(rest);
      for (std::string part; std::getline(ss, part, 'x');) {
        std::size_t used = 0;
        const long long e = std::stoll(part, &used);
        if (used != part.size()) throw std::invalid_argument("");
        shape.push_back(e);
      }
      j["shape"] = shape;
    }
  } catch (const std::exception&) {
    return fail("cannot read the sizes in \"" + spec + "\"");
  }
  if (not_power) return fail("a hypercube has 2^n nodes: " + std::to_string(*not_power) + " is not a power of two");
  try {
    return parse_topology(j, "", "--topology");
  } catch (const InputError& e) {
    return fail(e.message());
  }
}

namespace {

std::string head_of(const std::string& path, std::size_t bytes = 64) {
  check_readable_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "cannot read the file");
  std::string s(bytes, '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  s.resize(static_cast<std::size_t>(in.gcount()));
  return s;
}

/// A JSON file given to replay is not a trace of either format: say what it is and what to do.
void refuse_json_files(const std::string& path) {
  const std::string head = head_of(path, 4096);
  const auto first = head.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || (head[first] != '{' && head[first] != '[')) return;
  if (head.find("cubesim.config/1") != std::string::npos)
    throw InputError(path, "",
                     "this is an experiment config, not a trace: run it with `cubesim run " + path +
                         "` (add --trace cubesim --out DIR to record a trace to replay)");
  if (head.find("traceEvents") != std::string::npos || head[first] == '[')
    throw InputError(path, "",
                     "this is a Chrome trace (for viewing in Perfetto or chrome://tracing), not a trace to replay: "
                     "replay the cubesim trace (.trace, from --trace cubesim) or a SimGrid TI trace");
  if (head.find("cubesim.report/1") != std::string::npos)
    throw InputError(path, "", "this is a report, not a trace: replay a .trace (cubesim) or a SimGrid TI trace");
  throw InputError(path, "", "a JSON file is not a trace: replay a .trace (cubesim) or a SimGrid TI trace");
}

/// Element counts scaled so that each message keeps its bytes: ceil(count * from / to).
void scale_elements(Trace& t, int from, int to) {
  for (NodeTrace& n : t.nodes)
    for (std::vector<Step>& strand : n.strands)
      for (Step& st : strand)
        for (TraceOp& op : st.ops)
          if ((op.code == OpCode::send || op.code == OpCode::recv || op.code == OpCode::copy) && op.amount > 0)
            op.amount = (op.amount * from + to - 1) / to;
}

}  // namespace

std::vector<NodeId> parse_rank_map(const std::string& spec, NodeId ranks, const Topology& topo) {
  const NodeId size = topo.size();
  std::vector<NodeId> m(static_cast<std::size_t>(ranks));
  if (spec.empty() || spec == "identity") {
    for (NodeId i = 0; i < ranks; ++i) m[static_cast<std::size_t>(i)] = i;
    return m;
  }
  if (spec == "gray") {
    if (topo.kind() != Topology::Kind::hypercube)
      throw InputError("", "--map", "gray places rank i on node gray(i) of a hypercube, not of a " + topo.describe());
    for (NodeId i = 0; i < ranks; ++i) m[static_cast<std::size_t>(i)] = i ^ (i >> 1);
    return m;
  }
  if (spec == "random" || spec.rfind("random:", 0) == 0) {
    std::uint64_t seed = 1;
    if (spec.size() > 7) {
      const std::string num = spec.substr(7);
      std::size_t used = 0;
      try {
        if (num.empty() || num[0] == '-') throw std::invalid_argument("");
        seed = std::stoull(num, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != num.size() || num.empty())
        throw InputError("", "--map", "random:SEED takes a non-negative integer seed, got \"" + num + "\"");
    }
    // A Fisher-Yates shuffle of the nodes by mt19937_64, whose sequence the standard fixes: the
    // same seed places the ranks the same way on every machine (std::shuffle's may differ).
    std::vector<NodeId> nodes(static_cast<std::size_t>(size));
    for (NodeId i = 0; i < size; ++i) nodes[static_cast<std::size_t>(i)] = i;
    std::mt19937_64 rng(seed);
    for (std::size_t i = nodes.size(); i > 1; --i) std::swap(nodes[i - 1], nodes[rng() % i]);
    std::copy_n(nodes.begin(), ranks, m.begin());
    return m;
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(spec, ec))
    throw InputError("", "--map",
                     "\"" + spec + "\" is neither identity, gray, random[:SEED] nor a file of node numbers");
  const std::string text = read_text_file(spec);
  std::istringstream is(text);
  std::vector<std::size_t> line_of(static_cast<std::size_t>(size), 0);
  std::size_t line = 0;
  for (std::string ln; std::getline(is, ln);) {
    ++line;
    const auto fail = [&](const std::string& msg) { throw InputError(spec, "line " + std::to_string(line), msg); };
    std::istringstream ls(ln);
    std::string word, extra;
    ls >> word >> extra;
    if (line > static_cast<std::size_t>(ranks))
      fail("the map places more ranks than the trace's " + std::to_string(ranks) + " (rank i's node on line i + 1)");
    std::size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(word, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (word.empty() || used != word.size() || !extra.empty())
      fail("expected one node number (rank " + std::to_string(line - 1) + "'s node), got \"" + ln + "\"");
    if (v < 0 || v >= size)
      fail("node " + std::to_string(v) + " is not a node of " + topo.describe() + " (0.." + std::to_string(size - 1) +
           ")");
    if (line_of[static_cast<std::size_t>(v)] != 0)
      fail("node " + std::to_string(v) + " is already rank " +
           std::to_string(line_of[static_cast<std::size_t>(v)] - 1) + "'s (line " +
           std::to_string(line_of[static_cast<std::size_t>(v)]) + "): a map places each rank on a node of its own");
    line_of[static_cast<std::size_t>(v)] = line;
    m[line - 1] = static_cast<NodeId>(v);
  }
  if (line < static_cast<std::size_t>(ranks))
    throw InputError(spec, "line " + std::to_string(line + 1),
                     "the map places " + std::to_string(line) + " ranks, the trace has " + std::to_string(ranks) +
                         " (rank i's node on line i + 1)");
  return m;
}

ReplayResult prepare_replay(const std::string& path, const ReplayOptions& opt, const Registry& registry) {
  ReplayResult r;
  r.loaded.path = path;
  if (opt.packet < 0)
    throw InputError(
        "", "--packet",
        "a packet size is at least 1 element (leave it out for the default), not " + std::to_string(opt.packet));
  if (opt.elements != "keep" && opt.elements != "bytes")
    throw InputError("", "--elements", "must be keep or bytes, not \"" + opt.elements + "\"");
  std::string format = opt.format;
  if (format == "auto") {
    refuse_json_files(path);
    const std::string head = head_of(path);
    if (head.empty())  // a trace of either format cut at its first byte
      throw InputError(path, "byte 0", "the file is empty: no trace to replay (truncated? record the trace again)");
    format = looks_native(head)                                           ? "cubesim"
             : path.ends_with(".goal") || looks_goal(head_of(path, 4096)) ? "goal"
                                                                          : "simgrid";
  }
  if (format != "cubesim" && format != "simgrid" && format != "goal")
    throw InputError("", "--format", "format must be auto, cubesim, simgrid or goal, not \"" + format + "\"");
  const bool imported = format != "cubesim";  // SimGrid TI or GOAL: ranks, no machine, no topology
  r.loaded.format = format;

  // Machine.
  ojson default_topology;
  Machine machine;
  if (opt.machine == "recorded") {
    if (format != "cubesim")
      throw InputError("", "--machine",
                       std::string(format == "goal" ? "a GOAL schedule" : "a SimGrid trace") +
                           " records no machine: name one (cubesim list machines)");
  } else {
    ResolvedMachine rm = machine_argument(opt.machine, "--machine", "\"recorded\"");
    machine = std::move(rm.machine);
    default_topology = std::move(rm.default_topology);
  }

  // Trace.
  if (format == "cubesim") {
    r.loaded.trace = std::make_shared<Trace>(read_text(read_text_file(path), path));
    for (const char* key : {"name", "algorithm"})  // echoed by the report (found by fuzz_native_trace)
      if (r.loaded.trace->header.contains(key) && !r.loaded.trace->header[key].is_string())
        throw InputError(path, std::string("line 1: /") + key, std::string(key) + " must be a string");
    if (opt.machine == "recorded") {
      const ojson& h = r.loaded.trace->header;
      if (!h.contains("machine"))
        throw InputError(path, "line 1: /machine", "the header records no machine: give --machine");
      machine = machine_from_json(h["machine"], path, "line 1: /machine", false);
    }
    const ojson& h = r.loaded.trace->header;
    // The recorded machine's element size: a number, or {"value": n, "source": ...} as presets write it.
    const ojson* eb = h.contains("machine") && h["machine"].is_object() && h["machine"].contains("element_bytes")
                          ? &h["machine"]["element_bytes"]
                          : nullptr;
    if (eb != nullptr && eb->is_object() && eb->contains("value")) eb = &(*eb)["value"];
    if (eb != nullptr && eb->is_number_integer()) {
      const auto from = eb->get<int>();
      if (from > 0 && from != machine.element_bytes) {
        const std::string bytes =
            std::to_string(from) + " bytes, " + machine.name + "'s " + std::to_string(machine.element_bytes);
        if (opt.elements == "bytes") {
          scale_elements(*r.loaded.trace, from, machine.element_bytes);
          r.elements_scaled = true;
          r.elements_note = "the trace's elements are " + bytes + ": counts scaled to keep each message's bytes";
        } else {
          r.elements_note = "the trace's elements are " + bytes +
                            ": the same element counts replayed (messages change size in bytes; "
                            "--elements bytes keeps the bytes)";
        }
      }
    }
  } else if (format == "goal") {
    r.loaded.trace = std::make_shared<Trace>(import_goal(read_text_file(path), path, machine.element_bytes));
  } else {
    r.loaded.trace = std::make_shared<Trace>(
        import_simgrid(path, machine.element_bytes, [](const std::string& p) -> std::optional<std::string> {
          std::error_code ec;
          if (!std::filesystem::is_regular_file(p, ec)) return std::nullopt;
          return read_text_file(p);
        }));
  }
  Trace& t = *r.loaded.trace;
  const auto nodes = static_cast<NodeId>(t.nodes.size());

  // Topology.
  Topology topo = Topology::hypercube(0);
  if (!opt.topology.empty()) {
    topo = parse_topology_spec(opt.topology);
  } else if (!default_topology.is_null()) {
    topo = parse_topology(default_topology, opt.machine, "/default_topology");
    if (topo.size() != nodes && !(imported && topo.size() > nodes))  // spare nodes idle, below
      throw InputError("", "--topology",
                       "machine " + machine.name + "'s default topology (" + topo.describe() + ") has " +
                           std::to_string(topo.size()) + " nodes, the trace " + std::to_string(nodes) +
                           ": give --topology");
  } else if (format == "cubesim") {
    topo = t.topology;
  } else {
    // The smallest cube that holds the ranks; the spare nodes idle (issue 34: SimGrid's examples
    // run 3 ranks).
    int dim = 0;
    while ((NodeId{1} << dim) < nodes) ++dim;
    topo = Topology::hypercube(dim);
  }
  const bool mapped = !opt.map.empty() && opt.map != "identity";
  if (imported && topo.size() > nodes) {
    const NodeId spare = topo.size() - nodes;
    const std::string which =
        mapped ? "placed by --map " + opt.map + ", " + std::to_string(spare) + (spare > 1 ? " nodes" : " node")
               : "rank i on node i, node" + std::string(spare > 1 ? "s " : " ") + std::to_string(nodes) +
                     (spare > 1 ? ".." + std::to_string(topo.size() - 1) : "");
    r.ranks_note = std::to_string(nodes) + " ranks on " + topo.describe() + ": " + which +
                   (t.has_collectives() ? " spare: in the collectives only" : " idle");
    t.nodes.resize(static_cast<std::size_t>(topo.size()));
    t.header["nodes"] = topo.size();
  }
  if (format == "simgrid" && t.header.contains("skipped_lines")) {
    const ojson& k = t.header["skipped_lines"];
    r.skipped_note =
        std::to_string(k["count"].get<std::int64_t>()) +
        " line(s) replayed by no rank, as SimGrid passes over them; the first: " + k["first"].get<std::string>();
  }
  if (topo.size() != static_cast<NodeId>(t.nodes.size())) {
    std::string hint;  // hypercube:16 for 16 nodes: the papers' N is the node count, ours the dimension
    const int d = log2_exact(nodes);
    if (!opt.topology.empty() && opt.topology.rfind("hypercube:", 0) == 0 && d >= 0)
      hint = " (hypercube:n is the dimension: hypercube:" + std::to_string(d) +
             " or hypercube:nodes=" + std::to_string(nodes) + ")";
    throw InputError("", "--topology",
                     topo.describe() + " has " + std::to_string(topo.size()) + " nodes; the trace has " +
                         std::to_string(nodes) + hint);
  }
  if (imported) t.topology = topo;

  // Ranks onto nodes (--map): rank i's schedule on node node_of[i]; the nodes no rank is on
  // follow, in order (the spare nodes of a trace with collectives take part in them there).
  std::vector<NodeId> node_of = parse_rank_map(opt.map, nodes, topo);
  if (mapped) {
    r.node_of = node_of;
    r.map_kind = opt.map;
    std::vector<bool> used(static_cast<std::size_t>(topo.size()), false);
    for (NodeId v : node_of) used[static_cast<std::size_t>(v)] = true;
    for (NodeId v = 0; v < topo.size(); ++v)
      if (!used[static_cast<std::size_t>(v)]) node_of.push_back(v);
  }

  // Packet size.
  std::int64_t b = machine.packet_elements;
  if (opt.packet > 0) {
    if (opt.packet > machine.packet_elements)
      throw InputError("", "--packet",
                       "packet size " + std::to_string(opt.packet) + " exceeds the machine's B_m (" +
                           std::to_string(machine.packet_elements) + ")");
    b = opt.packet;
  } else if (t.packet_explicit) {
    b = std::min(t.packet_elements, machine.packet_elements);
  }

  r.setup.machine = std::move(machine);
  r.setup.topology = topo;
  r.setup.data_mode = false;  // the trace carries sizes, no values: the collectives' algorithms too
  r.setup.params.B = b;
  // The recorded parameters, for the prediction.
  if (t.header.contains("params") && t.header["params"].is_object()) {
    const ojson& p = t.header["params"];
    for (const ParamSpec& spec : kParams) {
      if (spec.key == "B") continue;  // the packet size in force, set above
      const std::string k(spec.key);
      if (!p.contains(k)) continue;  // not given: the default of Params
      if (auto e = param_from_json(r.setup.params, spec, p[k])) throw InputError(r.loaded.path, "/params/" + k, *e);
    }
  }
  if (t.has_collectives()) {
    Setup s = r.setup;
    s.params = Params{};
    s.params.B = b;
    r.collectives =
        std::make_shared<const CollectivePlan>(plan_collectives(t, nodes, s, node_of, opt.collectives, registry));
  } else if (!opt.collectives.empty()) {
    // Checked all the same, so that a mistyped selector is never passed over in silence.
    Trace none;
    none.nodes.resize(1);
    (void)plan_collectives(none, 1, r.setup, {0}, opt.collectives, registry);
  }
  if (mapped) remap_nodes(t, node_of, topo.size());
  return r;
}

void run_replay(ReplayResult& r, const Registry& registry, EngineObserver* observer, const RunLimits& limits) {
  const std::shared_ptr<const Trace> t = r.loaded.trace;
  try {
    // The replay's allocations are held to the memory budget as a run's are (app/runner.cpp).
    const heap::HeapBudgetScope scope;
    Engine engine(r.setup.machine, r.setup.topology, engine_options(r.setup, limits));
    engine.set_observer(observer);
    CollectiveHook hook;
    if (r.collectives) hook = collective_hook(r.collectives);
    r.stats = engine.run([t, hook](Node& n) { return replay_process(n, t, hook); });
  } catch (const heap::HeapBudgetExceeded&) {
    r.error = heap_budget_message();
    return;
  } catch (const BudgetError& e) {
    r.error = budget_message(e);
    return;
  } catch (const SimulationError& e) {
    r.error = e.what();
    return;
  }
  // The formula of the recorded algorithm on the replay machine, where it applies.
  const std::string algo = t->header.contains("algorithm") && t->header["algorithm"].is_string()
                               ? t->header["algorithm"].get<std::string>()
                               : "";
  const AlgorithmInfo* info = algo.empty() ? nullptr : registry.find(algo);
  const std::int64_t recorded_b = t->packet_elements;
  if (info == nullptr) {
    r.prediction_note = algo.empty() ? "the trace names no algorithm" : "unknown algorithm " + algo;
  } else if (!r.node_of.empty()) {
    r.prediction_note =
        "the nodes were moved by --map " + r.map_kind + ": " + algo + "'s formula describes the recorded placement";
  } else if (recorded_b != r.setup.params.B) {
    // The trace holds the messages the algorithm cut for its packet size; at another B the
    // algorithm would have sent other messages (a pipelined broadcast, packet by packet).
    r.prediction_note = "the trace was recorded at B=" + std::to_string(recorded_b) +
                        " and replays at B=" + std::to_string(r.setup.params.B) + ": " + algo +
                        "'s formula at this B describes other messages";
  } else if (r.elements_scaled) {
    r.prediction_note = "the element counts were scaled to keep the bytes (--elements bytes): " + algo +
                        "'s formula at the recorded parameters describes other messages";
  } else if (t->topology.describe() != r.setup.topology.describe()) {
    // The trace holds the messages the algorithm sent for the recorded decomposition; the formula
    // on another topology of as many nodes (a 4x4 torus replayed as 2x8) describes a run that
    // never happened (issue 39).
    r.prediction_note = "the trace was recorded on " + t->topology.describe() + " and replays on " +
                        r.setup.topology.describe() + ": " + algo + "'s formula there describes other messages";
  } else if (auto err = check_sizes(r.setup); err || (err = info->check(r.setup))) {
    r.prediction_note = algo + "'s formula does not apply here: " + err->message;
  } else {
    try {
      r.prediction = info->predict(r.setup);
      r.relation_holds = relation_holds(*r.prediction, r.stats.time);
    } catch (const std::overflow_error& e) {
      r.prediction.reset();
      r.prediction_note = algo + "'s formula overflows here: " + e.what();
    }
  }
}

ojson replay_header(const ReplayResult& r) {
  ojson h = r.loaded.trace->header;
  h["machine"] = machine_to_json(r.setup.machine);
  h["topology"] = topology_to_json(r.setup.topology);
  h["nodes"] = r.setup.topology.size();
  h["packet_elements"] = r.setup.params.B;
  h["packet_elements_explicit"] = r.setup.params.B != r.setup.machine.packet_elements;
  h["replayed_from"] = r.loaded.path;
  return h;
}

ojson replay_report(const ReplayResult& r, bool reproducible) {
  const ReportOptions opt{reproducible};
  const Trace& t = *r.loaded.trace;
  ojson j;
  j["schema"] = "cubesim.report/1";
  j["name"] = t.header.value("name", std::filesystem::path(r.loaded.path).stem().string());
  j["algorithm"] = t.header.value("algorithm", "");
  j["engine"] = "cycle";
  j["machine"] = machine_json(r.setup.machine);
  ojson rep;
  rep["trace"] = r.loaded.path;
  rep["format"] = r.loaded.format;
  rep["steps"] = t.steps();
  if (t.header.contains("machine") && t.header["machine"].contains("name"))
    rep["recorded_machine"] = t.header["machine"]["name"];
  if (t.header.contains("topology")) rep["recorded_topology"] = t.header["topology"];
  if (t.header.contains("recorded")) rep["recorded"] = t.header["recorded"];
  if (!r.elements_note.empty()) rep["elements"] = r.elements_note;
  if (!r.ranks_note.empty()) rep["ranks"] = r.ranks_note;
  if (!r.skipped_note.empty()) rep["skipped"] = r.skipped_note;
  if (!r.node_of.empty()) rep["map"] = {{"kind", r.map_kind}, {"rank_to_node", r.node_of}};
  if (r.collectives) {
    ojson sel = ojson::object();
    for (const auto& [action, algo] : r.collectives->selection)
      sel[action] = {{"algorithm", algo}, {"chosen", r.collectives->given.at(action) ? "--collectives" : "default"}};
    rep["collectives"] = {{"calls", r.collectives->runs.size()},
                          {"selection", sel},
                          {"comp_size", r.collectives->comp_size},
                          {"comp_size_charged", false},
                          {"mode", "timing: the algorithms move sized blocks, no values"}};
  }
  j["replay"] = rep;
  ojson run;
  run["point"] = ojson::object();
  run["topology"] = r.setup.topology.describe();
  run["nodes"] = r.setup.topology.size();
  run["params"] = {{"root", r.setup.params.root}, {"M", r.setup.params.M}, {"B", r.setup.params.B}};
  run["mode"] = "timing";
  if (!r.error.empty()) {
    run["error"] = r.error;
  } else {
    run["simulated"] = simulated_json(r.stats, opt);
    if (r.prediction) {
      run["predicted"] = prediction_json(*r.prediction);
      const double ratio = r.prediction->time.count() == 0 ? (r.stats.time.count() == 0 ? 1.0 : INFINITY)
                                                           : static_cast<double>(r.stats.time.count()) /
                                                                 static_cast<double>(r.prediction->time.count());
      run["ratio"] = std::isfinite(ratio) ? ojson(ratio) : ojson(nullptr);
      run["relation_holds"] = r.relation_holds;
    } else {
      run["predicted"] = nullptr;
      run["prediction_note"] = r.prediction_note;
    }
  }
  run["verified"] = nullptr;
  run["verification"] = "replay: received sizes checked against the trace";
  j["runs"] = ojson::array({run});
  return j;
}

}  // namespace cubesim::trace
