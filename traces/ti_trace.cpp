#include "traces/ti_trace.hpp"

#include <algorithm>
#include <charconv>
#include <coroutine>
#include <exception>
#include <map>
#include <stdexcept>
#include <utility>

#include "machines/json_text.hpp"
#include "machines/topology_json.hpp"
#include "sim/input_error.hpp"
#include "sim/resources.hpp"

namespace cubesim::trace {

std::int64_t Trace::steps() const {
  std::int64_t n = 0;
  for (const NodeTrace& nt : nodes)
    for (const auto& s : nt.strands) n += static_cast<std::int64_t>(s.size());
  for (const NodeTrace& nt : nodes) n += static_cast<std::int64_t>(nt.dag.size());
  return n;
}

bool Trace::has_dag() const {
  return std::any_of(nodes.begin(), nodes.end(), [](const NodeTrace& nt) { return !nt.dag.empty(); });
}

bool Trace::has_collectives() const {
  return std::any_of(nodes.begin(), nodes.end(), [](const NodeTrace& nt) { return !nt.collectives.empty(); });
}

void remap_nodes(Trace& t, const std::vector<NodeId>& node_of, NodeId size) {
  const auto rename = [&](TraceOp& o) {
    if ((o.code == OpCode::send || o.code == OpCode::recv) && o.peer >= 0 &&
        static_cast<std::size_t>(o.peer) < node_of.size())
      o.peer = node_of[static_cast<std::size_t>(o.peer)];
  };
  std::vector<NodeTrace> moved(static_cast<std::size_t>(size));
  for (std::size_t i = 0; i < t.nodes.size() && i < node_of.size(); ++i) {
    NodeTrace nt = std::move(t.nodes[i]);
    for (auto& strand : nt.strands)
      for (Step& st : strand)
        for (TraceOp& o : st.ops) rename(o);
    for (DagOp& d : nt.dag) rename(d.op);
    moved[static_cast<std::size_t>(node_of[i])] = std::move(nt);
  }
  t.nodes = std::move(moved);
}

bool Trace::has_forks() const {
  for (const NodeTrace& nt : nodes)
    for (const auto& s : nt.strands)
      for (const Step& st : s)
        if (st.kind == StepKind::fork) return true;
  return false;
}

// ---------------------------------------------------------------- recording

Recorder::Recorder(NodeId nodes) : nodes_(static_cast<std::size_t>(nodes)) {}

std::vector<Step>& Recorder::steps(NodeId node, int strand) {
  auto& strands = nodes_[static_cast<std::size_t>(node)].strands;
  if (strands.size() <= static_cast<std::size_t>(strand)) strands.resize(static_cast<std::size_t>(strand) + 1);
  return strands[static_cast<std::size_t>(strand)];
}

TraceOp Recorder::convert(detail::OpState& op, NodeId node, int strand, std::size_t step, std::size_t index) {
  TraceOp t;
  switch (op.kind) {
    case detail::OpKind::send:
      t.code = OpCode::send;
      t.peer = op.peer;
      t.amount = op.buffer.size();
      t.tag = op.tag;
      break;
    case detail::OpKind::recv:
      t.code = OpCode::recv;
      t.peer = op.peer;
      t.amount = -1;  // filled in when the receive matches a message
      t.tag = op.tag;
      slots_[&op] = Slot{node, strand, step, index};
      break;
    case detail::OpKind::compute:
      t.code = OpCode::compute;
      t.amount = op.amount;
      break;
    case detail::OpKind::copy:
      t.code = OpCode::copy;
      t.amount = op.amount;
      break;
    case detail::OpKind::delay:
      t.code = OpCode::delay;
      t.amount = op.duration().count();
      break;
  }
  return t;
}

void Recorder::on_await(NodeId node, int strand, std::span<detail::OpState* const> ops) {
  auto& s = steps(node, strand);
  const std::size_t at = s.size();
  s.push_back(Step{});
  Step& st = s.back();
  st.kind = StepKind::await;
  st.ops.reserve(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) st.ops.push_back(convert(*ops[i], node, strand, at, i));
}

void Recorder::on_recv_matched(detail::OpState& op, std::int64_t elements) {
  const auto it = slots_.find(&op);
  if (it == slots_.end()) return;
  const Slot sl = it->second;
  slots_.erase(it);
  nodes_[static_cast<std::size_t>(sl.node)].strands[static_cast<std::size_t>(sl.strand)][sl.step].ops[sl.index].amount =
      elements;
}

void Recorder::on_fork(NodeId node, int parent, int first, int count) {
  Step st;
  st.kind = StepKind::fork;
  st.first = first;
  st.count = count;
  steps(node, parent).push_back(std::move(st));
  steps(node, first + count - 1);  // children exist even when they await nothing
}

void Recorder::on_start(NodeId node, int strand, std::int64_t id, detail::OpState& op) {
  auto& s = steps(node, strand);
  const std::size_t at = s.size();
  s.push_back(Step{});
  s.back().kind = StepKind::start;
  s.back().id = id;
  s.back().ops.push_back(convert(op, node, strand, at, 0));
}

void Recorder::on_wait(NodeId node, int strand, std::int64_t id) {
  Step st;
  st.kind = StepKind::wait;
  st.id = id;
  steps(node, strand).push_back(std::move(st));
}

void ObserverFan::on_await(NodeId n, int s, std::span<detail::OpState* const> ops) {
  for (auto* o : list_) o->on_await(n, s, ops);
}
void ObserverFan::on_recv_matched(detail::OpState& op, std::int64_t e) {
  for (auto* o : list_) o->on_recv_matched(op, e);
}
void ObserverFan::on_fork(NodeId n, int p, int f, int c) {
  for (auto* o : list_) o->on_fork(n, p, f, c);
}
void ObserverFan::on_start(NodeId n, int s, std::int64_t id, detail::OpState& op) {
  for (auto* o : list_) o->on_start(n, s, id, op);
}
void ObserverFan::on_wait(NodeId n, int s, std::int64_t id) {
  for (auto* o : list_) o->on_wait(n, s, id);
}
void ObserverFan::on_message(std::uint64_t id, NodeId src, NodeId dst, int tag, std::int64_t e, Time t) {
  for (auto* o : list_) o->on_message(id, src, dst, tag, e, t);
}
void ObserverFan::on_transmission(const Transmission& t) {
  for (auto* o : list_) o->on_transmission(t);
}
void ObserverFan::on_delivered(std::uint64_t id, NodeId dst, Time t) {
  for (auto* o : list_) o->on_delivered(id, dst, t);
}
void ObserverFan::on_activity(NodeId n, ActivityKind k, std::int64_t a, Time s, Time e) {
  for (auto* o : list_) o->on_activity(n, k, a, s, e);
}

// ---------------------------------------------------------------- text format

const char* op_name(OpCode c) {
  switch (c) {
    case OpCode::send:
      return "send";
    case OpCode::recv:
      return "recv";
    case OpCode::compute:
      return "compute";
    case OpCode::copy:
      return "copy";
    case OpCode::delay:
      return "delay";
  }
  return "?";
}

namespace {

void append_op(std::string& out, const TraceOp& o) {
  out += op_name(o.code);
  if (o.code == OpCode::send || o.code == OpCode::recv) {
    out += ' ';
    out += std::to_string(o.peer);
    out += ' ';
    out += std::to_string(o.amount);
    out += ' ';
    out += std::to_string(o.tag);
  } else {
    out += ' ';
    out += std::to_string(o.amount);
  }
}

}  // namespace

std::string write_text(const Trace& t) {
  std::string out = kSchema;
  out += ' ';
  if (t.header.contains("schema")) {
    ojson h = t.header;
    h["schema"] = kSchema;
    out += h.dump();
  } else {
    out += t.header.dump();
  }
  out += '\n';
  for (std::size_t n = 0; n < t.nodes.size(); ++n) {
    const auto& strands = t.nodes[n].strands;
    for (std::size_t s = 0; s < strands.size(); ++s) {
      const std::string prefix = std::to_string(n) + " " + std::to_string(s) + " ";
      for (const Step& st : strands[s]) {
        out += prefix;
        switch (st.kind) {
          case StepKind::await:
            for (std::size_t i = 0; i < st.ops.size(); ++i) {
              if (i > 0) out += " & ";
              append_op(out, st.ops[i]);
            }
            break;
          case StepKind::fork:
            out += "fork " + std::to_string(st.first) + " " + std::to_string(st.count);
            break;
          case StepKind::start:
            out += "start " + std::to_string(st.id) + " ";
            append_op(out, st.ops.front());
            break;
          case StepKind::wait:
            out += "wait " + std::to_string(st.id);
            break;
          case StepKind::collective:  // imports only; a replay records the algorithm's messages
            throw std::logic_error("a collective step has no native text form");
        }
        out += '\n';
      }
    }
  }
  // Last, the end line: a file cut anywhere lacks it or its newline (docs/traces.md).
  out += "end " + std::to_string(t.steps()) + " " + std::to_string(out.size()) + "\n";
  return out;
}

namespace {

constexpr std::string_view kFamily = "cubesim.trace/";  // every version's first bytes

}  // namespace

bool looks_native(const std::string& text) {
  return text.starts_with(kFamily) || (!text.empty() && kFamily.starts_with(text));
}

namespace {

struct LineParser {
  const std::string& file;
  std::size_t line;
  std::vector<std::string_view> tok;
  std::size_t pos = 0;

