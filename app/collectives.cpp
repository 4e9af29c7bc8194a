#include "app/collectives.hpp"

#include <algorithm>
#include <sstream>

#include "sim/input_error.hpp"
#include "sim/suggest.hpp"

namespace cubesim::trace {

namespace {

/// The algorithm family that runs each action: "bcast" runs broadcast.*, "gather" all-to-some
/// (alltosome.* with k = n: every node sends to node 0), "barrier" an all-reduce of one element.
struct ActionFamily {
  std::string action, family, one_port, all_port;
};

const std::vector<ActionFamily>& families() {
  static const std::vector<ActionFamily> f{
      {"barrier", "allreduce", "allreduce.sbt", "allreduce.sbt"},
      {"bcast", "broadcast", "broadcast.sbt", "broadcast.nesbt"},
      {"reduce", "reduce", "reduce.sbt", "reduce.sbt"},
      {"allreduce", "allreduce", "allreduce.sbt", "allreduce.sbt"},
      {"gather", "alltosome", "alltosome.sbt", "alltosome.sbnt"},
      {"scatter", "scatter", "scatter.sbt", "scatter.sbnt"},
      {"allgather", "allgather", "allgather.sbt", "allgather.sbnt"},
      {"alltoall", "alltoall", "alltoall.sbt", "alltoall.sbnt"},
      {"reducescatter", "reduce_scatter", "reduce_scatter.sbt", "reduce_scatter.sbt"},
  };
  return f;
}

const ActionFamily& family_of(const std::string& action) {
  for (const ActionFamily& f : families())
    if (f.action == action) return f;
  throw std::logic_error("unknown collective action " + action);
}

std::vector<std::string> family_members(const Registry& reg, const std::string& family) {
  std::vector<std::string> out;
  for (const AlgorithmInfo* a : reg.all())
    if (a->name.rfind(family + ".", 0) == 0) out.push_back(a->name);
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

Task<> nothing() { co_return; }

}  // namespace

const std::vector<std::string>& collective_actions() {
  static const std::vector<std::string> a = [] {
    std::vector<std::string> v;
    for (const ActionFamily& f : families()) v.push_back(f.action);
    return v;
  }();
  return a;
}

std::map<std::string, std::string> default_collectives(const Machine& machine) {
  std::map<std::string, std::string> m;
  const bool all = machine.ports.kind == PortKind::all;
  for (const ActionFamily& f : families()) m[f.action] = all ? f.all_port : f.one_port;
  return m;
}

CollectivePlan plan_collectives(Trace& t, NodeId ranks, const Setup& setup, const std::vector<NodeId>& node_of,
                                const std::string& spec, const Registry& registry) {
  CollectivePlan plan;
  // The selector: defaults, then --collectives ACTION=ALGORITHM,...
  std::map<std::string, std::string> choice = default_collectives(setup.machine);
  std::map<std::string, bool> given;
  std::vector<std::string> names;
  for (const AlgorithmInfo* a : registry.all()) names.push_back(a->name);
  std::stringstream ss(spec);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      throw InputError("", "--collectives",
                       "expected ACTION=ALGORITHM (e.g. bcast=broadcast.nesbt), got \"" + item + "\"");
    std::string action = item.substr(0, eq);
    const std::string algo = item.substr(eq + 1);
    for (char& c : action) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (choice.count(action) == 0)
      throw InputError("", "--collectives",
                       "unknown collective \"" + action + "\"" + did_you_mean(action, collective_actions()) +
                           " (known: " + joined(collective_actions()) +
                           "; gatherv, scatterv, allgatherv and "
                           "alltoallv run the algorithm of gather, scatter, allgather and alltoall)");
    const ActionFamily& f = family_of(action);
    if (registry.find(algo) == nullptr)
      throw InputError("", "--collectives",
                       action + "=" + algo + ": unknown algorithm \"" + algo + "\"" + did_you_mean(algo, names) + " (" +
                           action + " runs " + f.family + ".*: " + joined(family_members(registry, f.family)) + ")");
    if (algo.rfind(f.family + ".", 0) != 0)
      throw InputError("", "--collectives",
                       action + "=" + algo + ": " + algo + " does not do a " + action + " (" + action + " runs " +
                           f.family + ".*: " + joined(family_members(registry, f.family)) + ")");
    choice[action] = algo;
    given[action] = true;
  }

