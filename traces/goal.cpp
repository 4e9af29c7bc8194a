#include "traces/goal.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>
#include <tuple>

#include "sim/input_error.hpp"
#include "sim/resources.hpp"

namespace cubesim::trace {

// ---------------------------------------------------------------- export

namespace goal_export {

/// A condition a step of a strand waits for: an operation done, or started.
struct Cond {
  std::int32_t op;
  bool started;
  bool operator==(const Cond&) const = default;
};

/// Turns one node's strands into a graph, in the order the process runs them: a strand's steps
/// in program order, a fork's children one after the other (each to its end), then the parent
/// again. Operations that become ready together then start in this order, as the process began
/// them (ti_trace.cpp, the dependency-graph replay).
class GraphWriter {
 public:
  GraphWriter(const NodeTrace& nt, const Machine& m) : nt_(nt), m_(m) {}

  std::vector<DagOp> build() {
    if (!nt_.strands.empty()) strand(0, {});
    return std::move(ops_);
  }

 private:
  std::int32_t add(TraceOp op, const std::vector<Cond>& gate) {
    DagOp d;
    d.op = op;
    for (const Cond& c : gate) (c.started ? d.after_start : d.after_done).push_back(c.op);
    ops_.push_back(std::move(d));
    return static_cast<std::int32_t>(ops_.size() - 1);
  }

  /// A local operation as the time it took on the recording machine: GOAL has only calc.
  [[nodiscard]] TraceOp timed(const TraceOp& o) const {
    TraceOp t;
    t.code = OpCode::delay;
    if (o.code == OpCode::compute)
      t.amount = (m_.t_a * o.amount + m_.t_call).count();
    else if (o.code == OpCode::copy)
      t.amount = (m_.t_copy * o.amount).count();
    else
      t.amount = o.amount;
    return t;
  }

  /// Writes strand `s` starting when `gate` holds; returns what holds when it has ended.
  std::vector<Cond> strand(int s, std::vector<Cond> gate) {
    if (static_cast<std::size_t>(s) >= nt_.strands.size()) return gate;
    for (const Step& st : nt_.strands[static_cast<std::size_t>(s)]) {
      switch (st.kind) {
        case StepKind::await: {
          // Several conditions before several operations: one zero-time join between them keeps
          // the edges linear (calc 0 completes at once and costs nothing).
          if (gate.size() > 1 && st.ops.size() > 1) gate = {{add(TraceOp{OpCode::delay, -1, 0, 0}, gate), false}};
          std::vector<Cond> next;
          for (const TraceOp& o : st.ops)
            next.push_back({add(o.code == OpCode::send || o.code == OpCode::recv ? o : timed(o), gate), false});
          gate = std::move(next);
          break;
        }
        case StepKind::start: {
          const TraceOp& o = st.ops.front();
          const std::int32_t k = add(o.code == OpCode::send || o.code == OpCode::recv ? o : timed(o), gate);
          requests_[st.id] = k;
          gate = {{k, true}};  // the strand goes on once it has started
          break;
        }
        case StepKind::wait: {
          const auto it = requests_.find(st.id);
          if (it == requests_.end()) break;
          std::erase(gate, Cond{it->second, true});  // implied by its completion
          if (std::find(gate.begin(), gate.end(), Cond{it->second, false}) == gate.end())
            gate.push_back({it->second, false});
          requests_.erase(it);
          break;
        }
        case StepKind::collective:
          throw std::logic_error("a collective step has no GOAL form (only imports hold them)");
        case StepKind::fork: {
          std::vector<Cond> ends;
          for (int c = st.first; c < st.first + st.count; ++c)
            for (const Cond& e : strand(c, gate))
              if (std::find(ends.begin(), ends.end(), e) == ends.end()) ends.push_back(e);
          gate = std::move(ends);
          break;
        }
      }
    }
    return gate;
  }

