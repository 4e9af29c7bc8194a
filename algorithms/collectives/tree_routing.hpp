#pragma once
/// Routing on families of spanning trees of the Boolean n-cube (TR-530 §4.1.2-4.1.5, §4.2.2-4.2.3,
/// §4.3-4.4; TR-572 §3.1-3.2): the SBT, the n rotated SBTs (nRSBT) and the spanning balanced
/// n-tree (SBnT), each translated to every source (x XOR s), with a schedule that fixes at which
/// step each tree edge is used. A family of t trees splits every block into t parts; part j
/// travels on tree j. The collectives here move real data (or sizes only in timing mode); the
/// time emerges from the engine, the schedule fixes only the order of each node's operations.
///
/// Schedules:
///  - cyclic (one-port): in step s every node communicates across one dimension, the same for all
///    nodes, cycling n-1, n-2, ..., 0, n-1, ... for the SBT and nRSBT, and 0, 1, ..., n-1, 0, ...
///    for the SBnT, whose paths set bits cyclically upwards from the base (an SBnT edge is used at
///    the first step of its dimension after the edge into its tail). Tree j of the nRSBT runs the
///    one-port SBT schedule of its rotation, starting when the cycle first reaches its top
///    dimension (j-1) mod n, so the root sends 1, 2, ..., n, ..., 2, 1 parts in steps 0 .. 2n-2
///    (TR-530 Table 1 nRSBT-b(1,1)). Every path fits in 2n - 1 steps.
///  - phased (all-port): tree j runs the one-port SBT schedule of its own rotation, dimension
///    (n - 1 - s + j) mod n in step s, so in every step the n trees use n different dimensions.
///  - depth (all-port): the edge into a node of depth l is used in step l - 1 (all ports at once).
///
/// Step-form collectives send, in each step and across each dimension, one message holding every
/// item scheduled on that edge then (a block part for broadcasts; the parts for a whole subtree
/// for personalized communication, "scheduling all data for a subtree at once"). The
/// reverse-breadth-first scatter (TR-572 §3.1) instead sends, over each edge, one message per
/// level of the subtree below it, deepest level first, and forwards each as it arrives.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "sim/steps.hpp"

namespace cubesim::routing {

enum class Family { sbt, nrsbt, sbnt };
enum class Schedule { cyclic, phased, depth };

/// "SBT", "nRSBT", "SBnT": the family's name in TR-530's table rows.
constexpr const char* family_name(Family f) {
  switch (f) {
    case Family::sbt:
      return "SBT";
    case Family::nrsbt:
      return "nRSBT";
    case Family::sbnt:
      return "SBnT";
  }
  return "?";
}

/// A subcube of the machine's cube on which a collective runs: a processor row or column of a
/// 2-D grid (TR-530 §5.2: "rows" use the least n2 dimensions, columns the other n1). Local
/// dimension d is the cube's dimension dims[d]; a node's local address is its bits on those
/// dimensions, and a plan's relative addresses and block indices are local ones.
struct SubCube {
  std::vector<int> dims;
  /// The whole n-cube (local = global).
  static SubCube whole(int n) { return range(0, n); }
  /// Dimensions lo, lo + 1, ..., lo + count - 1.
  static SubCube range(int lo, int count) {
    SubCube s;
    s.dims.reserve(static_cast<std::size_t>(std::max(count, 0)));  // one allocation, not one a doubling
    for (int d = 0; d < count; ++d) s.dims.push_back(lo + d);
    return s;
  }
  [[nodiscard]] int n() const { return static_cast<int>(dims.size()); }
  [[nodiscard]] std::int64_t size() const { return std::int64_t{1} << n(); }
  [[nodiscard]] NodeId local(NodeId x) const {
    NodeId r = 0;
    for (int d = 0; d < n(); ++d) r |= ((x >> dims[d]) & 1) << d;
    return r;
  }
  /// The node of x's subcube whose local address is `a`.
  [[nodiscard]] NodeId member(NodeId x, NodeId a) const {
    for (int d = 0; d < n(); ++d) x = (x & ~(NodeId{1} << dims[d])) | (((a >> d) & 1) << dims[d]);
    return x;
  }
};

struct Entry {
  std::uint32_t q;  ///< the tree node (relative address) the edge leads into
  std::uint32_t tree;
};

/// The trees and the step of each edge for one (family, schedule, n). Shared by all nodes.
struct Plan {
  int n = 0, trees = 1, steps = 0;
  std::int64_t N = 1;
  std::vector<std::int8_t> pdim;                    ///< [tree * N + q]: the dimension to q's parent (-1 at 0)
  std::vector<std::int32_t> step;                   ///< [tree * N + q]: the step of the edge into q
  std::vector<std::vector<Entry>> edges;            ///< [step * n + dim]: edges used then, by tree, then q
  std::vector<std::vector<std::uint32_t>> subtree;  ///< [tree * N + q]: q's subtree, ascending
  /// [(step * n + dim) * trees + tree]: the edges of that tree in at(step, dim), and (with
  /// subtrees) the nodes below them, summed: a step-form message's size without its items.
  std::vector<std::int64_t> edge_count, edge_below;
  /// With subtrees, [(tree * N + q) * (n + 1) + L]: the nodes of q's subtree at level L (L ones in
  /// their relative address): what a reverse breadth-first scatter moves over q's edge at level L.
  std::vector<std::uint32_t> level_count;