  // The calls: rank 0's k-th collective and every other rank's k-th are one operation.
  const auto& first = t.nodes.front().collectives;
  for (NodeId r = 1; r < ranks; ++r) {
    const auto& mine = t.nodes[static_cast<std::size_t>(r)].collectives;
    for (std::size_t k = 0; k < std::min(mine.size(), first.size()); ++k)
      if (mine[k].action != first[k].action)
        throw InputError(mine[k].file, "line " + std::to_string(mine[k].line),
                         "rank " + std::to_string(r) + "'s collective #" + std::to_string(k + 1) + " is " +
                             mine[k].spelled + ", rank 0's is " + first[k].spelled + " (" + first[k].file + ": line " +
                             std::to_string(first[k].line) + "): every rank calls the same collectives in order");
    if (mine.size() != first.size()) {
      const auto& longer = mine.size() > first.size() ? mine : first;
      const CollectiveCall& extra = longer[std::min(mine.size(), first.size())];
      throw InputError(extra.file, "line " + std::to_string(extra.line),
                       "rank " + std::to_string(r) + " calls " + std::to_string(mine.size()) +
                           " collectives, rank 0 calls " + std::to_string(first.size()) +
                           ": every rank calls the same collectives in order");
    }
  }
  const int dim = setup.topology.kind() == Topology::Kind::hypercube ? setup.topology.dim() : 0;
  std::map<std::tuple<std::string, std::int64_t, std::int64_t>, std::string> checked;  // fit, once per shape
  for (std::size_t k = 0; k < first.size(); ++k) {
    const CollectiveCall& c0 = first[k];
    CollectiveRun run;
    run.action = c0.action;
    std::int64_t M = 0;
    for (NodeId r = 0; r < ranks; ++r) {
      const CollectiveCall& c = t.nodes[static_cast<std::size_t>(r)].collectives[k];
      M = std::max(M, c.elements);
      if (c.root != c0.root)
        throw InputError(c.file, "line " + std::to_string(c.line),
                         c.spelled + ": rank " + std::to_string(r) + " gives root " + std::to_string(c.root) +
                             ", rank 0 root " + std::to_string(c0.root) + ": every rank names the same root");
    }
    plan.comp_size += c0.comp_size;
    if (c0.action == "barrier") M = 1;  // an all-reduce of one element: everyone has heard from everyone
    plan.selection[c0.action] = choice[c0.action];
    plan.given[c0.action] = given.count(c0.action) != 0;
    if (M == 0) {  // nothing to move on any rank: the call takes no time
      plan.runs.push_back(std::move(run));
      continue;
    }
    run.info = registry.find(choice[c0.action]);
    run.params = setup.params;
    run.params.M = M;
    const NodeId root_node = c0.root >= 0 ? node_of[static_cast<std::size_t>(c0.root)] : 0;
    run.params.root = root_node;
    if (run.info->name.rfind("alltosome.", 0) == 0) {
      run.params.k = dim;  // all to the 2^(n-k) = 1 node below 1: node 0
      if (root_node != 0)
        throw InputError(c0.file, "line " + std::to_string(c0.line),
                         c0.spelled + ": the root, rank " + std::to_string(c0.root) + ", is on node " +
                             std::to_string(root_node) + "; " + run.info->name + " gathers at node 0: place rank " +
                             std::to_string(c0.root) + " on node 0 with --map FILE");
    }
    const auto key = std::make_tuple(run.info->name, M, run.params.root);
    auto it = checked.find(key);
    if (it == checked.end()) {
      Setup s = setup;
      s.params = run.params;
      std::optional<SetupError> err = check_sizes(s);
      if (!err && run.info->check) err = run.info->check(s);
      it = checked.emplace(key, err ? err->message : "").first;
    }
    if (!it->second.empty())
      throw InputError(c0.file, "line " + std::to_string(c0.line),
                       c0.spelled + " (M=" + std::to_string(M) + ") runs " + run.info->name + ", which does not fit " +
                           setup.topology.describe() + ": " + it->second + " (choose another with --collectives " +
                           c0.action + "=...)");
    plan.runs.push_back(std::move(run));
  }
  // The spare nodes take part in every call, as the cube's algorithm requires.
  for (NodeId n = ranks; n < static_cast<NodeId>(t.nodes.size()); ++n) {
    auto& strands = t.nodes[static_cast<std::size_t>(n)].strands;
    if (strands.empty()) strands.resize(1);
    for (std::size_t k = 0; k < first.size(); ++k) {
      Step st;
      st.kind = StepKind::collective;
      st.id = static_cast<std::int64_t>(k);
      strands.front().push_back(std::move(st));
    }
  }
  return plan;
}

CollectiveHook collective_hook(std::shared_ptr<const CollectivePlan> plan) {
  return [plan = std::move(plan)](Node& self, std::int64_t index) -> Task<> {
    const CollectiveRun& run = plan->runs.at(static_cast<std::size_t>(index));
    if (run.info == nullptr) return nothing();
    return run.info->process(self, run.params);
  };
}

}  // namespace cubesim::trace
