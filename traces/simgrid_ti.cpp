#include "traces/simgrid_ti.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "sim/input_error.hpp"
#include "sim/number_format.hpp"
#include "sim/resources.hpp"
#include "sim/simgrid/platform.hpp"

namespace cubesim::trace {

namespace fs = std::filesystem;

std::string simgrid_exact_flags() {
  // CM02 with no cross-traffic and an unbounded TCP window: latency + bytes / bandwidth for one
  // uncontended transfer (shared/SIMGRID.md). Sends are detached (eager) at every size, as in
  // cubesim, where receivers buffer without limit.
  std::string flags;
  for (const std::string& f : sgplat::exact_flags()) flags += f + " ";
  return flags + "--cfg=smpi/send-is-detached-thresh:2000000000";
}

SimgridExport export_simgrid(const Trace& t, const Machine& m) {
  const NodeId n = t.topology.size();
  if (t.has_forks())
    throw InputError("", "--trace simgrid",
                     "this trace has concurrent strands (all_of of Tasks), which SimGrid TI traces cannot express");
  if (auto why = sgplat::unsupported(m, t.topology)) throw InputError("", "--trace simgrid", why->message);
  SimgridExport e{"index.txt", "platform.xml", "hostfile.txt", "", {}};
  const auto bytes = [&](std::int64_t elements) { return std::to_string(elements * m.element_bytes); };
  std::string index;
  for (NodeId r = 0; r < n; ++r) {
    const std::string R = std::to_string(r) + " ";
    std::string out = R + "init\n";
    // Outstanding requests: (src, dst, tag) of each, by id, for "wait".
    std::map<std::int64_t, std::tuple<NodeId, NodeId, int>> open;
    auto iop = [&](const TraceOp& o) -> std::tuple<NodeId, NodeId, int> {
      if (o.code == OpCode::send) {
        out += R + "isend " + std::to_string(o.peer) + " " + std::to_string(o.tag) + " " + bytes(o.amount) + "\n";
        return {r, o.peer, o.tag};
      }
      out += R + "irecv " + std::to_string(o.peer) + " " + std::to_string(o.tag) + " " +
             bytes(std::max<std::int64_t>(o.amount, 0)) + "\n";
      return {o.peer, r, o.tag};
    };
    auto timed = [&](const TraceOp& o) {
      if (o.code == OpCode::compute)
        out += R + "compute " + std::to_string(o.amount) + "\n";
      else if (o.code == OpCode::copy)
        out += R + "sleep " + exact_decimal((m.t_copy * o.amount).seconds()) + "\n";
      else
        out += R + "sleep " + exact_decimal(Time::ps(o.amount).seconds()) + "\n";
    };
    auto is_comm = [](const TraceOp& o) { return o.code == OpCode::send || o.code == OpCode::recv; };
    const auto& strands = t.nodes[static_cast<std::size_t>(r)].strands;
    if (!strands.empty()) {
      for (const Step& st : strands.front()) {
        switch (st.kind) {
          case StepKind::await:
            if (st.ops.size() == 1) {
              const TraceOp& o = st.ops.front();
              if (o.code == OpCode::send)
                out +=
                    R + "send " + std::to_string(o.peer) + " " + std::to_string(o.tag) + " " + bytes(o.amount) + "\n";
              else if (o.code == OpCode::recv)
                out += R + "recv " + std::to_string(o.peer) + " " + std::to_string(o.tag) + " " +
                       bytes(std::max<std::int64_t>(o.amount, 0)) + "\n";
              else
                timed(o);
            } else {
              // Operations awaited together: start the communications, do the local work (it
              // overlaps them), then wait for them.
              std::vector<std::tuple<NodeId, NodeId, int>> keys;
              for (const TraceOp& o : st.ops)
                if (is_comm(o)) keys.push_back(iop(o));
              for (const TraceOp& o : st.ops)
                if (!is_comm(o)) timed(o);
              if (open.empty()) {
                if (!keys.empty()) out += R + "waitall\n";
              } else {
                for (const auto& [s, d, tag] : keys)
                  out += R + "wait " + std::to_string(s) + " " + std::to_string(d) + " " + std::to_string(tag) + "\n";
              }
            }
            break;
          case StepKind::start: {
            const TraceOp& o = st.ops.front();
            if (is_comm(o))
              open[st.id] = iop(o);
            else
              timed(o);  // a started local operation: SimGrid TI has none; done in place
            break;
          }
          case StepKind::wait: {
            auto it = open.find(st.id);
            if (it != open.end()) {
              const auto& [s, d, tag] = it->second;
              out += R + "wait " + std::to_string(s) + " " + std::to_string(d) + " " + std::to_string(tag) + "\n";
              open.erase(it);
            }
            break;
          }
          case StepKind::fork:
            break;  // refused above
          case StepKind::collective:
            throw InputError("", "--trace simgrid", "this trace calls collectives, which only imports hold");
        }
      }
    }
    if (!open.empty()) out += R + "waitall\n";
    out += R + "finalize\n";  // every file ends with a newline: SimGrid drops an unterminated last line
    const std::string name = "ranks/rank-" + std::to_string(r) + ".txt";
    e.files.push_back({name, std::move(out)});
    index += name + "\n";
  }
  e.files.push_back({e.index, index});
  e.files.push_back({e.platform, sgplat::platform_xml(m, t.topology, m.tau + m.tau_msg)});
  std::string hosts;
  for (NodeId r = 0; r < n; ++r) hosts += sgplat::host_name(r) + "\n";
  e.files.push_back({e.hostfile, hosts});
  e.command = "smpirun -np " + std::to_string(n) + " -platform " + e.platform + " -hostfile " + e.hostfile +
              " -replay " + e.index + " " + simgrid_exact_flags();
  e.files.push_back({"replay.sh",
                     "#!/bin/sh\n# Replays this trace with SimGrid's own smpireplaymain (SimGrid 3.32).\ncd "
                     "\"$(dirname \"$0\")\" && " +
                         e.command + " \"$@\"\n"});
  return e;
}

// ---------------------------------------------------------------- import

namespace {

/// The ranges an imported action must keep to (docs/traces.md, "Importing SimGrid traces"): the
/// largest machine (a 24-cube), the engine's int tags, and sizes and times whose products with
/// the machine's costs stay inside the 64-bit picosecond clock.
constexpr std::int64_t kMaxRanks = Topology::kMaxNodes;
constexpr double kMaxCountBytes = 1099511627776.0;  // 2^40 bytes in one message
constexpr double kMaxTag = 2147483647.0;            // MPI tags are ints
constexpr double kMaxFlops = 1e15;                  // one compute action
constexpr double kMaxSleepSeconds = 1e6;            // one sleep (11.6 days; the clock ends at 106)

struct Action {
  std::string file;
  std::size_t line;
  std::vector<std::string> tok;
};

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> w;
  std::istringstream is(s);
  for (std::string x; is >> x;) w.push_back(x);
  return w;
}

bool is_int(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

/// Lines SimGrid's replayer passes over without replaying them: a line whose first word is no
/// rank (xbt's reader hands it to no actor), or, in a rank's own file, a line of another rank
/// ("Ignore trace element not for me"). Counted, and the first named, for the replay's report.
struct Skipped {
  std::int64_t lines = 0;
  std::string first;  ///< "file: line L: text" of the first
  void add(const std::string& path, std::size_t line, const std::string& text, const std::string& why) {
    if (lines++ == 0)
      first = path + ": line " + std::to_string(line) + ": \"" + text.substr(0, 60) + "\" (" + why + ")";
  }
};

/// Reads actions of a TI file, appending them by rank. `own` is the rank whose file this is when
/// an index lists one file per rank (SimGrid gives the i-th file to rank i), or -1 for a file
/// that all ranks share.
void read_actions(const std::string& path, const std::string& text, NodeId own,
                  std::map<NodeId, std::vector<Action>>& by_rank, Skipped& skipped) {
  // A last action without its newline: SimGrid's reader drops it (xbt ReplayReader stops at end
  // of file), and it is what a file cut inside a line looks like. Refused, naming the byte.
  if (!text.empty() && text.back() != '\n') {
    const std::size_t at = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
    const auto w = words(text.substr(at));
    if (!w.empty() && w[0][0] != '#')
      throw InputError(path, "byte " + std::to_string(text.size()),
                       "the file ends inside line " + std::to_string(std::count(text.begin(), text.end(), '\n') + 1) +
                           ", with no newline (truncated? SimGrid ignores such a last line: end the file with a "
                           "newline if it is whole)");
  }
  std::istringstream is(text);
  std::size_t line = 0;
  for (std::string ln; std::getline(is, ln);) {
    ++line;
    auto w = words(ln);
    if (w.empty() || w[0][0] == '#') continue;
    if (!is_int(w[0])) {  // an editor's line, a stray note: no actor's, as in SimGrid
      skipped.add(path, line, ln, "not \"<rank> <action> ...\"");
      continue;
    }
    if (w[0].size() > 9 || std::stoll(w[0]) >= kMaxRanks)
      throw InputError(
          path, "line " + std::to_string(line),
          "rank " + w[0] + " is beyond the largest machine cubesim models (" + std::to_string(kMaxRanks) + " nodes)");
    if (w.size() < 2) throw InputError(path, "line " + std::to_string(line), "expected \"<rank> <action> ...\"");
    const auto rank = static_cast<NodeId>(std::stoll(w[0]));
    if (own >= 0 && rank != own) {
      skipped.add(path, line, ln,
                  "rank " + std::to_string(rank) + "'s line in rank " + std::to_string(own) + "'s file");
      continue;
    }
    by_rank[rank].push_back(Action{path, line, std::move(w)});
  }
}

}  // namespace

Trace import_simgrid(const std::string& path, int element_bytes, const ReadText& read) {
  std::map<NodeId, std::vector<Action>> by_rank;
  // An index file lists paths; an action file starts with "<rank> <action>".
  const std::optional<std::string> index_text = read(path);
  if (!index_text) throw InputError(path, "", "cannot read the file");
  const std::string& text = *index_text;
  bool is_index = false;
  {
    std::istringstream is(text);
    for (std::string ln; std::getline(is, ln);) {
      auto w = words(ln);
      if (w.empty() || w[0][0] == '#') continue;
      is_index = !is_int(w[0]);
      break;
    }
  }
  Skipped skipped;
  if (is_index) {
    // The files it lists: one shared by every rank, or one a rank, the i-th rank i's.
    std::vector<std::pair<std::size_t, std::string>> files;
    std::istringstream is(text);
    std::size_t line = 0;
    for (std::string ln; std::getline(is, ln);) {
      ++line;
      auto w = words(ln);
      if (w.empty() || w[0][0] == '#') continue;
      files.emplace_back(line, w[0]);
    }
    const fs::path base = fs::path(path).parent_path();
    for (std::size_t i = 0; i < files.size(); ++i) {
      fs::path p(files[i].second);
      std::optional<std::string> actions = read(p.string());
      if (!actions && p.is_relative()) {  // relative to the index, when not to here
        p = base / p;
        actions = read(p.string());
      }
      if (!actions)
        throw InputError(path, "line " + std::to_string(files[i].first), "no such action file: " + files[i].second);
      read_actions(p.string(), *actions, files.size() > 1 ? static_cast<NodeId>(i) : NodeId{-1}, by_rank, skipped);
    }
  } else {
    read_actions(path, text, -1, by_rank, skipped);
  }
  if (by_rank.empty()) throw InputError(path, "", "no actions: not a SimGrid time-independent trace");
  const NodeId ranks = by_rank.rbegin()->first + 1;
  if (const std::string why =
          memory_refusal(run_memory_floor(ranks, 0) + ranks * static_cast<std::int64_t>(sizeof(NodeTrace)),
                         "replaying " + std::to_string(ranks) + " ranks");
      !why.empty())
    throw InputError(path, "", why);
  for (NodeId r = 0; r < ranks; ++r)
    if (by_rank.count(r) == 0)
      throw InputError(
          path, "",
          "rank " + std::to_string(r) + " has no actions (ranks 0.." + std::to_string(ranks - 1) + " expected)");

  Trace t;
  t.nodes.resize(static_cast<std::size_t>(ranks));
  t.header = {{"schema", kSchema},
              {"generator", "SimGrid time-independent trace (imported)"},
              {"source", path},
              {"nodes", ranks}};
  if (skipped.lines > 0) t.header["skipped_lines"] = {{"count", skipped.lines}, {"first", skipped.first}};
  for (const auto& [rank, actions] : by_rank) {
    auto& steps = t.nodes[static_cast<std::size_t>(rank)].strands.emplace_back();
    int dt_bytes = 1;  // SimGrid's default datatype is MPI_BYTE; "init <x>" switches it to MPI_DOUBLE
    std::int64_t next_id = 0;
    std::map<std::tuple<NodeId, NodeId, int>, std::deque<std::int64_t>> open;  // (src, dst, tag) -> ids
    std::vector<std::int64_t> order;
    for (const Action& a : actions) {
      const auto fail = [&](const std::string& msg) {
        throw InputError(a.file, "line " + std::to_string(a.line), msg);
      };
      // Any case: SimGrid 3.32 writes and reads lower case ("isend", "waitall"); older SimGrid
      // and its examples write "Isend", "Irecv", "waitAll", "allReduce".
      std::string act = a.tok[1];
      for (char& c : act) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      auto number = [&](std::size_t i, const char* what) -> double {
        if (a.tok.size() <= i) fail(act + ": missing " + what);
        try {
          std::size_t used = 0;
          const double v = std::stod(a.tok[i], &used);
          if (used != a.tok[i].size() || !std::isfinite(v) || v < 0) throw std::invalid_argument("");
          return v;
        } catch (const std::exception&) {
          fail(act + ": " + what + " must be a non-negative number, got \"" + a.tok[i] + "\"");
        }
        return 0;
      };
      auto peer = [&](std::size_t i) {
        const double v = number(i, "peer rank");
        if (v != std::floor(v) || v >= static_cast<double>(ranks))
          fail(act + ": peer rank " + a.tok[i] + " is not one of the " + std::to_string(ranks) + " ranks");
        return static_cast<NodeId>(v);
      };
      auto datatype = [&](std::size_t i) {
        if (a.tok.size() <= i) return dt_bytes;
        const std::string& d = a.tok[i];
        if (d == "6") return 1;  // MPI_BYTE
        if (d == "0") return 8;  // MPI_DOUBLE
        if (d == "1") return 4;  // MPI_INT
        fail(act + ": datatype " + d + " is not supported (6 = BYTE, 0 = DOUBLE, 1 = INT)");
        return 1;
      };
      if (act == "init") {
        if (a.tok.size() > 2) dt_bytes = 8;
      } else if (act == "finalize") {
      } else if (act == "send" || act == "isend" || act == "recv" || act == "irecv") {
        // <peer> <tag> <count> [datatype] (SimGrid 3.32), or without the tag as older traces
        // write it: <peer> <count>, and <peer> <count> <datatype> where the second number is no
        // integer (1e6); tag 0 then. Three numbers that are integers are read as SimGrid 3.32
        // reads them: <peer> <tag> <count>.
        if (a.tok.size() > 6) fail(act + ": too many arguments (expected <peer> [<tag>] <count> [datatype])");
        if (a.tok.size() < 4) fail(act + ": missing count (expected <peer> [<tag>] <count> [datatype])");
        const NodeId p = peer(2);
        const bool tagged = a.tok.size() == 6 || (a.tok.size() == 5 && is_int(a.tok[3]));
        const double tagd = tagged ? number(3, "tag") : 0;
        const std::size_t count_at = tagged ? 4 : 3;
        const double count = number(count_at, "count");
        if (count != std::floor(count) || tagd != std::floor(tagd)) fail(act + ": tag and count must be integers");
        if (tagd > kMaxTag) fail(act + ": tag " + a.tok[3] + " is beyond an MPI tag's range (0..2147483647)");
        const double bytes = count * datatype(count_at + 1);
        if (bytes > kMaxCountBytes) fail(act + ": count " + a.tok[count_at] + " is beyond 2^40 bytes in one message");
        TraceOp o;
        const bool send = act == "send" || act == "isend";
        o.code = send ? OpCode::send : OpCode::recv;
        o.peer = p;
        o.tag = static_cast<int>(tagd);
        // Bytes to elements, rounded up; a receive's count is an upper bound in MPI: unchecked.
        o.amount = send ? static_cast<std::int64_t>(std::ceil(bytes / element_bytes)) : -1;
        Step st;
        if (act[0] == 'i') {
          st.kind = StepKind::start;
          st.id = ++next_id;
          open[send ? std::make_tuple(rank, p, o.tag) : std::make_tuple(p, rank, o.tag)].push_back(st.id);
          order.push_back(st.id);
        }
        st.ops.push_back(o);
        steps.push_back(std::move(st));
      } else if (act == "wait" || act == "test") {
        if (a.tok.size() != 5) fail(act + ": expected <src> <dst> <tag>");
        const double tagd = number(4, "tag");
        if (tagd != std::floor(tagd) || tagd > kMaxTag)
          fail(act + ": tag " + a.tok[4] + " is not an MPI tag (0..2147483647)");
        const auto key = std::make_tuple(peer(2), peer(3), static_cast<int>(tagd));
        auto it = open.find(key);
        if (act == "test") {
          // MPI_Test: it never waits. SimGrid's replay tests the request and, when it is not
          // done, keeps it for a later wait; a test costs no time here (SimGrid may add its
          // smpi/test delay). A test of no open request, which SimGrid passes over, too.
          continue;
        }
        if (it == open.end() || it->second.empty())
          fail("wait: no request " + a.tok[2] + " -> " + a.tok[3] + " tag " + a.tok[4] + " is open");
        Step st;
        st.kind = StepKind::wait;
        st.id = it->second.front();
        it->second.pop_front();
        std::erase(order, st.id);
        steps.push_back(std::move(st));
      } else if (act == "waitall") {
        for (std::int64_t id : order) {
          Step st;
          st.kind = StepKind::wait;
          st.id = id;
          steps.push_back(std::move(st));
        }
        order.clear();
        open.clear();
      } else if (act == "compute") {
        Step st;
        const double flops = number(2, "flops");
        if (flops > kMaxFlops) fail("compute: " + a.tok[2] + " flops is beyond the 1e15 one action may take");
        st.ops.push_back(TraceOp{OpCode::compute, -1, static_cast<std::int64_t>(std::llround(flops)), 0});
        steps.push_back(std::move(st));
      } else if (act == "sleep") {
        Step st;
        const double seconds = number(2, "seconds");
        if (seconds > kMaxSleepSeconds) fail("sleep: " + a.tok[2] + " s is beyond the 1e6 s one action may take");
        st.ops.push_back(TraceOp{OpCode::delay, -1, static_cast<std::int64_t>(std::llround(seconds * 1e12)), 0});
        steps.push_back(std::move(st));
      } else if (act == "location" || act == "comm_size") {
        // location <file> <line>: where the call was in the source; comm_size <n>: the world's
        // size. Neither takes time in SimGrid's replay.
      } else if (act == "comm_split" || act == "comm_dup") {
        fail(act + ": communicators other than MPI_COMM_WORLD are not supported");
      } else if (act == "barrier" || act == "bcast" || act == "reduce" || act == "allreduce" || act == "gather" ||
                 act == "gatherv" || act == "scatter" || act == "scatterv" || act == "allgather" ||
                 act == "allgatherv" || act == "alltoall" || act == "alltoallv" || act == "reducescatter") {
        // A collective of MPI_COMM_WORLD, with SimGrid 3.32's arguments (docs/traces.md,
        // "Collectives"): the replay runs the algorithm selected for it. Sizes are counts of the
        // datatype; the block each rank holds (the algorithm's M) is the largest count, in bytes.
        const auto n = static_cast<std::size_t>(ranks);
        const std::string N = std::to_string(ranks);
        std::string form;
        const auto arity = [&](std::size_t least, std::size_t most) {
          if (a.tok.size() < 2 + least)
            fail(act + ": missing arguments (expected " + act + " " + form + "; " + N + " ranks)");
          if (a.tok.size() > 2 + most)
            fail(act + ": too many arguments (expected " + act + " " + form + "; " + N + " ranks)");
        };
        const auto count = [&](std::size_t i, const std::string& what) {
          const double v = number(i, what.c_str());
          if (v != std::floor(v)) fail(act + ": " + what + " must be an integer, got \"" + a.tok[i] + "\"");
          if (v > kMaxCountBytes) fail(act + ": " + what + " " + a.tok[i] + " is beyond 2^40 bytes in one message");
          return v;
        };
        const auto root_at = [&](std::size_t i) -> std::int64_t {
          if (a.tok.size() <= i) return 0;  // SimGrid's default root
          const double v = number(i, "root");
          if (v != std::floor(v) || v >= static_cast<double>(ranks))
            fail(act + ": root " + a.tok[i] + " is not one of the " + N + " ranks");
          return static_cast<std::int64_t>(v);
        };
        CollectiveCall c;
        c.spelled = a.tok[1];
        c.file = a.file;
        c.line = a.line;
        double bytes = 0;
        const auto most = [&](double v) { bytes = std::max(bytes, v); };
        if (act == "barrier") {
          form = "(no arguments)";
          arity(0, 0);
        } else if (act == "bcast") {
          form = "<size> [<root> [<datatype>]]";
          arity(1, 3);
          most(count(2, "size") * datatype(4));
          c.root = root_at(3);
        } else if (act == "reduce" || act == "allreduce") {
          form = act == "reduce" ? "<comm_size> <comp_size> [<root> [<datatype>]]"
                                 : "<comm_size> <comp_size> [<datatype>]";
          arity(2, act == "reduce" ? 4 : 3);
          most(count(2, "comm_size") * datatype(act == "reduce" ? 5 : 4));
          c.comp_size = number(3, "comp_size");
          if (act == "reduce") c.root = root_at(4);
        } else if (act == "gather" || act == "scatter") {
          form = "<send_size> <recv_size> [<root> [<send_type> <recv_type>]]";
          arity(2, 5);
          most(count(2, "send_size") * datatype(5));
          most(count(3, "recv_size") * datatype(6));
          c.root = root_at(4);
        } else if (act == "allgather" || act == "alltoall") {
          form = "<send_size> <recv_size> [<send_type> <recv_type>]";
          arity(2, 4);
          most(count(2, "send_size") * datatype(4));
          most(count(3, "recv_size") * datatype(5));
        } else if (act == "gatherv") {
          form = "<send_size> <recv_size x " + N + "> [<root> [<send_type> <recv_type>]]";
          arity(1 + n, 4 + n);
          most(count(2, "send_size") * datatype(4 + n));
          for (std::size_t i = 0; i < n; ++i) most(count(3 + i, "recv_size") * datatype(5 + n));
          c.root = root_at(3 + n);
        } else if (act == "allgatherv") {
          // SimGrid also reads displacements after the datatype: read and passed over.
          form = "<send_size> <recv_size x " + N + "> [<datatype> [<displacement x " + N + ">]]";
          arity(1 + n, 2 + 2 * n);
          for (std::size_t i = 0; i < n; ++i) most(count(3 + i, "recv_size") * datatype(3 + n));
          most(count(2, "send_size") * datatype(3 + n));
          for (std::size_t i = 4 + n; i < a.tok.size(); ++i) count(i, "displacement");
        } else if (act == "scatterv") {
          form = "<send_size x " + N + "> <recv_size> [<root> [<send_type> <recv_type>]]";
          arity(1 + n, 4 + n);
          for (std::size_t i = 0; i < n; ++i) most(count(2 + i, "send_size") * datatype(4 + n));
          most(count(2 + n, "recv_size") * datatype(5 + n));
          c.root = root_at(3 + n);
        } else if (act == "alltoallv") {
          form =
              "<send_buffer> <send_size x " + N + "> <recv_buffer> <recv_size x " + N + "> [<send_type> <recv_type>]";
          arity(2 + 2 * n, 4 + 2 * n);
          count(2, "send buffer size");
          count(3 + n, "receive buffer size");
          for (std::size_t i = 0; i < n; ++i) {
            most(count(3 + i, "send_size") * datatype(4 + 2 * n));
            most(count(4 + n + i, "recv_size") * datatype(5 + 2 * n));
          }
        } else {  // reducescatter
          form = "<recv_size x " + N + "> <comp_size> [<datatype>]";
          arity(1 + n, 2 + n);
          for (std::size_t i = 0; i < n; ++i) most(count(2 + i, "recv_size") * datatype(3 + n));
          c.comp_size = number(2 + n, "comp_size");
        }
        if (c.comp_size > kMaxFlops) fail(act + ": comp_size " + std::to_string(c.comp_size) + " is beyond 1e15 flops");
        if (bytes > kMaxCountBytes) fail(act + ": a block of " + std::to_string(bytes) + " bytes is beyond 2^40");
        c.action = act == "gatherv"      ? "gather"
                   : act == "scatterv"   ? "scatter"
                   : act == "allgatherv" ? "allgather"
                   : act == "alltoallv"  ? "alltoall"
                                         : act;
        c.elements = static_cast<std::int64_t>(std::ceil(bytes / element_bytes));
        auto& calls = t.nodes[static_cast<std::size_t>(rank)].collectives;
        Step st;
        st.kind = StepKind::collective;
        st.id = static_cast<std::int64_t>(calls.size());
        calls.push_back(std::move(c));
        steps.push_back(std::move(st));
        t.tags_apart = true;
      } else {
        fail("action \"" + a.tok[1] +
             "\" is not supported: not an action of SimGrid's replay (actions replayed: send, isend, recv, irecv, "
             "wait, test, waitall, compute, sleep, init, finalize, location, comm_size, and the collectives barrier, "
             "bcast, reduce, allreduce, gather(v), scatter(v), allgather(v), alltoall(v), reducescatter)");
      }
    }
  }
  return t;
}

}  // namespace cubesim::trace
