#pragma once
/// The collectives on a line of a processor grid (algorithms/mesh/lattice.hpp), written once and
/// composed by the mesh algorithms (FOH's broadcast and roll, Gao's Limited-Complete-Broadcast and
/// Limited-Histogramming), each beside the terms of its schedule under DESIGN.md's cost model.
/// Every node of the grid calls the operation at once; each line along `axis` runs its own copy.
/// Messages carry `tag`, so that operations on different axes can run at the same time.
///
///  - broadcast (FOH §3 eq. (2) "a linear pipeline"; App. A eq. (A.3) the split ring): the root
///    cuts its message into packets of B and sends each as a message of its own; every node
///    forwards each packet as it arrives. On a ring, `split` false sends all packets one way
///    round (L - 1 hops), `split` true both ways (FOH's split ring: ⌈(L-1)/2⌉ hops one way,
///    ⌊(L-1)/2⌋ the other). On a mesh line the packets go out both ways from the root. With two
///    arms on a one-port machine the root sends each packet to the + arm, then to the - arm.
///  - shift: every node sends its block to its ring successor (FOH eq. (3), the roll).
///  - allgather (Gao §3 Complete-Broadcast on a ring): L - 1 steps; each node forwards the block it
///    received last. The result is the L blocks in coordinate order.
///  - reduce_scatter (Gao §4 Prop. 1, Limited-Histogramming): each node holds L blocks of M, one
///    per destination in coordinate order; the block for the ring predecessor leaves first, and
///    each node adds its own block for that destination to what it receives (M flops) and
///    forwards it, until its own sum arrives. No batching, no splitting.
/// On a mesh, shift, allgather and reduce_scatter run on the folded ring (routes of one or two
/// hops); the broadcast uses the line itself.
#include <cstdint>

#include "algorithms/mesh/lattice.hpp"

namespace cubesim::mesh {

Task<Buffer> line_broadcast(Node& self, Lattice lat, int axis, std::int64_t root, std::int64_t M, Buffer msg,
                            bool split, int tag = 0);
/// FOH App. A (A.1)-(A.2), the tree: a binomial tree over the line, whole messages. Relative
/// positions d: on a cube the subcube's local address XOR the root's (the spanning binomial tree
/// of the line's subcube: every edge one cube edge), elsewhere (coordinate - root) mod L, edges
/// routed sends. Node d > 0 receives from d minus its lowest 1-bit, then sends to d + 2^s for each
/// s below that bit, the farthest first (the root: for every s), one after the other (all ports on
/// a cube: at once, each on its own dimension).
Task<Buffer> line_tree_broadcast(Node& self, Lattice lat, int axis, std::int64_t root, std::int64_t M, Buffer msg,
                                 int tag = 0);
Task<Buffer> ring_shift(Node& self, Lattice lat, int axis, Buffer mine, int tag = 0);
Task<Buffer> ring_allgather(Node& self, Lattice lat, int axis, Buffer mine, int tag = 0);
Task<Buffer> ring_reduce_scatter(Node& self, Lattice lat, int axis, std::int64_t M, Buffer blocks, int tag = 0);

/// The arms of a broadcast from coordinate `root` of a line of L nodes: the nodes each way, and
/// the hops to the farthest of them (the same but on an emulated grid, whose ring edges are routes).
struct Arms {
  std::int64_t plus = 0, minus = 0;
};
Arms broadcast_arms(const Lattice& lat, int axis, std::int64_t root, bool split);
Arms broadcast_hops(const Lattice& lat, int axis, std::int64_t root, bool split);

/// Time of a sum of terms on machine m (start-ups tau, elements t_c, messages tau_msg).
Time terms_time(const Machine& m, const RowTerms& t);
/// The critical terms of the broadcast (derivation in ring.cpp and docs/meshes.md).
RowTerms broadcast_terms(const Machine& m, std::int64_t M, std::int64_t B, Arms arms);
/// The tree broadcast's critical terms: the latest arrival over the tree, each node's sends one
/// after the other (the sender busy for the first hop of each), each message a flow shop over its
/// route; contention-free.
RowTerms tree_broadcast_terms(const Machine& m, const Lattice& lat, int axis, std::int64_t root, std::int64_t M,
                              std::int64_t B);
/// One ring shift, L - 1 allgather steps, L - 1 reduce-scatter steps (flops apart): the slowest
/// edge, or the L - 1 consecutive ring edges of greatest time.
RowTerms shift_terms(const Lattice& lat, int axis, std::int64_t M, std::int64_t B);
RowTerms ring_steps_terms(const Lattice& lat, int axis, std::int64_t M, std::int64_t B);

}  // namespace cubesim::mesh