  [[noreturn]] void fail(const std::string& msg) const { throw InputError(file, "line " + std::to_string(line), msg); }

  std::int64_t integer(const char* what, std::int64_t lo, std::int64_t hi) {
    if (pos >= tok.size()) fail(std::string("missing ") + what);
    const std::string_view s = tok[pos++];
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || p != s.data() + s.size())
      fail(std::string(what) + " must be an integer, got \"" + std::string(s) + "\"");
    if (v < lo || v > hi)
      fail(std::string(what) + " " + std::to_string(v) + " is outside " + std::to_string(lo) + ".." +
           std::to_string(hi));
    return v;
  }

  TraceOp op(NodeId nodes) {
    if (pos >= tok.size()) fail("missing an operation");
    const std::string_view name = tok[pos++];
    TraceOp o;
    constexpr std::int64_t big = std::int64_t{1} << 50;
    if (name == "send" || name == "recv") {
      o.code = name == "send" ? OpCode::send : OpCode::recv;
      o.peer = static_cast<NodeId>(integer(name == "send" ? "destination node" : "source node", 0, nodes - 1));
      o.amount = integer("elements", o.code == OpCode::recv ? -1 : 0, big);  // recv -1: size unchecked
      o.tag = static_cast<int>(integer("tag", 0, 1 << 30));
    } else if (name == "compute") {
      o.code = OpCode::compute;
      o.amount = integer("flops", 0, big);
    } else if (name == "copy") {
      o.code = OpCode::copy;
      o.amount = integer("elements", 0, big);
    } else if (name == "delay") {
      o.code = OpCode::delay;
      o.amount = integer("picoseconds", 0, std::int64_t{1} << 62);
    } else {
      fail("unknown operation \"" + std::string(name) +
           "\" (known: send, recv, compute, copy, delay, fork, start, wait)");
    }
    return o;
  }
};

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t' && s[j] != '\r') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

/// The step lines of `text` after its first line: those that are neither blank nor comments
/// (read_text makes one step of each, or refuses it).
std::int64_t count_step_lines(std::string_view text) {
  std::int64_t n = 0;
  std::size_t start = text.find('\n');
  if (start == std::string_view::npos) return 0;
  for (++start; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const auto tok = split(text.substr(start, end - start));
    if (!tok.empty() && tok[0].front() != '#') ++n;
    start = end + 1;
  }
  return n;
}

std::string lines_word(std::size_t n) { return n == 1 ? "line" : "lines"; }

struct Whole {
  std::size_t body = 0;    ///< the bytes before the end line
  std::int64_t steps = 0;  ///< the steps the end line counts
};

/// Checks that `text` is a whole cubesim.trace/2 file before any of it is read: a file cut at
/// any byte is refused naming the byte where it ends, whatever the cut left (docs/traces.md).
Whole check_whole(const std::string& text, const std::string& file) {
  const auto lines_before = [&](std::size_t at) {
    return static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
  };
  const auto early = [&](const std::string& how) {
    throw InputError(file, "byte " + std::to_string(text.size()),
                     "the trace ends early" + how +
                         " (truncated? a run killed while writing it, or a copy cut short: a whole " + kSchema +
                         " file ends with the line \"end <steps> <bytes>\")");
  };
  if (text.empty()) early(": the file is empty");
  if (!text.starts_with(kFamily)) {
    if (kFamily.starts_with(text)) early(", inside its first line");
    throw InputError(file, "line 1",
                     std::string("not a cubesim trace: the first line must start with \"") + kSchema + "\"");
  }
  if (text.back() != '\n') {
    const std::size_t lines = lines_before(text.size());
    early(lines == 0 ? std::string(", inside its first line")
                     : ", inside line " + std::to_string(lines + 1) + ", after " + std::to_string(lines) + " whole " +
                           lines_word(lines));
  }
  if (!text.starts_with(kSchema)) {
    const std::string version = text.substr(0, text.find_first_of(" \t\r\n{"));
    if (version != kSchemaV1)
      throw InputError(file, "line 1",
                       "\"" + version + "\" is not a trace format this cubesim reads (it reads " + kSchema +
                           "): record the trace again with this cubesim");
    std::string q = "'" + file + "'";
    if (file.find('\'') != std::string::npos) q = "FILE";
    throw InputError(file, "line 1",
                     std::string("a ") + kSchemaV1 +
                         " trace has no end line, so a cut one cannot be told from a whole " +
                         "one: record it again (cubesim run CONFIG --trace cubesim --out DIR), or, if you know it is " +
                         "whole, make it a " + kSchema + " file: sed -i '1s|cubesim\\.trace/1|cubesim.trace/2|g' " + q +
                         " && echo 'end " + std::to_string(count_step_lines(text)) + " " + std::to_string(text.size()) +
                         "' >> " + q);
  }
  // The last line (the text ends with a newline).
  const std::size_t nl = text.rfind('\n', text.size() - 2);
  if (nl == std::string::npos) early(", after its header line, with no end line");
  const std::size_t at = nl + 1;
  const std::string_view last(text.data() + at, text.size() - 1 - at);
  const auto tok = split(last);
  const std::size_t line = lines_before(at) + 1;
  if (tok.empty() || tok[0] != "end") early(", after line " + std::to_string(line) + ", with no end line");
  const std::string where = "line " + std::to_string(line) + " (the end line)";
  std::int64_t v[2] = {0, 0};
  if (tok.size() != 3)
    throw InputError(file, where, "expected \"end <steps> <bytes>\", got \"" + std::string(last) + "\"");
  for (int i = 0; i < 2; ++i) {
    const std::string_view s = tok[1 + static_cast<std::size_t>(i)];
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v[i]);
    if (ec != std::errc{} || p != s.data() + s.size() || v[i] < 0)
      throw InputError(file, where, "expected \"end <steps> <bytes>\", got \"" + std::string(last) + "\"");
  }
  if (static_cast<std::uint64_t>(v[1]) != at)
    throw InputError(file, where,
                     "the end line counts " + std::to_string(v[1]) + " bytes before it, the file has " +
                         std::to_string(at) + " (cut and joined, or edited? record the trace again)");
  return Whole{at, v[0]};
}

}  // namespace

