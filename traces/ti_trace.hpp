#pragma once
/// Time-independent traces: the algorithm as data (docs/traces.md, "cubesim.trace/2").
///
/// A trace is, per node and per strand (the main process is strand 0; each child of an all_of of
/// Tasks is a strand of its own), the sequence of what the process awaited: one operation, or
/// several awaited together (an exchange); a fork of child strands; a non-blocking request
/// started or waited for. Operations are send (destination node, elements, tag), recv (source
/// node, elements, tag), compute (flops), copy (elements) and delay (picoseconds): exactly what
/// the engine needs to re-time the run on any machine, without the algorithm's code.
///
/// Text format, one line per step, after a header line that echoes the run:
///   cubesim.trace/2 {"algorithm": ..., "machine": {...}, "topology": {...}, ...}
///   <node> <strand> send <dst> <elements> <tag> & recv <src> <elements> <tag>
///   <node> <strand> fork <first-child-strand> <count>
///   <node> <strand> start <request-id> <operation>
///   <node> <strand> wait <request-id>
///   end <steps> <bytes>
/// Lines starting with '#' and blank lines are ignored. The end line closes the file: the steps
/// above it and the bytes before it, so that a file cut anywhere (a run killed while writing, a
/// copy that stopped) is refused, never replayed in part. cubesim.trace/1 (no end line) is refused
/// with the command that makes a whole one a cubesim.trace/2 file.
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/engine.hpp"
#include "sim/observer.hpp"

namespace cubesim::trace {

using ojson = nlohmann::ordered_json;

inline constexpr const char* kSchema = "cubesim.trace/2";
/// The format before the end line (read no more: a cut one cannot be told from a whole one).
inline constexpr const char* kSchemaV1 = "cubesim.trace/1";

enum class OpCode : std::uint8_t { send, recv, compute, copy, delay };
/// The operation's word in the text format: "send", "recv", "compute", "copy", "delay".
const char* op_name(OpCode c);

struct TraceOp {
  OpCode code = OpCode::compute;
  NodeId peer = -1;         ///< send: destination; recv: source
  std::int64_t amount = 0;  ///< elements (send, recv, copy), flops (compute), picoseconds (delay)
  int tag = 0;
  bool operator==(const TraceOp&) const = default;
};

/// collective: a collective operation of all nodes (an imported MPI collective: SimGrid TI's
/// bcast, allreduce, ...), run by the replay's CollectiveHook; id is its index among the node's
/// collectives (NodeTrace::collectives), the same index on every node.
enum class StepKind : std::uint8_t { await, fork, start, wait, collective };

struct Step {
  StepKind kind = StepKind::await;
  std::vector<TraceOp> ops;  ///< await: one or more; start: one
  std::int64_t id = 0;       ///< start, wait: the request; collective: its index
  int first = 0, count = 0;  ///< fork: the child strands
  bool operator==(const Step&) const = default;
};

/// One operation of a node's schedule given as a dependency graph (a GOAL schedule,
/// traces/goal.hpp): it starts when every operation of `after_done` has completed and every one
/// of `after_start` has started (GOAL's "requires" and "irequires"); operations whose
/// dependencies hold at the same moment start in index order. Indices are into NodeTrace::dag.
struct DagOp {
  TraceOp op;
  std::vector<std::int32_t> after_done, after_start;
  std::size_t line = 0;  ///< where the schedule defines it (messages)
  bool operator==(const DagOp&) const = default;
};

/// One rank's call of a collective operation, as its trace gives it (docs/traces.md, "Collectives").
/// The replay (app/replay.cpp) makes one operation of all ranks' k-th calls and runs the
/// algorithm selected for it on every node; traces/ knows no algorithm.
struct CollectiveCall {
  std::string action;         ///< the operation: barrier, bcast, reduce, allreduce, gather, scatter,
                              ///< allgather, alltoall, reducescatter (gatherv: gather, ...)
  std::string spelled;        ///< as the trace writes it ("allReduce", "gatherv")
  std::int64_t elements = 0;  ///< this rank's block in elements (the algorithm's M; 0 for barrier)
  std::int64_t root = -1;     ///< rooted operations: the root rank; else -1
  double comp_size = 0;       ///< reduce, allreduce, reducescatter: the flops the trace gives
  std::string file;           ///< where the trace gives it (messages)
  std::size_t line = 0;
  bool operator==(const CollectiveCall&) const = default;
};

struct NodeTrace {
  std::vector<std::vector<Step>> strands;   ///< strand id -> its steps, in program order
  std::vector<CollectiveCall> collectives;  ///< the collectives its steps call, in order
  /// A node's schedule as a dependency graph instead of strands (an imported GOAL schedule):
  /// replayed by starting each operation the moment its dependencies hold. A node has one or the
  /// other; only imports make graphs, and the native text format does not write them.
  std::vector<DagOp> dag;
  bool operator==(const NodeTrace&) const = default;
};

struct Trace {
  ojson header;  ///< schema, algorithm, params, machine, topology, packet_elements, ...
  Topology topology = Topology::hypercube(0);
  std::int64_t packet_elements = 1;
  bool packet_explicit = false;  ///< the algorithm's B was given (else the machine's B_m)
  /// The trace calls collectives: its point-to-point messages travel with tags apart from the
  /// algorithms' (replay_process).
  bool tags_apart = false;
  std::vector<NodeTrace> nodes;
  [[nodiscard]] std::int64_t steps() const;
  [[nodiscard]] bool has_forks() const;
  /// True when some node's schedule is a dependency graph (NodeTrace::dag).
  [[nodiscard]] bool has_dag() const;
  /// True when some node calls a collective (StepKind::collective).
  [[nodiscard]] bool has_collectives() const;
};

/// Moves the trace's nodes: node i's schedule runs on node `node_of[i]` (a rank-to-node map,
/// `cubesim replay --map`), the peers of its sends and receives renamed the same way. `node_of`
/// is injective into 0..size-1; the nodes no one is mapped to get empty schedules. Collective
/// roots are ranks and stay as they are (the replay maps them).
void remap_nodes(Trace& t, const std::vector<NodeId>& node_of, NodeId size);

/// Records a Trace while the engine runs (an EngineObserver). The header is filled by the caller.
class Recorder : public EngineObserver {
 public:
  explicit Recorder(NodeId nodes);
  void on_await(NodeId node, int strand, std::span<detail::OpState* const> ops) override;
  void on_recv_matched(detail::OpState& op, std::int64_t elements) override;
  void on_fork(NodeId node, int parent, int first, int count) override;
  void on_start(NodeId node, int strand, std::int64_t id, detail::OpState& op) override;
  void on_wait(NodeId node, int strand, std::int64_t id) override;
  /// The trace so far (moved out).
  std::vector<NodeTrace> take() { return std::move(nodes_); }