  [[nodiscard]] int parent_dim(int tree, std::int64_t q) const { return pdim[tree * N + q]; }
  [[nodiscard]] int step_of(int tree, std::int64_t q) const { return step[tree * N + q]; }
  [[nodiscard]] const std::vector<Entry>& at(int s, int d) const { return edges[s * n + d]; }
  [[nodiscard]] const std::vector<std::uint32_t>& below(int tree, std::int64_t q) const {
    return subtree[tree * N + q];
  }
  [[nodiscard]] std::int64_t below_at_level(int tree, std::int64_t q, int L) const {
    return level_count[static_cast<std::size_t>((tree * N + q) * (n + 1) + L)];
  }
  /// Part j of a block of M elements (cubesim::part_size, one part per tree).
  [[nodiscard]] std::int64_t part_size(std::int64_t M, int j) const { return cubesim::part_size(M, trees, j); }
  [[nodiscard]] std::int64_t part_offset(std::int64_t M, int j) const { return cubesim::part_offset(M, trees, j); }
  /// Elements of the message at (s, d) carrying one part (of M) per edge, or (`below`) one per
  /// node below each edge: O(trees), where packing the message is O(its edges or items).
  [[nodiscard]] std::int64_t message_elements(int s, int d, std::int64_t M, bool below) const {
    const auto& w = below ? edge_below : edge_count;
    std::int64_t e = 0;
    for (int j = 0; j < trees; ++j) e += w[static_cast<std::size_t>((s * n + d) * trees + j)] * part_size(M, j);
    return e;
  }

  /// The messages of every step of the step form, for blocks of M (`below`: one part per node
  /// below each edge): step s sends across sends[first[s]] .. sends[first[s + 1]] - 1, each a
  /// (dimension, elements) with elements > 0, in ascending dimension. The same at every node (the
  /// schedule is translated), so it is computed once per (M, below) and shared: a node's step is
  /// then O(its messages), where scanning every dimension and summing over the trees was
  /// O(n · trees) a step (n^3 a node for nRSBT: 4.3 G multiply-adds on 2^16 nodes).
  struct StepSends {
    std::vector<std::uint32_t> first;                 ///< [step], and one past the last
    std::vector<std::pair<int, std::int64_t>> sends;  ///< (dimension, elements)
  };
  [[nodiscard]] const StepSends& step_sends(std::int64_t M, bool below) const {
    const std::lock_guard<std::mutex> lock(sends_mu_);
    auto& slot = sends_[{M, below}];
    if (!slot) {
      auto made = std::make_unique<StepSends>();
      for (int s = 0; s < steps; ++s) {
        made->first.push_back(static_cast<std::uint32_t>(made->sends.size()));
        for (int d = 0; d < n; ++d)
          if (const std::int64_t e = message_elements(s, d, M, below); e > 0) made->sends.emplace_back(d, e);
      }
      made->first.push_back(static_cast<std::uint32_t>(made->sends.size()));
      slot = std::move(made);
    }
    return *slot;
  }