  const NodeTrace& nt_;
  const Machine& m_;
  std::vector<DagOp> ops_;
  std::map<std::int64_t, std::int32_t> requests_;
};

}  // namespace goal_export

std::string export_goal(const Trace& t, const Machine& m) {
  const auto n = static_cast<NodeId>(t.nodes.size());
  std::string out;
  out += "// GOAL schedule (LogGOPSim's text format) written by cubesim --trace goal";
  if (t.header.contains("name") && t.header["name"].is_string()) out += ": " + t.header["name"].get<std::string>();
  out += "\n// " + t.header.value("algorithm", std::string("")) + " on " + m.name + ", " + t.topology.describe() +
         "; replay it with: cubesim replay FILE.goal --machine MACHINE" +
         (t.packet_explicit ? " --packet " + std::to_string(t.packet_elements) : std::string()) + "\n";
  out += "// calc times are the recording machine's compute, copy and delay times in picoseconds:\n";
  out += "// cubesim: calc in ps\n";
  out += "num_ranks " + std::to_string(n) + "\n";
  for (NodeId r = 0; r < n; ++r) {
    const std::vector<DagOp> ops = goal_export::GraphWriter(t.nodes[static_cast<std::size_t>(r)], m).build();
    out += "\nrank " + std::to_string(r) + " {\n";
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const TraceOp& o = ops[i].op;
      const std::string label = "l" + std::to_string(i + 1);
      out += label + ": ";
      if (o.code == OpCode::send || o.code == OpCode::recv) {
        const std::int64_t bytes = std::max<std::int64_t>(o.amount, 0) * m.element_bytes;
        out += (o.code == OpCode::send ? "send " : "recv ") + std::to_string(bytes) +
               (o.code == OpCode::send ? "b to " : "b from ") + std::to_string(o.peer) + " tag " +
               std::to_string(o.tag) + "\n";
      } else {
        out += "calc " + std::to_string(o.amount) + "\n";
      }
      for (std::int32_t d : ops[i].after_done) out += label + " requires l" + std::to_string(d + 1) + "\n";
      for (std::int32_t d : ops[i].after_start) out += label + " irequires l" + std::to_string(d + 1) + "\n";
    }
    out += "}\n";
  }
  return out;
}

// ---------------------------------------------------------------- import

namespace goal_import {

constexpr std::int64_t kGoalMaxBytes = std::int64_t{1} << 40;  // one message, as the SimGrid import
constexpr std::int64_t kGoalMaxTag = 2147483647;
constexpr std::int64_t kGoalMaxCalcNs = 1'000'000'000'000'000;  // 10^6 s, as a SimGrid sleep

/// The words of a line, with ':', '{' and '}' words of their own.
std::vector<std::string> tokens(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  const auto flush = [&] {
    if (!cur.empty()) out.push_back(std::move(cur));
    cur.clear();
  };
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\r') {
      flush();
    } else if (c == ':' || c == '{' || c == '}') {
      flush();
      out.emplace_back(1, c);
    } else {
      cur += c;
    }
  }
  flush();
  return out;
}

bool is_label(const std::string& s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

/// The lines of `text` without comments (// to the end of the line, /* ... */ across lines).
std::vector<std::string> strip_comments(const std::string& text, std::vector<std::string>* comments) {
  std::vector<std::string> lines(1);
  bool block = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      lines.emplace_back();
      continue;
    }
    if (block) {
      if (c == '*' && i + 1 < text.size() && text[i + 1] == '/') {
        block = false;
        ++i;
      }
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      const std::size_t end = text.find('\n', i);
      // Only cubesim's own directives ("// cubesim: ...") are kept, with their line.
      const std::string body = text.substr(i + 2, (end == std::string::npos ? text.size() : end) - i - 2);
      if (comments != nullptr && body.find_first_not_of(" \t") != std::string::npos &&
          body.compare(body.find_first_not_of(" \t"), 7, "cubesim") == 0)
        comments->push_back(std::to_string(lines.size()) + "\t" + body);
      i = (end == std::string::npos ? text.size() : end) - 1;
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      block = true;
      ++i;
      continue;
    }
    lines.back() += c;
  }
  return lines;
}

struct Dep {
  std::string from, to;
  bool started;  ///< irequires
  std::size_t line;
};

struct Message {
  NodeId src, dst;
  int tag;
};

}  // namespace goal_import

using namespace goal_import;

bool looks_goal(const std::string& head) {
  for (const std::string& ln : strip_comments(head, nullptr)) {
    const auto t = tokens(ln);
    if (t.empty()) continue;
    return t[0] == "num_ranks";
  }
  return false;
}