std::string with_end_line(std::string text) {
  if (!text.empty() && text.back() != '\n') text += '\n';
  const std::int64_t steps = count_step_lines(text);
  text += "end " + std::to_string(steps) + " " + std::to_string(text.size()) + "\n";
  return text;
}

Trace read_text(const std::string& text, const std::string& file) {
  const Whole whole = check_whole(text, file);
  Trace t;
  std::size_t start = 0, line = 0;
  bool have_header = false;
  NodeId nodes = 0;
  std::int64_t forked = 0;  // strands declared by forks so far
  std::int64_t steps = 0;
  while (start < whole.body) {
    std::size_t end = text.find('\n', start);  // found: the body ends with a newline
    const std::string_view ln(text.data() + start, end - start);
    start = end + 1;
    ++line;
    if (!have_header) {
      if (ln.rfind(kSchema, 0) != 0)
        throw InputError(file, "line 1",
                         std::string("not a cubesim trace: the first line must start with \"") + kSchema + "\"");
      const std::string where = "line 1";
      ojson h = parse_json(ln.substr(std::string(kSchema).size()), file, line, std::string(kSchema).size() + 1);
      if (!h.is_object()) throw InputError(file, where, "the header must be a JSON object");
      if (!h.contains("topology")) throw InputError(file, where + ": /topology", "the header names no topology");
      t.topology = parse_topology(h["topology"], file, where + ": /topology");
      if (!h.contains("packet_elements") || !h["packet_elements"].is_number_integer() ||
          h["packet_elements"].get<std::int64_t>() < 1)
        throw InputError(file, where + ": /packet_elements", "packet_elements must be an integer >= 1");
      t.packet_elements = h["packet_elements"].get<std::int64_t>();
      if (h.contains("packet_elements_explicit")) {
        if (!h["packet_elements_explicit"].is_boolean())
          throw InputError(file, where + ": /packet_elements_explicit", "must be true or false");
        t.packet_explicit = h["packet_elements_explicit"].get<bool>();
      }
      nodes = t.topology.size();
      if (h.contains("nodes") && (!h["nodes"].is_number_integer() || h["nodes"].get<std::int64_t>() != nodes))
        throw InputError(file, where + ": /nodes", "nodes does not match the topology (" + t.topology.describe() + ")");
      // A header of a few bytes can claim 2^24 nodes: what replaying them takes is checked
      // before anything is allocated for them.
      if (const std::string why =
              memory_refusal(run_memory_floor(nodes, 0) + nodes * static_cast<std::int64_t>(sizeof(NodeTrace)),
                             "replaying this trace on the " + t.topology.describe());
          !why.empty())
        throw InputError(file, where + ": /topology", why);
      t.header = std::move(h);
      t.nodes.resize(static_cast<std::size_t>(nodes));
      have_header = true;
      continue;
    }
    LineParser p{file, line, split(ln)};
    if (p.tok.empty() || p.tok[0].front() == '#') continue;
    if (p.tok[0] == "end") p.fail("an end line before the last line (two traces joined?)");
    ++steps;
    const auto node = static_cast<NodeId>(p.integer("node", 0, nodes - 1));
    const auto strand = static_cast<int>(p.integer("strand", 0, 1 << 24));
    auto& strands = t.nodes[static_cast<std::size_t>(node)].strands;
    // Strand 0 is the node's process; any other was declared by a fork above (write_text puts a
    // parent's lines before its children's). A strand number alone allocates nothing.
    if (strand == 0 && strands.empty()) strands.resize(1);
    if (static_cast<std::size_t>(strand) >= strands.size())
      p.fail("strand " + std::to_string(strand) + " of node " + std::to_string(node) +
             " was not declared by a fork above");
    Step st;
    if (p.pos >= p.tok.size()) p.fail("missing a step after node and strand");
    const std::string_view kw = p.tok[p.pos];
    if (kw == "fork") {
      ++p.pos;
      st.kind = StepKind::fork;
      st.first = static_cast<int>(p.integer("first child strand", 1, 1 << 24));
      st.count = static_cast<int>(p.integer("child count", 1, 1 << 20));
      if (st.first <= strand) p.fail("a fork's children must have higher strand numbers than their parent");
      // Every strand costs memory: a trace may declare no more of them than it has bytes.
      forked += st.count;
      if (forked > static_cast<std::int64_t>(text.size()))
        p.fail("the forks declare " + std::to_string(forked) + " strands, more than the trace's " +
               std::to_string(text.size()) + " bytes could describe");
      if (strands.size() < static_cast<std::size_t>(st.first + st.count))
        strands.resize(static_cast<std::size_t>(st.first + st.count));
    } else if (kw == "start") {
      ++p.pos;
      st.kind = StepKind::start;
      st.id = p.integer("request id", 1, std::int64_t{1} << 50);
      st.ops.push_back(p.op(nodes));
    } else if (kw == "wait") {
      ++p.pos;
      st.kind = StepKind::wait;
      st.id = p.integer("request id", 1, std::int64_t{1} << 50);
    } else {
      st.kind = StepKind::await;
      for (;;) {
        st.ops.push_back(p.op(nodes));
        if (p.pos == p.tok.size()) break;
        if (p.tok[p.pos] != "&")
          p.fail("expected \"&\" between operations awaited together, got \"" + std::string(p.tok[p.pos]) + "\"");
        ++p.pos;
      }
    }
    if (p.pos != p.tok.size()) p.fail("unexpected \"" + std::string(p.tok[p.pos]) + "\" at the end of the line");
    strands[static_cast<std::size_t>(strand)].push_back(std::move(st));
  }
  if (!have_header) throw InputError(file, "line 1", "empty file: not a cubesim trace");
  if (steps != whole.steps)
    throw InputError(file, "line " + std::to_string(line + 1) + " (the end line)",
                     "the end line counts " + std::to_string(whole.steps) + " steps, the trace has " +
                         std::to_string(steps) + " (edited? record the trace again)");
  return t;
}

