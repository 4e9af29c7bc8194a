#pragma once
/// The collectives of a replayed trace (docs/traces.md, "Collectives"), run by cubesim's own
/// algorithms: which algorithm runs each MPI collective (`cubesim replay --collectives`, with a
/// default per machine), the parameters each call runs with, and the hook that runs it inside
/// the replaying processes. Here, in app/, because traces/ knows no algorithm (DESIGN.md).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "traces/ti_trace.hpp"

namespace cubesim::trace {

/// The collective actions, in the order the selector and the report list them.
const std::vector<std::string>& collective_actions();

/// The default algorithm of each action on `machine`: the one-port algorithm on one- and k-port
/// machines, the all-port one on all-port machines (docs/traces.md's table).
std::map<std::string, std::string> default_collectives(const Machine& machine);

/// One world-wide call: the algorithm and the parameters every node runs it with.
struct CollectiveRun {
  std::string action;
  const AlgorithmInfo* info = nullptr;  ///< null: nothing to move (every rank's block is empty)
  Params params;
};

struct CollectivePlan {
  std::map<std::string, std::string> selection;  ///< action -> algorithm, for the actions the trace calls
  std::map<std::string, bool> given;             ///< action -> chosen by --collectives (else default)
  std::vector<CollectiveRun> runs;               ///< by index (Step::id of a collective step)
  double comp_size = 0;                          ///< the comp_size of rank 0's calls, summed (not charged)
};

/// Resolves the collectives of `t` (ranks 0..ranks-1, before any --map) on `setup`'s machine and
/// topology, with rank r on node node_of[r] (a permutation of the topology's nodes): the selector
/// `spec` ("bcast=broadcast.nesbt,allreduce=allreduce.sbt"), each call's block (the largest of
/// any rank's), root and fit. Gives the nodes beyond the ranks (spare nodes) their part in every
/// call. Throws InputError naming --collectives or the action's file and line.
CollectivePlan plan_collectives(Trace& t, NodeId ranks, const Setup& setup, const std::vector<NodeId>& node_of,
                                const std::string& spec, const Registry& registry);

/// The hook replay_process calls for a collective step: the planned algorithm's process.
CollectiveHook collective_hook(std::shared_ptr<const CollectivePlan> plan);

}  // namespace cubesim::trace
