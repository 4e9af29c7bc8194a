#pragma once
/// `cubesim replay`: re-times a recorded trace on a machine model (docs/traces.md).
///
/// The machine: a preset name, a machine JSON file, or "recorded" (the machine in a native
/// trace's header; the default). The topology: --topology when given; else the machine's default
/// topology when it has one (it must have as many nodes as the trace); else the trace's own
/// (a SimGrid trace of 2^n ranks: the n-cube). The packet size: --packet when given; else the
/// recorded B if the recording chose it (capped at the new B_m), else the new machine's B_m.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "app/collectives.hpp"
#include "app/runner.hpp"
#include "sim/engine.hpp"
#include "traces/ti_trace.hpp"

namespace cubesim::trace {

struct ReplayOptions {
  std::string machine = "recorded";
  std::string topology;         ///< "hypercube:6", "mesh:8x8", "torus:4x4x4"; empty: see above
  std::int64_t packet = 0;      ///< 0: see above
  std::string format = "auto";  ///< auto | cubesim | simgrid | goal
  /// A cubesim trace replayed on a machine whose element_bytes differ from the recorded one's:
  /// "keep" (default) the element counts (the algorithm's M on the new machine: messages change
  /// size in bytes), or "bytes": the byte counts (counts scaled, rounded up). Either way the
  /// report and the text say which (docs/traces.md).
  std::string elements = "keep";
  /// Which algorithm runs each collective of a SimGrid trace: "bcast=broadcast.nesbt,..."; empty:
  /// the machine's defaults (app/collectives.hpp, docs/traces.md "Collectives").
  std::string collectives;
  /// Rank (or recorded node) i onto node map(i): "" or identity, gray, random[:SEED], or a file
  /// of one node number per line (docs/traces.md, "Ranks onto nodes").
  std::string map;
};

struct LoadedTrace {
  std::shared_ptr<Trace> trace;
  std::string format;  ///< "cubesim", "simgrid" or "goal"
  std::string path;
};

struct ReplayResult {
  LoadedTrace loaded;
  Setup setup;  ///< machine, topology, packet size (params.B) of the replay
  RunStats stats;
  std::optional<Prediction> prediction;  ///< when the trace names a known algorithm that fits
  std::string prediction_note;           ///< why there is none
  bool relation_holds = false;
  std::string error;             ///< the replay failed (a process error or deadlock)
  std::string elements_note;     ///< how elements were read when the machines' element_bytes differ
  bool elements_scaled = false;  ///< --elements bytes changed the counts: no formula describes them
  std::string ranks_note;        ///< a SimGrid trace whose ranks fill no cube: the spare nodes
  std::string skipped_note;      ///< lines of a SimGrid trace that no rank replays (as in SimGrid)
  std::shared_ptr<const CollectivePlan> collectives;  ///< the trace's collectives, when it has any
  std::vector<NodeId> node_of;                        ///< --map: rank i on node node_of[i]; empty: identity
  std::string map_kind;                               ///< --map as given ("gray", "random:7", a file)
};

/// Parses "hypercube:n" (dimension n, 2^n nodes), "hypercube:dim=n", "hypercube:nodes=N",
/// "mesh:AxB[xC]" or "torus:AxB[xC]". Throws InputError.
Topology parse_topology_spec(const std::string& spec);

/// Loads a trace in either format and resolves the machine, the topology, the placement of ranks
/// (--map) and the algorithms of its collectives. Throws InputError.
ReplayResult prepare_replay(const std::string& path, const ReplayOptions& opt, const Registry& registry);

/// The nodes of `ranks` ranks on `topo` by --map `spec` (identity, gray, random[:SEED], FILE):
/// rank i on node result[i], distinct nodes. Throws InputError ("--map: ..." or "FILE: line L: ...").
std::vector<NodeId> parse_rank_map(const std::string& spec, NodeId ranks, const Topology& topo);
/// Runs it; `observer` (optional) sees the replay. Simulation failures, a spent budget among
/// them, land in `error`.
void run_replay(ReplayResult& r, const Registry& registry, EngineObserver* observer, const RunLimits& limits = {});
/// The header of a trace recorded during the replay: the original's, with the replay's machine,
/// topology and packet size.
ojson replay_header(const ReplayResult& r);
/// The report ("cubesim.report/1" with a "replay" section).
ojson replay_report(const ReplayResult& r, bool reproducible);

}  // namespace cubesim::trace