// ---------------------------------------------------------------- replay

namespace {

/// The engine's tag of a trace message: the trace's own, or -1 - tag beside collectives (apart).
int wire_tag(int tag, bool apart) { return apart ? -1 - tag : tag; }

Op make_op(Node& self, const TraceOp& o, bool apart = false) {
  switch (o.code) {
    case OpCode::send:
      return self.send_to(o.peer, Buffer::sized(o.amount), wire_tag(o.tag, apart));
    case OpCode::recv:
      return self.recv_from(o.peer, wire_tag(o.tag, apart));
    case OpCode::compute:
      return self.compute(o.amount);
    case OpCode::copy:
      return self.copy(o.amount);
    case OpCode::delay:
      return self.delay(Time::ps(o.amount));
  }
  throw std::logic_error("unknown trace operation");
}

void check_received(const Node& self, const TraceOp& o, const Buffer& b) {
  if (o.code != OpCode::recv || o.amount < 0 || b.size() == o.amount) return;
  throw std::runtime_error("trace replay: node " + std::to_string(self.id()) + " received " + std::to_string(b.size()) +
                           " elements from node " + std::to_string(o.peer) + " (tag " + std::to_string(o.tag) +
                           ") where the trace recorded " + std::to_string(o.amount));
}

struct NodeReplay {
  const NodeTrace* trace;
  std::map<std::int64_t, std::pair<Request, TraceOp>> requests;
  const CollectiveHook* collective = nullptr;
  bool apart = false;  ///< point-to-point tags moved apart from the collectives' (wire_tag)
};

Task<> run_strand(Node& self, NodeReplay& r, int strand) {
  const auto& strands = r.trace->strands;
  if (static_cast<std::size_t>(strand) >= strands.size()) co_return;
  for (const Step& st : strands[static_cast<std::size_t>(strand)]) {
    switch (st.kind) {
      case StepKind::await: {
        if (st.ops.size() == 1) {
          Buffer b = co_await make_op(self, st.ops.front(), r.apart);
          check_received(self, st.ops.front(), b);
        } else {
          std::vector<Op> ops;
          ops.reserve(st.ops.size());
          for (const TraceOp& o : st.ops) ops.push_back(make_op(self, o, r.apart));
          co_await all_of(ops);
          for (std::size_t i = 0; i < ops.size(); ++i) check_received(self, st.ops[i], ops[i].take());
        }
        break;
      }
      case StepKind::fork: {
        std::vector<Task<>> kids;
        kids.reserve(static_cast<std::size_t>(st.count));
        for (int c = 0; c < st.count; ++c) kids.push_back(run_strand(self, r, st.first + c));
        co_await all_of(std::move(kids));
        break;
      }
      case StepKind::start: {
        if (r.requests.count(st.id) != 0)
          throw std::runtime_error("trace replay: node " + std::to_string(self.id()) + " starts request " +
                                   std::to_string(st.id) + " twice");
        r.requests.emplace(st.id, std::make_pair(self.start(make_op(self, st.ops.front(), r.apart)), st.ops.front()));
        break;
      }
      case StepKind::collective: {
        if (r.collective == nullptr || !*r.collective)
          throw std::runtime_error("trace replay: node " + std::to_string(self.id()) +
                                   " calls a collective, and the replay runs no collectives");
        co_await (*r.collective)(self, st.id);
        break;
      }
      case StepKind::wait: {
        auto it = r.requests.find(st.id);
        if (it == r.requests.end())
          throw std::runtime_error("trace replay: node " + std::to_string(self.id()) + " waits for request " +
                                   std::to_string(st.id) + ", which was never started");
        Buffer b = co_await it->second.first;
        check_received(self, it->second.second, b);
        r.requests.erase(it);
        break;
      }
    }
  }
}

// A node's dependency graph (NodeTrace::dag, a GOAL schedule). Each operation starts, as a
// request, the moment its dependencies hold; a small coroutine awaits each one that does not
// complete at once, and when it completes, the operations waiting for it start from there. The
// order is that of a process running the same work: what one event makes ready starts in index
// order, depth first (what an operation that completed at once makes ready starts before the
// next one in the list), so that a schedule written from a recorded trace (traces/goal.cpp)
// begins the same operations in the same order, at the same times, as the recorded process did.
// An explicit stack, not recursion: a chain of a million operations that complete at once is a
// loop here.
struct DagRun;

/// Awaits one started operation (resumed by the engine when it completes), then lets the graph
/// go on. Started eagerly; its frame frees itself at the end.
struct DagWaiter {
  struct promise_type {
    DagRun* run;
    std::size_t slot = 0;
    bool resumed = false;  ///< resumed by the engine: nothing of the graph is on the stack below
    promise_type(DagRun& r, std::int32_t /*op*/, Request& /*req*/);
    DagWaiter get_return_object() { return {}; }
    std::suspend_never initial_suspend() noexcept { return {}; }
    struct Final {
      bool await_ready() noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) noexcept;
      void await_resume() noexcept {}
    };
    Final final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept;
  };
};