Trace import_goal(const std::string& text, const std::string& path, int element_bytes) {
  // A file cut inside a line: its last line has no newline. A whole schedule ends with one after
  // the last rank's "}" (a cut between lines leaves a block open or a rank without its block).
  if (!text.empty() && text.back() != '\n') {
    const std::size_t at = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
    const std::vector<std::string> last = strip_comments(text.substr(at), nullptr);
    if (!tokens(last.front()).empty())
      throw InputError(path, "byte " + std::to_string(text.size()),
                       "the file ends inside line " + std::to_string(std::count(text.begin(), text.end(), '\n') + 1) +
                           ", with no newline (truncated? a whole GOAL schedule ends with a newline after the last "
                           "rank's \"}\")");
  }
  std::vector<std::string> comments;
  const std::vector<std::string> lines = strip_comments(text, &comments);
  std::int64_t calc_ps = 1000;  // LogGOPSim's time unit: the nanosecond
  std::string calc_unit = "ns";
  std::int64_t num_ranks = -1;
  std::size_t num_ranks_line = 0;
  for (const std::string& c : comments) {
    const std::size_t tab = c.find('\t');
    const std::size_t line = std::stoul(c.substr(0, tab));
    const auto w = tokens(c.substr(tab + 1));
    if (w.size() < 2 || w[0] != "cubesim" || w[1] != ":") continue;
    if (w.size() != 5 || w[2] != "calc" || w[3] != "in" || (w[4] != "ns" && w[4] != "ps"))
      throw InputError(path, "line " + std::to_string(line),
                       "a cubesim directive reads \"// cubesim: calc in ns\" or \"// cubesim: calc in ps\"");
    calc_unit = w[4];
    calc_ps = w[4] == "ps" ? 1 : 1000;
  }

  std::map<NodeId, std::vector<DagOp>> ranks;
  std::map<NodeId, std::size_t> block_line;
  std::int64_t annotations = 0;
  // Messages by (sender, receiver, tag): the sizes sent and received, with a line of each.
  std::map<std::tuple<NodeId, NodeId, int>, std::multiset<std::int64_t>> sent, received;
  std::map<std::tuple<NodeId, NodeId, int, std::int64_t>, std::size_t> recv_line, send_line;

  NodeId rank = -1;  // the open block
  std::map<std::string, std::int32_t> labels;
  std::map<std::string, std::size_t> label_line;
  std::vector<Dep> deps;

  const auto close_block = [&](std::size_t line) {
    std::vector<DagOp>& ops = ranks[rank];
    for (const Dep& d : deps) {
      const auto fail = [&](const std::string& m) { throw InputError(path, "line " + std::to_string(d.line), m); };
      const auto a = labels.find(d.from);
      const auto b = labels.find(d.to);
      const std::string what = d.from + (d.started ? " irequires " : " requires ") + d.to;
      if (a == labels.end()) fail(what + ": rank " + std::to_string(rank) + " has no operation labelled " + d.from);
      if (b == labels.end()) fail(what + ": rank " + std::to_string(rank) + " has no operation labelled " + d.to);
      DagOp& op = ops[static_cast<std::size_t>(a->second)];
      (d.started ? op.after_start : op.after_done).push_back(b->second);
    }
    // A cycle never starts: refused, naming a dependency on it (Kahn's order leaves it over).
    std::vector<std::int32_t> need(ops.size());
    std::vector<std::vector<std::int32_t>> dependents(ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      need[i] = static_cast<std::int32_t>(ops[i].after_done.size() + ops[i].after_start.size());
      for (std::int32_t d : ops[i].after_done)
        dependents[static_cast<std::size_t>(d)].push_back(static_cast<std::int32_t>(i));
      for (std::int32_t d : ops[i].after_start)
        dependents[static_cast<std::size_t>(d)].push_back(static_cast<std::int32_t>(i));
    }
    std::vector<std::int32_t> ready;
    for (std::size_t i = 0; i < ops.size(); ++i)
      if (need[i] == 0) ready.push_back(static_cast<std::int32_t>(i));
    std::size_t seen = 0;
    while (!ready.empty()) {
      const std::int32_t k = ready.back();
      ready.pop_back();
      ++seen;
      for (std::int32_t d : dependents[static_cast<std::size_t>(k)])
        if (--need[static_cast<std::size_t>(d)] == 0) ready.push_back(d);
    }
    if (seen != ops.size()) {
      std::vector<std::string> name(ops.size());
      for (const auto& [l, i] : labels) name[static_cast<std::size_t>(i)] = l;
      // Walk back from an operation left over along dependencies left over until one repeats.
      std::size_t k = 0;
      while (need[k] == 0) ++k;
      std::vector<std::size_t> walk;
      std::vector<int> at(ops.size(), -1);
      while (at[k] < 0) {
        at[k] = static_cast<int>(walk.size());
        walk.push_back(k);
        bool found = false;
        for (const auto* list : {&ops[k].after_done, &ops[k].after_start})
          for (std::int32_t d : *list)
            if (!found && need[static_cast<std::size_t>(d)] > 0) {
              k = static_cast<std::size_t>(d);
              found = true;
            }
      }
      std::string cycle = name[k];
      std::size_t first_line = 0;
      for (std::size_t j = static_cast<std::size_t>(at[k]); j < walk.size(); ++j) {
        const std::size_t to = j + 1 < walk.size() ? walk[j + 1] : k;
        cycle += " needs " + name[to];
        for (const Dep& d : deps)
          if (d.from == name[walk[j]] && d.to == name[to] && (first_line == 0 || d.line < first_line))
            first_line = d.line;
      }
      throw InputError(path, "line " + std::to_string(first_line != 0 ? first_line : line),
                       "dependency cycle in rank " + std::to_string(rank) + ": " + cycle +
                           " (requires or irequires): no operation of it could ever start");
    }
    labels.clear();
    label_line.clear();
    deps.clear();
    rank = -1;
  };

  for (std::size_t li = 0; li < lines.size(); ++li) {
    const std::size_t line = li + 1;
    const auto fail = [&](const std::string& m) { throw InputError(path, "line " + std::to_string(line), m); };
    std::vector<std::string> w = tokens(lines[li]);
    if (w.empty()) continue;
    // A number: digits only, at most `hi`.
    const auto number = [&](const std::string& s, const std::string& what, std::int64_t hi) {
      if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
        fail(what + " must be a non-negative integer, got \"" + s + "\"");
      std::int64_t v = 0;
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc{} || v > hi) fail(what + " " + s + " is beyond " + std::to_string(hi));
      return v;
    };
    if (w[0] == "num_ranks") {
      if (num_ranks >= 0) fail("a second num_ranks line (the first is line " + std::to_string(num_ranks_line) + ")");
      if (w.size() != 2) fail("expected \"num_ranks N\"");
      num_ranks = number(w[1], "num_ranks", Topology::kMaxNodes);
      if (num_ranks < 1) fail("num_ranks must be at least 1");
      num_ranks_line = line;
      continue;
    }
    if (w[0] == "rank") {
      if (rank >= 0)
        fail("rank block inside rank " + std::to_string(rank) + "'s block (opened at line " +
             std::to_string(block_line[rank]) + "): a \"}\" is missing");
      if (num_ranks < 0) fail("a rank block before the num_ranks line");
      if (w.size() < 3 || w[2] != "{" || (w.size() == 4 && w[3] != "}") || w.size() > 4) fail("expected \"rank R {\"");
      const std::int64_t r = number(w[1], "rank", Topology::kMaxNodes);
      if (r >= num_ranks)
        fail("rank " + w[1] + " is outside num_ranks " + std::to_string(num_ranks) + " (ranks 0.." +
             std::to_string(num_ranks - 1) + ")");
      if (block_line.count(static_cast<NodeId>(r)) != 0)
        fail("rank " + w[1] + " has a block already, at line " + std::to_string(block_line[static_cast<NodeId>(r)]));
      rank = static_cast<NodeId>(r);
      block_line[rank] = line;
      ranks[rank];
      if (w.size() == 4) close_block(line);
      continue;
    }
    if (w[0] == "}") {
      if (rank < 0) fail("\"}\" without a rank block open");
      if (w.size() != 1) fail("unexpected \"" + w[1] + "\" after \"}\"");
      close_block(line);
      continue;
    }
    if (rank < 0) {
      if (num_ranks < 0) fail("not a GOAL schedule: expected \"num_ranks N\" first, got \"" + w[0] + "\"");
      fail("\"" + w[0] + "\" outside a rank block (expected \"rank R {\")");
    }
    // A dependency: LABEL requires|irequires LABEL.
    if (w.size() >= 2 && (w[1] == "requires" || w[1] == "irequires")) {
      if (!is_label(w[0])) fail("\"" + w[0] + "\" is not a label (a letter, then letters, digits or _)");
      if (w.size() < 3) fail(w[1] + ": missing the label it depends on");
      if (w.size() > 3) fail("unexpected \"" + w[3] + "\" after the dependency");
      if (!is_label(w[2])) fail("\"" + w[2] + "\" is not a label (a letter, then letters, digits or _)");
      deps.push_back({w[0], w[2], w[1] == "irequires", line});
      continue;
    }
    // An operation: [LABEL :] send|recv|calc ...
    std::string label;
    std::size_t p = 0;
    if (w[0] == ":") fail("missing label before \":\"");
    if (w.size() >= 2 && w[1] == ":") {
      if (!is_label(w[0])) fail("\"" + w[0] + "\" is not a label (a letter, then letters, digits or _)");
      label = w[0];
      p = 2;
      if (labels.count(label) != 0)
        fail("label " + label + " is defined already, at line " + std::to_string(label_line[label]));
      if (p == w.size()) fail("missing an operation after \"" + label + ":\" (send, recv or calc)");
    }
    const std::string op = w[p++];
    DagOp d;
    d.line = line;
    const auto next = [&](const char* what) -> const std::string& {
      if (p >= w.size()) fail(op + ": missing " + what);
      return w[p++];
    };
    if (op == "send" || op == "recv") {
      // SIZE b (the b may stand apart), to|from PEER, then tag, cpu, nic in this order.
      std::string size = next("the size (like 64b)");
      if (size.size() > 1 && size.back() == 'b') {
        size.pop_back();
      } else if (p < w.size() && w[p] == "b") {
        ++p;
      } else {
        fail(op + ": the size must be in bytes, like 64b, got \"" + size + "\"");
      }
      const std::int64_t bytes = number(size, op + ": size", kGoalMaxBytes);
      const std::string dir = next(op == "send" ? "\"to\"" : "\"from\"");
      if (dir != (op == "send" ? "to" : "from"))
        fail(op + ": expected \"" + (op == "send" ? "to" : "from") + "\", got \"" + dir + "\"");
      const std::string& peer_s = next("the peer rank");
      if (peer_s == "-1") fail("recv from -1 (any source) is not supported: cubesim matches a receive to one sender");
      const std::int64_t peer = number(peer_s, op + ": peer rank", Topology::kMaxNodes);
      if (peer >= num_ranks)
        fail(op + ": rank " + peer_s + " is outside num_ranks " + std::to_string(num_ranks) + " (ranks 0.." +
             std::to_string(num_ranks - 1) + ")");
      std::int64_t tag = 0;
      int stage = 0;  // tag, cpu, nic: each at most once, in this order
      while (p < w.size()) {
        const std::string key = w[p++];
        const int at = key == "tag" ? 1 : key == "cpu" ? 2 : key == "nic" ? 3 : 0;
        if (at == 0 || at <= stage)
          fail(op + ": unexpected \"" + key + "\" (after the peer: tag T, cpu C, nic N, in this order)");
        stage = at;
        const std::string& v = next(key == "tag" ? "the tag" : "a number");
        if (at == 1) {
          if (v == "-1") fail("tag -1 (any tag) is not supported: cubesim matches a receive to one tag");
          tag = number(v, op + ": tag", kGoalMaxTag);
        } else {
          (void)number(v, op + ": " + key, 255);
          ++annotations;
        }
      }
      d.op.code = op == "send" ? OpCode::send : OpCode::recv;
      d.op.peer = static_cast<NodeId>(peer);
      d.op.tag = static_cast<int>(tag);
      // Bytes to elements, rounded up; a receive takes what its message holds (sizes are
      // checked per sender, receiver and tag below).
      d.op.amount = op == "send" ? (bytes + element_bytes - 1) / element_bytes : -1;
      const auto key = op == "send" ? std::make_tuple(rank, static_cast<NodeId>(peer), static_cast<int>(tag))
                                    : std::make_tuple(static_cast<NodeId>(peer), rank, static_cast<int>(tag));
      (op == "send" ? sent : received)[key].insert(bytes);
      auto& lines_of = op == "send" ? send_line : recv_line;
      lines_of.emplace(std::make_tuple(std::get<0>(key), std::get<1>(key), std::get<2>(key), bytes), line);
    } else if (op == "calc") {
      const std::string& n = next("the time (calc N)");
      const std::int64_t v = number(n, "calc", calc_ps == 1 ? kGoalMaxCalcNs * 1000 : kGoalMaxCalcNs);
      if (p < w.size()) {
        if (w[p] != "cpu" || p + 2 != w.size()) fail("calc: unexpected \"" + w[p] + "\" (calc N [cpu C])");
        (void)number(w[p + 1], "calc: cpu", 255);
        ++annotations;
      }
      d.op.code = OpCode::delay;
      d.op.amount = v * calc_ps;
    } else {
      fail("unknown operation \"" + op +
           "\" (GOAL has send, recv and calc; dependencies: A requires B, A irequires B)");
    }
    if (!label.empty()) {
      labels[label] = static_cast<std::int32_t>(ranks[rank].size());
      label_line[label] = line;
    }
    ranks[rank].push_back(std::move(d));
  }
  const std::size_t end_line = lines.size() - (text.ends_with('\n') ? 1 : 0);  // the last line
  if (rank >= 0)
    throw InputError(path, "line " + std::to_string(end_line),
                     "the file ends inside rank " + std::to_string(rank) + "'s block, opened at line " +
                         std::to_string(block_line[rank]) + ", with no \"}\" (truncated?)");
  if (num_ranks < 0) throw InputError(path, "line 1", "no num_ranks line: not a GOAL schedule");
  for (NodeId r = 0; r < num_ranks; ++r)
    if (ranks.count(r) == 0)
      throw InputError(path, "line " + std::to_string(num_ranks_line),
                       "num_ranks " + std::to_string(num_ranks) + ", but rank " + std::to_string(r) +
                           " has no block (truncated? an idle rank is written \"rank " + std::to_string(r) + " { }\")");
  // Every message received as sent: per sender, receiver and tag, the same sizes.
  for (const auto& [k, sizes] : received) {
    const auto s = sent.find(k);
    for (std::int64_t b : sizes) {
      if (s != sent.end() && sizes.count(b) <= s->second.count(b)) continue;
      const auto& [src, dst, tag] = k;
      std::string have;
      if (s != sent.end())
        for (std::int64_t x : std::set<std::int64_t>(s->second.begin(), s->second.end()))
          have += (have.empty() ? "" : ", ") + std::to_string(x) + "b";
      throw InputError(path, "line " + std::to_string(recv_line.at({src, dst, tag, b})),
                       "rank " + std::to_string(dst) + " receives " + std::to_string(sizes.count(b)) +
                           " message(s) of " + std::to_string(b) + "b from rank " + std::to_string(src) + " with tag " +
                           std::to_string(tag) + ", rank " + std::to_string(src) + " sends " +
                           std::to_string(s == sent.end() ? 0 : s->second.count(b)) + " such" +
                           (have.empty() ? "" : " (sizes it sends there: " + have + ")"));
    }
  }
  for (const auto& [k, sizes] : sent) {
    const auto r = received.find(k);
    for (std::int64_t b : sizes) {
      if (r != received.end() && sizes.count(b) <= r->second.count(b)) continue;
      const auto& [src, dst, tag] = k;
      throw InputError(path, "line " + std::to_string(send_line.at({src, dst, tag, b})),
                       "rank " + std::to_string(src) + " sends " + std::to_string(sizes.count(b)) + " message(s) of " +
                           std::to_string(b) + "b to rank " + std::to_string(dst) + " with tag " + std::to_string(tag) +
                           ", rank " + std::to_string(dst) + " receives " +
                           std::to_string(r == received.end() ? 0 : r->second.count(b)) + " such");
    }
  }
  if (const std::string why =
          memory_refusal(run_memory_floor(num_ranks, 0) + num_ranks * static_cast<std::int64_t>(sizeof(NodeTrace)),
                         "replaying " + std::to_string(num_ranks) + " ranks");
      !why.empty())
    throw InputError(path, "line " + std::to_string(num_ranks_line), why);

  Trace t;
  t.nodes.resize(static_cast<std::size_t>(num_ranks));
  for (auto& [r, ops] : ranks) t.nodes[static_cast<std::size_t>(r)].dag = std::move(ops);
  t.header = {{"schema", kSchema},
              {"generator", "GOAL schedule (imported)"},
              {"source", path},
              {"nodes", num_ranks},
              {"calc_unit", calc_unit}};
  if (annotations > 0) t.header["ignored_annotations"] = annotations;
  return t;
}

}  // namespace cubesim::trace
