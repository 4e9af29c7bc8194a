#pragma once
/// Gao's (UBC TR 89-27 §4) lines of a 3-D mesh of trees and a 3-D mesh of cliques: the
/// Limited-Complete-Broadcast (an all-gather along a line) and the Limited-Histogramming (a
/// reduce-scatter along a line) on a balanced binary tree or a clique of the line's own nodes
/// (sim/topology.hpp: heap order on the tree, coordinate 0 its root).
///
/// Trees, Gao's "simple implementation" (proof of Theorem 2):
///  - all-gather: "the packets ... sent from the leaf nodes up, batched up along the way to reach
///    the root node, and then sent down as a single packet to every processor": each node sends
///    its subtree's blocks (in preorder) to its parent once its children's have arrived; the root
///    puts them in coordinate order and the whole line's data goes down the tree, a node sending it
///    on to its children once it has it;
///  - reduce-scatter: "summing-up from the leaf nodes ... to the root node does not require
///    batching" (each node sends its whole partial sum, q pieces, up once its children's have
///    arrived and been added), "and to have an even distribution of output data ... packets ...
///    sent from the root down and split into halves at each of the log p^{1/3} steps" (a node
///    passes each child the pieces of the child's subtree).
/// Gao's improved implementation (all levels pipelined) is not given in the paper ("We omit the
/// details here") and is not built.
///
/// Cliques (Proposition 2, start-up time 2): every node sends its block to each other node of the
/// line directly, and for the reduce-scatter each partial piece straight to its owner. All ports:
/// every message at once; otherwise q - 1 steps, in step o node c sends to c + o and receives from
/// c - o (mod q), a permutation, so no two messages meet at a port.
///
/// Each schedule's cost is derived beside it (line_*_cost): the latest finish over the line under
/// DESIGN.md's cost model, every node's receives served first come first served by its one
/// incoming slot on one port, at once on all ports.
#include "algorithms/mesh/lattice.hpp"
#include "algorithms/rows.hpp"
#include "sim/node.hpp"
#include "sim/task.hpp"

namespace cubesim::mesh {

/// Every node's block `mine` (M elements) to every node of its line along `axis`: the line's M q
/// elements in coordinate order.
Task<Buffer> line_allgather(Node& self, Lattice lat, int axis, Buffer mine, int tag);
/// `blocks` holds q pieces of M, piece c for coordinate c; returns the sum over the line of this
/// node's piece.
Task<Buffer> line_reduce_scatter(Node& self, Lattice lat, int axis, std::int64_t M, Buffer blocks, int tag);

/// A schedule's critical terms and the flops on them.
struct LineCost {
  RowTerms terms;
  std::int64_t flops = 0;
};
LineCost line_allgather_cost(const Machine& m, const Lattice& lat, int axis, std::int64_t M, std::int64_t B);
LineCost line_reduce_scatter_cost(const Machine& m, const Lattice& lat, int axis, std::int64_t M, std::int64_t B);
/// Time of a cost on machine m.
Time line_time(const Machine& m, const LineCost& c);

}  // namespace cubesim::mesh