struct DagRun {
  Node& self;
  const std::vector<DagOp>& ops;
  std::vector<std::vector<std::int32_t>> on_done, on_start;  ///< dependents of each operation
  std::vector<std::int32_t> need_done, need_start;           ///< dependencies not yet met
  std::vector<std::int32_t> stack;                           ///< ready to start, next on top
  std::vector<std::coroutine_handle<>> waiters;              ///< live DagWaiter frames, by slot
  std::vector<std::size_t> free_slots;
  std::int64_t live = 0;
  std::coroutine_handle<> parent;  ///< the process, once it waits for the last operation
  std::exception_ptr error;

  DagRun(Node& n, const std::vector<DagOp>& o) : self(n), ops(o), on_done(o.size()), on_start(o.size()) {
    need_done.reserve(o.size());
    need_start.reserve(o.size());
    for (std::size_t i = 0; i < o.size(); ++i) {
      need_done.push_back(static_cast<std::int32_t>(o[i].after_done.size()));
      need_start.push_back(static_cast<std::int32_t>(o[i].after_start.size()));
      for (std::int32_t d : o[i].after_done)
        on_done[static_cast<std::size_t>(d)].push_back(static_cast<std::int32_t>(i));
      for (std::int32_t d : o[i].after_start)
        on_start[static_cast<std::size_t>(d)].push_back(static_cast<std::int32_t>(i));
    }
  }
  DagRun(const DagRun&) = delete;
  DagRun& operator=(const DagRun&) = delete;
  ~DagRun() {
    // Only a failed run (an error, a deadlock) leaves operations waiting: free their frames.
    for (std::coroutine_handle<> h : waiters)
      if (h) h.destroy();
  }

