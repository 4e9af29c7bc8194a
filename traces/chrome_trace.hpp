#pragma once
/// The timed trace for people: Chrome trace-event JSON, viewable in Perfetto (ui.perfetto.dev) or
/// chrome://tracing (docs/traces.md).
///
/// One process track per node ("node 5"), with one thread track for its processor ("cpu":
/// compute, copy and delay slices) and one per outgoing port ("port 2 -> node 7": a slice per
/// packet transmission, with the message, packet index and elements in its args). Each message
/// is a flow arrow from its first packet at the source to its last packet's last hop.
///
/// Large runs: `nodes` keeps only the tracks of a range of nodes, and `max_events` stops
/// recording (and says so in the file's metadata and on stderr) once that many events are kept.
#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include "sim/observer.hpp"

namespace cubesim::trace {

struct ChromeOptions {
  NodeId first_node = 0;
  NodeId last_node = -1;              ///< -1: every node
  std::int64_t max_events = 2000000;  ///< about 250 MB of JSON
};

class ChromeRecorder : public EngineObserver {
 public:
  ChromeRecorder(const Topology& topology, ChromeOptions opt);
  void on_message(std::uint64_t id, NodeId src, NodeId dst, int tag, std::int64_t elements, Time t) override;
  void on_transmission(const Transmission& t) override;
  void on_delivered(std::uint64_t id, NodeId dst, Time t) override;
  void on_activity(NodeId node, ActivityKind kind, std::int64_t amount, Time start, Time end) override;

  /// The whole JSON document; `meta` lands in "otherData".
  [[nodiscard]] std::string json(const std::string& meta_json) const;
  [[nodiscard]] std::int64_t kept() const { return kept_; }
  [[nodiscard]] std::int64_t dropped() const { return dropped_; }

 private:
  bool want(NodeId n) const { return n >= opt_.first_node && (opt_.last_node < 0 || n <= opt_.last_node); }
  bool room();
  void slice(NodeId pid, int tid, const char* name, Time start, Time end, const std::string& args);

  const Topology& topology_;
  ChromeOptions opt_;
  std::string events_;
  std::int64_t kept_ = 0, dropped_ = 0;
  std::set<std::pair<NodeId, int>> tracks_;
  struct MsgInfo {
    NodeId src = 0, dst = 0;
    int tag = 0;
    std::int64_t elements = 0;
    NodeId last_pid = -1;
    int last_tid = 0;
    Time last_start;
    bool flow_started = false;
  };
  std::unordered_map<std::uint64_t, MsgInfo> messages_;
};

}  // namespace cubesim::trace