 private:
  mutable std::mutex sends_mu_;
  mutable std::map<std::pair<std::int64_t, bool>, std::unique_ptr<const StepSends>> sends_;
};

/// The plan, built once per (family, schedule, n) and cached; subtrees only when asked for.
std::shared_ptr<const Plan> plan(Family f, Schedule s, int n, bool with_subtrees = false);
/// The plan with the size of every edge's subtree (edge_below: what step_sends(M, true) needs) but
/// neither the subtree lists nor their level counts: the step-form all-to-all in timing mode, where
/// on 2^16 nodes those took about 140 MB of the run's 650 (16 trees of 65,536 lists).
std::shared_ptr<const Plan> plan_sizes(Family f, Schedule s, int n);

/// About the bytes plan() without subtrees or plan_sizes() holds on an n-cube: a tree's parent
/// dimension (1), step (4) and edge entry (8) for every node, and the edge lists' slack: 16 bytes a
/// tree and node (measured by the lockstep runs' peaks, tests/test_memory.cpp: 12-13).
std::int64_t plan_bytes(Family f, int n);

/// One-to-all broadcast in step form: the root's `message` (M elements) reaches every node.
Task<Buffer> broadcast(Node& self, std::int64_t root, std::int64_t M, Buffer message, std::shared_ptr<const Plan> plan);
/// All-to-all broadcast in step form: returns all N blocks (M elements each) in node order. On a
/// subcube (plan.n == sub.n()), the blocks of its nodes in local-address order.
Task<Buffer> allgather(Node& self, std::int64_t M, Buffer own, std::shared_ptr<const Plan> plan);
Task<Buffer> allgather(Node& self, std::int64_t M, Buffer own, std::shared_ptr<const Plan> plan, SubCube sub);
/// All-to-all reduction (reduce-scatter) in step form: the all-to-all broadcast run backwards
/// (TR-530 §5.1: "the same algorithms, but in the other direction"). `partials` holds one block of
/// M elements for every node of the subcube (local-address order); each node ends with the sum
/// over the subcube of the blocks for itself. Every element received is added to the partial sum
/// it belongs to, one flop each, charged after the step's messages have arrived.
Task<Buffer> reduce_scatter(Node& self, std::int64_t M, Buffer partials, std::shared_ptr<const Plan> plan, SubCube sub);
/// All-to-all personalized in step form: `own` holds N blocks of M by destination; returns N
/// blocks by source (local addresses on a subcube).
Task<Buffer> alltoall(Node& self, std::int64_t M, Buffer own, std::shared_ptr<const Plan> plan);
Task<Buffer> alltoall(Node& self, std::int64_t M, Buffer own, std::shared_ptr<const Plan> plan, SubCube sub);
/// allgather (below false) and alltoall (below true) on the whole cube in timing mode as a step
/// program (sim/steps.hpp), for the lockstep simulators: plan step s is step s, and in it the
/// exchanges of exchange_steps, a send of the plan's size and a receive across each dimension in
/// ascending order, one group (steps that send nothing anywhere are empty: the process skips them
/// without an await). Every node ends with N M elements. `plan` is the one the process uses in
/// timing mode (plan() for the all-gather, plan_sizes() for the all-to-all).
std::unique_ptr<StepProgram> exchange_program(std::shared_ptr<const Plan> plan, std::int64_t M, bool below);
/// One-to-all personalized, reverse breadth-first (TR-572 §3.1): the root's `all` holds N blocks
/// of M by destination node; returns this node's block.
Task<Buffer> scatter_rbfs(Node& self, std::int64_t root, std::int64_t M, Buffer all, std::shared_ptr<const Plan> plan);

/// The one-port SBT forms on a subcube (TR-530 §4.2.2, Table 2 SBT-b(1,N); §5.1 A4; TR-572 §3.2),
/// one exchange per dimension:
///  - allgather_doubling: recursive doubling, local dimensions 0, 1, ..., n-1; step i exchanges
///    the 2^i blocks gathered so far. Returns the subcube's blocks in local-address order.
///  - reduce_halving: the same backwards (recursive halving), local dimensions n-1, ..., 0; step d
///    sends the 2^d partial blocks whose owners lie across d and adds the 2^d received (one flop an
///    element, charged after the message). `partials`: one block per subcube node; returns the
///    sum of the blocks for this node.
///  - standard_exchange: all-to-all personalized, local dimensions n-1, ..., 0; slot v holds at
///    first this node's block for local node v and at the end local node v's block for this one.
Task<Buffer> allgather_doubling(Node& self, std::int64_t M, Buffer own, SubCube sub);
Task<Buffer> reduce_halving(Node& self, std::int64_t M, Buffer partials, SubCube sub);
Task<Buffer> standard_exchange(Node& self, std::int64_t M, Buffer slots, SubCube sub);
/// acc[offset ..] += other, element by element, in data mode (the caller charges the flops).
void add_into(Buffer& acc, const Buffer& other, std::int64_t offset = 0);

/// All-to-one reduction in step form: the one-to-all broadcast on `plan` run backwards (TR-530
/// §4.1.2: the SBT serves broadcasting "or the reverse operation, reduction"). Every node of the
/// subcube holds `own` (M elements). Where the broadcast sent part j of the message over an edge,
/// the reduction receives over it the partial sum of part j over the subtree below and adds it;
/// a node sends its partial sum of part j to its parent in tree j at the step its broadcast edge
/// had, its subtree's having come in the steps after (before, backwards). One message a step and
/// dimension; one flop an element received, charged after the step's messages have arrived. With
/// the SBT's cyclic (one-port) plan this is reduce.sbt's order: the children smallest subtree
/// first, then the parent. Returns the sum at `root` (a local address of sub), nothing elsewhere.
Task<Buffer> reduce_to(Node& self, NodeId root, std::int64_t M, Buffer own, std::shared_ptr<const Plan> plan,
                       SubCube sub);

/// Some-to-all personalized communication (TR-572 §3.3) in the subcube `sub`: its local
/// dimensions [0, l) span the l-subcubes, the other k = sub.n() - l carry the splitting. The
/// sources are the 2^l nodes whose local bits above l equal `root`; each holds in `mine` the
/// 2^(k+l) blocks of M elements it sends, by destination local address (any other node: an
/// empty buffer). Theorem 1's order: first the k splitting steps, across the k dimensions from
/// the highest down, every holder sending its neighbour the half of its blocks whose destinations
/// lie on the neighbour's side; then the all-to-all personalized inside each l-subcube. One-port
/// (`nport` false): the halves as single messages, the standard exchange (sometoall.sbt); k ports
/// (`nport`): split_groups and alltoall.nrsbt's phased schedule (sometoall.sbnt). Returns the 2^l
/// blocks this node receives, by the source's low l bits.
Task<Buffer> sometoall(Node& self, std::int64_t M, Buffer mine, SubCube sub, int l, NodeId root, bool nport);
/// The splitting (TR-572 §3.3, Table 3's n-port row) on the k dimensions of `ksub`: the node at
/// local address `root` holds the 2^k groups of G elements in `all` (group t for the node at local
/// address t); part j of every group travels on the SBT rotated by j, phased (tree j crosses
/// local dimension (k-1-s+j) mod k in step s), a holder sending its child the groups on the
/// child's side. Returns this node's group.
Task<Buffer> split_groups(Node& self, std::int64_t G, Buffer all, SubCube ksub, NodeId root);
/// The accumulation, split_groups run backwards: `mine` is this node's group; returns at `root`
/// the 2^k groups by local address (nothing elsewhere).
Task<Buffer> accumulate_groups(Node& self, std::int64_t G, Buffer mine, SubCube ksub, NodeId root);

/// A block's pipelined trip along a path of dimensions (TR-572 §6.1's SPT/DPT, TR-530 §5.2.2's
/// TXP(n,N)): node `self` plays its part as the source `src` (sends `data`, `size` elements, in
/// packets of at most B back to back), a relay (forwards each packet as it arrives) or the
/// destination (`*out` gets what arrived). Packets carry `tag` (the path's id; nonzero where
/// other traffic on the same ports uses tag 0). A node not on the path does nothing.
/// `dims` is read before the function returns (no coroutine keeps it): the caller may reuse it.
/// pipelined_path's part at `self` in `relays` (Forwards: the same operations, no coroutine) when
/// it is the relay or the destination of a path of one packet and no observer records; false
/// (nothing begun) otherwise, where the caller runs pipelined_path. `*out` as pipelined_path's: the
/// destination's message once `relays` has been awaited, a relay's left empty.
bool forward_part(Node& self, std::span<const int> dims, NodeId src, int tag, std::int64_t size, Forwards& relays,
                  Buffer* out);
Task<> pipelined_path(Node& self, std::span<const int> dims, NodeId src, int tag, std::int64_t size, Buffer data,
                      Buffer* out);

/// A node's parts in many pipelined paths at once (TR-572 §6.1's SPT/DPT, TR-530 §5.2.2's pair
/// swaps): `add` each path in the order its pipelined_path coroutine would begin, then
/// `co_await parts.done()`. Where `direct` (paths of one packet, no observer), the node's own send
/// is begun as a request and a relay or destination as a Forwards entry (forward_part), without
/// a coroutine; any other part is a pipelined_path coroutine. The same calls to the engine in the
/// same order as a coroutine a part, so the same events and reports (tests/test_forwards.cpp,
/// docs/performance.md "Forwards").
class PathParts {
 public:
  PathParts(Node& self, std::size_t paths, bool direct);
  /// Node self's part in the path of `size` elements along `dims` from `src` with `tag`; `data`,
  /// at the source, holds them (from its start); `*out`, at the destination, gets them once done.
  void add(std::span<const int> dims, NodeId src, int tag, std::int64_t size, Buffer data, Buffer* out);
  /// Waits for every part: the coroutines, then the relays, then the own sends.
  Task<> done();

 private:
  Node& self_;
  bool direct_;
  Forwards relays_;
  std::vector<Task<>> roles_;
  std::vector<Request> own_;
};

/// The terms of a schedule run in lockstep, for the rows TR-530 does not give: start-ups,
/// element transfers and messages summed over the steps (or messages) named below.
struct Terms {
  std::int64_t startups = 0, elements = 0, messages = 0;
};
/// Step-form all-to-all personalized on family f's trees under `schedule`: every step takes as
/// long as its largest message. Computed tree by tree in O(N) memory (no plan).
Terms lockstep_alltoall(Family f, Schedule schedule, int n, std::int64_t M, std::int64_t B);
/// Reverse-breadth-first scatter on one port (the depth schedule): the root sends each of its
/// messages (one per level and child) one after the other; every block leaves the root once.
/// O(N) bytes of memory (no plan).
Terms root_messages_rbfs(Family f, int n, std::int64_t M, std::int64_t B);

}  // namespace cubesim::routing