  /// Pushes the dependents in `list` whose dependencies now all hold (`done`: one completed;
  /// else one started), so that the lowest index is on top.
  void release(const std::vector<std::int32_t>& list, bool done) {
    const std::size_t at = stack.size();
    for (std::int32_t k : list) {
      auto& need = done ? need_done : need_start;
      if (--need[static_cast<std::size_t>(k)] == 0 && need_done[static_cast<std::size_t>(k)] == 0 &&
          need_start[static_cast<std::size_t>(k)] == 0)
        stack.push_back(k);
    }
    std::reverse(stack.begin() + static_cast<std::ptrdiff_t>(at), stack.end());
  }

  /// Starts what is ready, and what that makes ready, until nothing is.
  void drain();

  void fail(std::exception_ptr e) {
    if (!error) error = std::move(e);
  }
};

DagWaiter await_dag_op(DagRun& r, std::int32_t op, Request& req);

void DagRun::drain() {
  while (!stack.empty()) {
    const std::int32_t i = stack.back();
    stack.pop_back();
    const auto at = static_cast<std::size_t>(i);
    Request req = self.start(make_op(self, ops[at].op));
    if (req.done()) {  // at once (a message already in, a zero-time operation): no waiting
      (void)req.await_ready();
      check_received(self, ops[at].op, req.await_resume());
      release(on_done[at], true);
    } else {
      await_dag_op(*this, i, req);
      if (error) std::rethrow_exception(error);
    }
    release(on_start[at], false);  // pushed last, started first: what waited for it to start
  }
}