 private:
  std::vector<Step>& steps(NodeId node, int strand);
  TraceOp convert(detail::OpState& op, NodeId node, int strand, std::size_t step, std::size_t index);
  struct Slot {
    NodeId node;
    int strand;
    std::size_t step, index;
  };
  std::vector<NodeTrace> nodes_;
  /// Where each receive not yet matched sits in the trace (its size is filled in at the match),
  /// by the receive's state: an op in flight keeps its address (the engine's OpState carries no
  /// room for an observer's handle: it is kept small for the step forms).
  std::unordered_map<const detail::OpState*, Slot> slots_;
};

/// Forwards every hook to several observers (a native trace and a timeline at once).
class ObserverFan : public EngineObserver {
 public:
  void add(EngineObserver* o) {
    if (o != nullptr) list_.push_back(o);
  }
  [[nodiscard]] bool empty() const { return list_.empty(); }
  void on_await(NodeId n, int s, std::span<detail::OpState* const> ops) override;
  void on_recv_matched(detail::OpState& op, std::int64_t e) override;
  void on_fork(NodeId n, int p, int f, int c) override;
  void on_start(NodeId n, int s, std::int64_t id, detail::OpState& op) override;
  void on_wait(NodeId n, int s, std::int64_t id) override;
  void on_message(std::uint64_t id, NodeId src, NodeId dst, int tag, std::int64_t e, Time t) override;
  void on_transmission(const Transmission& t) override;
  void on_delivered(std::uint64_t id, NodeId dst, Time t) override;
  void on_activity(NodeId n, ActivityKind k, std::int64_t a, Time s, Time e) override;

 private:
  std::vector<EngineObserver*> list_;
};

/// Writes a trace in the native text format (deterministic: nodes, then strands, in order), the
/// end line last. The header's "schema", if any, is written as kSchema.
std::string write_text(const Trace& t);
/// Parses the native text format. Throws InputError naming the file and line, or the byte where
/// a cut file ends ("byte N: the trace ends early ...") before anything else in it is read.
Trace read_text(const std::string& text, const std::string& file);
/// True when the text starts like a native trace (any version), or is all the first bytes of one.
bool looks_native(const std::string& text);
/// `text` (a header line and step lines, each ending with a newline) with its end line appended:
/// the steps it holds (lines that are neither blank nor comments) and its bytes. For writers of
/// traces by hand and tests.
std::string with_end_line(std::string text);

/// Runs node `self`'s part of collective `index` (the replay in app/ runs the selected algorithm).
using CollectiveHook = std::function<Task<>(Node& self, std::int64_t index)>;

/// The process that replays node `self`'s part of `t`: the same awaits, forks and requests, with
/// timing-only payloads (or, for a dependency graph, each operation the moment its dependencies
/// hold). A receive that gets a size other than the recorded one is an error. A trace with
/// collectives needs `collective`; its point-to-point messages then travel with tag -1 - tag, so
/// that no algorithm's message (tags >= 0) matches a receive of the trace's, nor the reverse.
Task<> replay_process(Node& self, std::shared_ptr<const Trace> t, CollectiveHook collective = {});

}  // namespace cubesim::trace
