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
}  // namespace

ChromeRecorder::ChromeRecorder(const Topology& topology, ChromeOptions opt) : topology_(topology), opt_(opt) {}

bool ChromeRecorder::room() {
  if (kept_ < opt_.max_events) return true;
  ++dropped_;
  return false;
}

void ChromeRecorder::slice(NodeId pid, int tid, const char* name, Time start, Time end, const std::string& args) {
  if (!room()) return;
  ++kept_;
  tracks_.emplace(pid, tid);
  events_ += ",\n{\"ph\":\"X\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"name\":\"" +
             name + "\",\"ts\":" + us(start) + ",\"dur\":" + us(end - start) + ",\"args\":{" + args + "}}";
}

void ChromeRecorder::on_message(std::uint64_t id, NodeId src, NodeId dst, int tag, std::int64_t elements, Time) {
  if (src == dst) return;  // a message to itself crosses no link: nothing to draw
  if (!want(src) && !want(dst)) return;
  messages_[id] = MsgInfo{src, dst, tag, elements, -1, 0, Time{}, false};
}

void ChromeRecorder::on_transmission(const Transmission& t) {
  if (!want(t.from)) return;
  auto it = messages_.find(t.message);
  const int tid = 1 + t.port;
  std::string args = "\"message\":" + std::to_string(t.message) + ",\"packet\":" + std::to_string(t.packet) +
                     ",\"elements\":" + std::to_string(t.elements) + ",\"to\":" + std::to_string(t.to);
  if (it != messages_.end())
    args += ",\"src\":" + std::to_string(it->second.src) + ",\"dst\":" + std::to_string(it->second.dst) +
            ",\"tag\":" + std::to_string(it->second.tag);
  if (t.first_of_message) args += ",\"message_startup\":true";
  const std::int64_t before = kept_;
  slice(t.from, tid, t.first_of_message ? "packet (first)" : "packet", t.start, t.end, args);
  if (kept_ == before || it == messages_.end()) return;
  MsgInfo& m = it->second;
  if (!m.flow_started && t.from == m.src && t.packet == 0 && room()) {
    ++kept_;
    m.flow_started = true;
    events_ += ",\n{\"ph\":\"s\",\"id\":" + std::to_string(t.message) + ",\"pid\":" + std::to_string(t.from) +
               ",\"tid\":" + std::to_string(tid) + ",\"name\":\"message\",\"cat\":\"message\",\"ts\":" + us(t.start) +
               "}";
  }
  if (t.to == m.dst) {
    m.last_pid = t.from;
    m.last_tid = tid;
    m.last_start = t.start;
  }
}

void ChromeRecorder::on_delivered(std::uint64_t id, NodeId, Time) {
  auto it = messages_.find(id);
  if (it == messages_.end()) return;
  const MsgInfo& m = it->second;
  if (m.flow_started && m.last_pid >= 0 && room()) {
    ++kept_;
    events_ += ",\n{\"ph\":\"f\",\"bp\":\"e\",\"id\":" + std::to_string(id) + ",\"pid\":" + std::to_string(m.last_pid) +
               ",\"tid\":" + std::to_string(m.last_tid) +
               ",\"name\":\"message\",\"cat\":\"message\",\"ts\":" + us(m.last_start) + "}";
  }
  messages_.erase(it);
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
      ",\"dropped_events\":" + std::to_string(dropped_) + "}}";
  NodeId last = -1;
  for (const auto& [pid, tid] : tracks_) {
    if (pid != last) {
      out += ",\n{\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
             ",\"name\":\"process_name\",\"args\":{\"name\":\"node " + std::to_string(pid) + "\"}}";
      out += ",\n{\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
             ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":" + std::to_string(pid) + "}}";
      last = pid;
    }
    std::string tname =
        tid == 0 ? "cpu"
                 : "port " + std::to_string(tid - 1) + " -> node " + std::to_string(topology_.neighbor(pid, tid - 1));
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
