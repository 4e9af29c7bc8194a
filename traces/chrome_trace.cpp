#include "traces/chrome_trace.hpp"

#include <cstdio>

namespace cubesim::trace {

namespace {
/// Microseconds with picosecond resolution (Chrome's "ts" unit is the microsecond).
std::string us(Time t) {
  char buf[40];
  const std::int64_t ps = t.count();
  std::snprintf(buf, sizeof buf, "%lld.%06lld", static_cast<long long>(ps / 1000000),
                static_cast<long long>(ps % 1000000));
  return buf;
}

Time middle(Time a, Time b) { return a + Time::ps((b - a).count() / 2); }
}  // namespace

ChromeRecorder::ChromeRecorder(const Topology& topology, ChromeOptions opt) : topology_(topology), opt_(opt) {}

bool ChromeRecorder::room(std::int64_t events) {
  // Once one event does not fit, none after it does either: the file is the run up to a
  // moment, not a sample of it.
  if (!full_ && kept_ + events <= opt_.max_events) return true;
  full_ = true;
  dropped_ += events;
  return false;
}

bool ChromeRecorder::slice(NodeId pid, int tid, const char* name, Time start, Time end, const std::string& args) {
  if (!room()) return false;
  ++kept_;
  tracks_.emplace(pid, tid);
  events_ += ",\n{\"ph\":\"X\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"name\":\"" +
             name + "\",\"ts\":" + us(start) + ",\"dur\":" + us(end - start) + ",\"args\":{" + args + "}}";
  return true;
}

void ChromeRecorder::flow(char ph, std::uint64_t id, NodeId pid, int tid, Time ts) {
  ++kept_;
  events_ += ",\n{\"ph\":\"";
  events_ += ph;
  events_ += ph == 'f' ? "\",\"bp\":\"e" : "";
  events_ += "\",\"id\":" + std::to_string(id) + ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
             ",\"name\":\"message\",\"cat\":\"message\",\"ts\":" + us(ts) + "}";
}

void ChromeRecorder::on_message(std::uint64_t id, NodeId src, NodeId dst, int tag, std::int64_t elements, Time) {
  if (src == dst) return;  // a message to itself crosses no link: nothing to draw
  if (!want(src) && !want(dst)) return;
  MsgInfo m;
  m.src = src;
  m.dst = dst;
  m.tag = tag;
  m.elements = elements;
  messages_[id] = m;
}

void ChromeRecorder::on_transmission(const Transmission& t) {
  auto it = messages_.find(t.message);
  MsgInfo* m = it == messages_.end() ? nullptr : &it->second;
  if (m != nullptr && t.to == m->dst) {  // a packet's last hop: the latest one is the recv slice
    ++m->packets;
    m->last_from = t.from;
    m->last_in_port = topology_.reverse_port(t.from, t.port);
    m->last_start = t.start;
    m->last_end = t.end;
  }
  if (!want(t.from)) return;
  const int tid = 1 + t.port;
  std::string args = "\"message\":" + std::to_string(t.message) + ",\"packet\":" + std::to_string(t.packet) +
                     ",\"elements\":" + std::to_string(t.elements) + ",\"to\":" + std::to_string(t.to);
  if (m != nullptr)
    args += ",\"src\":" + std::to_string(m->src) + ",\"dst\":" + std::to_string(m->dst) +
            ",\"tag\":" + std::to_string(m->tag);
  if (t.first_of_message) args += ",\"message_startup\":true";
  if (!slice(t.from, tid, t.first_of_message ? "packet (first)" : "packet", t.start, t.end, args)) return;
  if (m != nullptr && !m->first_kept && t.from == m->src && t.packet == 0) {
    m->first_kept = true;
    m->first_tid = tid;
    m->first_start = t.start;
    m->first_end = t.end;
  }
}

void ChromeRecorder::on_delivered(std::uint64_t id, NodeId dst, Time t) {
  auto it = messages_.find(id);
  if (it == messages_.end()) return;
  const MsgInfo m = it->second;
  messages_.erase(it);
  if (!want(dst) || m.last_from < 0) return;  // outside the range, or crossed no link we saw
  // The arrow joins the middles of its two slices: a viewer binds a flow event to the slice
  // that encloses its ts on its own track (Perfetto, catapult; "bp":"e" for the end), and a
  // slice boundary shared with the slice before would be ambiguous (catapult picks the earlier).
  const bool outside = !want(m.src);
  const bool arrow = m.first_kept && !outside;
  if (!room(arrow ? 3 : 1)) return;  // the recv slice and both ends of its arrow, or nothing
  const int tid = kInTrack + m.last_in_port;
  std::string args = "\"message\":" + std::to_string(id) + ",\"src\":" + std::to_string(m.src) +
                     ",\"dst\":" + std::to_string(m.dst) + ",\"tag\":" + std::to_string(m.tag) +
                     ",\"elements\":" + std::to_string(m.elements) + ",\"packets\":" + std::to_string(m.packets) +
                     ",\"from\":" + std::to_string(m.last_from) + ",\"delivered_us\":" + us(t);
  if (outside) args += ",\"arrow\":\"none: the source is outside --trace-nodes\"";
  slice(m.dst, tid, "recv", m.last_start, m.last_end, args);
  if (!arrow) return;
  ++flows_;
  flow('s', id, m.src, m.first_tid, middle(m.first_start, m.first_end));
  flow('f', id, m.dst, tid, middle(m.last_start, m.last_end));
}

void ChromeRecorder::on_activity(NodeId node, ActivityKind kind, std::int64_t amount, Time start, Time end) {
  if (!want(node)) return;
  const char* name = kind == ActivityKind::compute ? "compute" : kind == ActivityKind::copy ? "copy" : "delay";
  const char* unit = kind == ActivityKind::compute ? "flops" : kind == ActivityKind::copy ? "elements" : "ps";
  slice(node, 0, name, start, end, "\"" + std::string(unit) + "\":" + std::to_string(amount));
}

std::string ChromeRecorder::json(const std::string& meta_json) const {
  std::string out = "{\"displayTimeUnit\":\"ns\",\"otherData\":" + meta_json + ",\"traceEvents\":[\n";
  // Metadata first: names and order of the tracks.
  out +=
      "{\"ph\":\"M\",\"pid\":0,\"tid\":0,\"name\":\"trace_info\",\"args\":{\"kept_events\":" + std::to_string(kept_) +
      ",\"dropped_events\":" + std::to_string(dropped_) + ",\"flows\":" + std::to_string(flows_) + "}}";
  NodeId last = -1;
  for (const auto& [pid, tid] : tracks_) {
    if (pid != last) {
      out += ",\n{\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
             ",\"name\":\"process_name\",\"args\":{\"name\":\"node " + std::to_string(pid) + "\"}}";
      out += ",\n{\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
             ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":" + std::to_string(pid) + "}}";
      last = pid;
    }
    std::string tname;
    if (tid == 0)
      tname = "cpu";
    else if (tid >= kInTrack)
      tname = "port " + std::to_string(tid - kInTrack) + " <- node " +
              std::to_string(topology_.neighbor(pid, tid - kInTrack));
    else
      tname = "port " + std::to_string(tid - 1) + " -> node " + std::to_string(topology_.neighbor(pid, tid - 1));
    out += ",\n{\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
           ",\"name\":\"thread_name\",\"args\":{\"name\":\"" + tname + "\"}}";
    out += ",\n{\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
           ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" + std::to_string(tid) + "}}";
  }
  out += events_;
  out += "\n]}\n";
  return out;
}

}  // namespace cubesim::trace