DagWaiter::promise_type::promise_type(DagRun& r, std::int32_t /*op*/, Request& /*req*/) : run(&r) {
  if (r.free_slots.empty()) {
    slot = r.waiters.size();
    r.waiters.emplace_back();
  } else {
    slot = r.free_slots.back();
    r.free_slots.pop_back();
  }
  r.waiters[slot] = std::coroutine_handle<promise_type>::from_promise(*this);
  ++r.live;
}

void DagWaiter::promise_type::unhandled_exception() noexcept { run->fail(std::current_exception()); }

std::coroutine_handle<> DagWaiter::promise_type::Final::await_suspend(std::coroutine_handle<promise_type> h) noexcept {
  DagRun& r = *h.promise().run;
  const bool resumed = h.promise().resumed;
  r.waiters[h.promise().slot] = {};
  r.free_slots.push_back(h.promise().slot);
  --r.live;
  h.destroy();
  // The last operation done, or an error: the process goes on (only from the top of the stack,
  // where nothing of the graph runs below: the process may end and free the graph).
  if (resumed && r.parent && (r.live == 0 || r.error)) return std::exchange(r.parent, {});
  return std::noop_coroutine();
}

/// The request's await. Suspending marks the waiter as one the engine resumes; an await that
/// throws before it suspends (a spent budget) throws in the drain that started it.
struct AwaitRequest {
  Request& req;
  bool await_ready() { return req.await_ready(); }
  bool await_suspend(std::coroutine_handle<DagWaiter::promise_type> h) {
    const bool s = req.await_suspend(h);
    h.promise().resumed = s;
    return s;
  }
  Buffer await_resume() { return req.await_resume(); }
};

