#pragma once
/// The timed trace for people: Chrome trace-event JSON, viewable in Perfetto (ui.perfetto.dev) or
/// chrome://tracing (docs/traces.md).
///
/// One process track per node ("node 5"), with one thread track for its processor ("cpu":
/// compute, copy and delay slices), one per outgoing port ("port 2 -> node 7": a slice per
/// packet transmission, with the message, packet index and elements in its args) and one per
/// incoming port that delivered a message ("port 2 <- node 7": a "recv" slice per message, the
/// last packet's last hop). Each message is a flow arrow (id = the message id) from the middle of
/// its first packet's slice at the source to the middle of its "recv" slice at the destination.
///
/// Large runs: `nodes` keeps only the tracks of a range of nodes (a message with either end
/// outside it keeps its slices inside and gets no arrow), and `max_events` stops recording (and
/// says so in the file's metadata and on stderr) at the first event that does not fit; a recv
/// slice and its arrow's two ends are written together or not at all, so no arrow is cut.
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
  [[nodiscard]] std::int64_t flows() const { return flows_; }

  /// A node's thread ids: 0 its processor, 1 + p its outgoing port p, kInTrack + p the recv
  /// slices of the messages that arrived on its port p.
  static constexpr int kInTrack = 1000;

 private:
  bool want(NodeId n) const { return n >= opt_.first_node && (opt_.last_node < 0 || n <= opt_.last_node); }
  bool room(std::int64_t events = 1);
  bool slice(NodeId pid, int tid, const char* name, Time start, Time end, const std::string& args);
  void flow(char ph, std::uint64_t id, NodeId pid, int tid, Time ts);

  const Topology& topology_;
  ChromeOptions opt_;
  std::string events_;
  std::int64_t kept_ = 0, dropped_ = 0, flows_ = 0;
  bool full_ = false;  ///< an event did not fit: nothing more is recorded
  std::set<std::pair<NodeId, int>> tracks_;
  struct MsgInfo {
    NodeId src = 0, dst = 0;
    int tag = 0;
    std::int64_t elements = 0;
    std::int64_t packets = 0;  ///< packets seen arriving at dst
    // The first packet's slice at the source, where the arrow starts (kept: it is in the file).
    int first_tid = 0;
    Time first_start, first_end;
    bool first_kept = false;
    // The last packet's last hop, which the recv slice at dst spans.
    NodeId last_from = -1;
    int last_in_port = 0;
    Time last_start, last_end;
  };
  std::unordered_map<std::uint64_t, MsgInfo> messages_;
};

}  // namespace cubesim::trace
