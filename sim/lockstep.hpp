#pragma once
/// Step programs and the lockstep simulator (docs/lockstep.md).
///
/// Many of the papers' algorithms are a fixed number of steps in which every node posts a group
/// of sends to and receives from its neighbours at once, waits for them all, and goes on: the
/// Gray-code exchanges and rotations of TR-530 §4.2.1 (GCEA, CRA), Cannon's rolls. On 2^12 and
/// more nodes the engine spends a coroutine resumption, an operation group and a message record on
/// each of these messages (201 M of them for an all-port CRA on 2^12 nodes); the lockstep
/// simulator times a whole step of the whole machine at once, node by node in two sweeps (the
/// sends, then the receives), from the same machine costs and with the same rules as the engine:
///
///  - a send at its node's time t on link (x, port) starts when the link is free (first come,
///    first served in the order the node sent), takes tau per packet, tau_msg once and t_c per
///    element, holds the link until its last packet ends, and completes then; a send that waited
///    for the link carries the chain of the one before it (the engine's Slot hand-over);
///  - a receive takes the oldest message from that neighbour with that tag (messages do not
///    overtake) and completes when it has arrived, or at once if it already had;
///  - a node resumes when the last of its group has completed, with that completion's chain; a
///    completion at the node's own time keeps the node's own chain.
///
/// It is a simulation, not a formula: every message of every node is timed, and nothing is
/// assumed about symmetry. It runs only what it times exactly as the engine does -- all-port
/// store-and-forward, no node software, no observer, timing mode -- and gives up (run returns
/// nullopt, the caller runs the engine) where the engine's outcome would depend on the order of
/// its events: a node whose group completes at one instant with two different chains, processes
/// that end last at one instant with different chains, a receive whose message is sent in a later
/// step. tests/test_lockstep.cpp checks it against the engine on every regression point.
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/buffer.hpp"
#include "sim/engine.hpp"
#include "sim/kernel/backend.hpp"
#include "sim/machine.hpp"
#include "sim/steps.hpp"
#include "sim/topology.hpp"

namespace cubesim {

/// Whether the lockstep simulator times runs on this machine exactly as the engine does (with
/// `options`; an observer, which the engine would feed, is the caller's to exclude).
bool lockstep_supports(const Machine& m, const EngineOptions& options);

/// The run of `program` on the machine: its statistics as the engine would report them (events:
/// the node-steps it timed), the nodes' results (sized, timing mode) in `results`; nullopt where
/// the outcome would depend on the engine's order of events (above). Throws BudgetError and
/// Interrupted as the engine does, and SimulationError for a program that is not one (a port
/// without a neighbour).
std::optional<RunStats> run_lockstep(const Machine& m, const Topology& topo, const EngineOptions& options,
                                     const StepProgram& program, std::vector<Buffer>& results);

/// What a step program asks of the simulator's records: chains with flops and overheads
/// (StepProgram::wide()), how many strands a node runs (StepProgram::strands()), and whether it
/// repeats steps (StepProgram::repeats: the all-port simulator then keeps a copy of a node's time
/// and chain and of each link's time and load to measure a repeat against).
struct LockstepShape {
  bool wide = false;
  int strands = 1;
  bool repeats = false;
};

/// The bytes a run of a program of this shape takes in the lockstep simulator on this machine and
/// topology, beside the program's own state (its plan, its tables) and the process's baseline: the
/// simulator's records of every node and link, sized from the records themselves, with two
/// transfers a node (one-port), and the nodes' results. Not the messages that wait on a link behind
/// another (all-port: CRA's second part on a quarter of its ports), which the program counts as
/// its own (64 bytes each). The memory model of a point the lockstep simulator takes
/// (AlgorithmInfo::steps_memory; docs/reliability.md "Memory"), where the engine's model would
/// overstate it several times over.
std::int64_t lockstep_memory(const Machine& m, const Topology& topo, LockstepShape shape);

/// run_lockstep on a one-port machine (sim/lockstep_one_port.cpp): the program's messages timed
/// in the engine's order of events, which decides who queues for a slot at one instant.
std::optional<RunStats> run_lockstep_one_port(const Machine& m, const Topology& topo, const EngineOptions& options,
                                              const StepProgram& program, std::vector<Buffer>& results);
/// lockstep_memory's bytes a node on a one-port machine with `ports` ports.
std::int64_t lockstep_one_port_node_bytes(std::int64_t ports, LockstepShape shape);

}  // namespace cubesim