DagWaiter await_dag_op(DagRun& r, std::int32_t op, Request& req) {
  Request mine = std::move(req);
  try {
    const Buffer b = co_await AwaitRequest{mine};
    const auto at = static_cast<std::size_t>(op);
    check_received(r.self, r.ops[at].op, b);
    r.release(r.on_done[at], true);
    r.drain();
  } catch (...) {
    r.fail(std::current_exception());
  }
}

/// The process waits for the graph's last operation.
struct DagDone {
  DagRun& r;
  bool await_ready() const noexcept { return r.live == 0 || r.error; }
  void await_suspend(std::coroutine_handle<> h) noexcept { r.parent = h; }
  void await_resume() const {
    if (r.error) std::rethrow_exception(r.error);
  }
};

Task<> replay_dag(Node& self, const NodeTrace& nt) {
  DagRun r(self, nt.dag);
  for (std::size_t i = nt.dag.size(); i-- > 0;)
    if (nt.dag[i].after_done.empty() && nt.dag[i].after_start.empty()) r.stack.push_back(static_cast<std::int32_t>(i));
  r.drain();
  co_await DagDone{r};
}

}  // namespace

Task<> replay_process(Node& self, std::shared_ptr<const Trace> t, CollectiveHook collective) {
  if (const NodeTrace& nt = t->nodes[static_cast<std::size_t>(self.id())]; !nt.dag.empty()) {
    co_await replay_dag(self, nt);
    co_return;
  }
  NodeReplay r{&t->nodes[static_cast<std::size_t>(self.id())], {}, &collective, t->tags_apart};
  co_await run_strand(self, r, 0);
  // Requests never waited for (MPI programs may leave isends to finalize): wait here, in order.
  while (!r.requests.empty()) {
    auto it = r.requests.begin();
    Buffer b = co_await it->second.first;
    check_received(self, it->second.second, b);
    r.requests.erase(it);
  }
}

}  // namespace cubesim::trace
