#include "algorithms/collectives/tree_routing.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>

#include "algorithms/embedding/trees.hpp"

namespace cubesim::routing {
namespace {

/// nRSBT: n trees (one part each); SBT and SBnT: one.
int tree_count(Family f, int n) { return f == Family::nrsbt && n > 0 ? n : 1; }

/// One message of x elements (none when x is 0) into the terms.
void add_message(Terms& t, std::int64_t x, std::int64_t B) {
  if (x == 0) return;
  t.elements += x;
  t.startups += ceil_div(x, B);
  ++t.messages;
}

/// The dimension of the edge into q (q != 0) in tree j of family f.
int parent_dim_of(Family f, int n, int j, std::uint32_t q) {
  return f == Family::sbnt ? trees::sbnt_parent_dim(q, n) : trees::rsbt_parent_dim(q, n, f == Family::nrsbt ? j : 0);
}

/// fn(q, k, parent) for the edge into every q != 0 of tree j, across dimension k, in ascending q:
/// a parent (q less one bit) before its children.
template <class Fn>
void for_each_edge(Family f, int n, int j, Fn fn) {
  const std::int64_t N = std::int64_t{1} << n;
  for (std::int64_t qi = 1; qi < N; ++qi) {
    const auto q = static_cast<std::uint32_t>(qi);
    const int k = parent_dim_of(f, n, j, q);
    fn(q, k, q ^ (std::uint32_t{1} << k));
  }
}

/// The step of the edge into q across k in tree j; `prev_step` and `prev_dim` are those of the
/// edge into q's parent (-1 and n - 1 when the parent is the root).
int edge_step(Family f, Schedule sched, int n, int j, std::uint32_t q, int k, int prev_step, int prev_dim) {
  if (sched == Schedule::depth) return std::popcount(q) - 1;
  if (f != Family::sbnt) {
    // SBT rotated by j, one-port SBT schedule in its own terms: the root sends across its
    // dimensions in the order (j-1), (j-2), ..., j (cyclically), one per step, and a node
    // forwards across the dimensions below the one it received on, so the edge across k is
    // used at local step n-1-((k-j) mod n). Phased trees start at once; on one port, tree j
    // starts when the common sequence n-1, n-2, ... first reaches its top dimension.
    const int start = sched == Schedule::phased ? 0 : (n - j) % n;
    return start + (n - 1) - ((k - j) % n + n) % n;
  }
  // SBnT on one port: the first step of dimension k (in the sequence 0, 1, ..., n-1, 0, ...)
  // after the edge into the parent.
  int gap = ((k - prev_dim) % n + n) % n;
  if (gap == 0) gap = n;
  return prev_step + gap;
}

}  // namespace

std::int64_t plan_bytes(Family f, int n) { return 16 * std::int64_t{tree_count(f, n)} * (std::int64_t{1} << n); }

namespace {

/// What a plan holds beyond its edges: nothing, every edge's subtree size, or the subtrees.
enum class Detail : std::uint8_t { edges, sizes, subtrees };

std::shared_ptr<const Plan> build(Family f, Schedule sched, int n, Detail detail) {
  auto p = std::make_shared<Plan>();
  p->n = n;
  p->N = std::int64_t{1} << n;
  p->trees = tree_count(f, n);
  const std::int64_t N = p->N;
  const int t = p->trees;
  p->pdim.assign(static_cast<std::size_t>(t * N), -1);
  p->step.assign(static_cast<std::size_t>(t * N), -1);
  int max_step = -1;
  for (int j = 0; j < t; ++j) {
    for_each_edge(f, n, j, [&](std::uint32_t q, int k, std::uint32_t par) {
      const auto at = static_cast<std::size_t>(j * N + q);
      p->pdim[at] = static_cast<std::int8_t>(k);
      const int s = edge_step(f, sched, n, j, q, k, par == 0 ? -1 : p->step[j * N + par],
                              par == 0 ? n - 1 : p->pdim[j * N + par]);
      p->step[at] = s;
      max_step = std::max(max_step, s);
    });
  }
  p->steps = max_step + 1;
  p->edges.resize(static_cast<std::size_t>(p->steps) * static_cast<std::size_t>(std::max(n, 1)));
  for (int j = 0; j < t; ++j)
    for (std::int64_t q = 1; q < N; ++q) {
      const auto at = static_cast<std::size_t>(j * N + q);
      p->edges[p->step[at] * n + p->pdim[at]].push_back({static_cast<std::uint32_t>(q), static_cast<std::uint32_t>(j)});
    }
  p->edge_count.assign(p->edges.size() * static_cast<std::size_t>(t), 0);
  for (std::size_t k = 0; k < p->edges.size(); ++k)
    for (const Entry& e : p->edges[k]) ++p->edge_count[k * static_cast<std::size_t>(t) + e.tree];
  if (detail != Detail::edges) {  // every edge's subtree size, children first (a parent has one bit fewer)
    std::vector<std::int64_t> size(static_cast<std::size_t>(N));
    p->edge_below.assign(p->edge_count.size(), 0);
    for (int j = 0; j < t; ++j) {
      std::fill(size.begin(), size.end(), 1);
      for (std::int64_t q = N - 1; q >= 1; --q) {
        const auto at = static_cast<std::size_t>(j * N + q);
        size[static_cast<std::size_t>(q ^ (std::int64_t{1} << p->pdim[at]))] += size[static_cast<std::size_t>(q)];
      }
      for (std::int64_t q = 1; q < N; ++q) {
        const auto at = static_cast<std::size_t>(j * N + q);
        p->edge_below[static_cast<std::size_t>(p->step[at] * n + p->pdim[at]) * static_cast<std::size_t>(t) +
                      static_cast<std::size_t>(j)] += size[static_cast<std::size_t>(q)];
      }
    }
  }
  if (detail == Detail::subtrees) {
    p->subtree.resize(static_cast<std::size_t>(t * N));
    p->level_count.assign(static_cast<std::size_t>(t * N * (n + 1)), 0);
    for (int j = 0; j < t; ++j)
      for (std::int64_t w = 0; w < N; ++w) {  // ascending w: every list comes out sorted
        std::int64_t a = w;
        const int level = std::popcount(static_cast<std::uint64_t>(w));
        while (true) {
          p->subtree[j * N + a].push_back(static_cast<std::uint32_t>(w));
          ++p->level_count[static_cast<std::size_t>((j * N + a) * (n + 1) + level)];
          if (a == 0) break;
          a ^= std::int64_t{1} << p->pdim[j * N + a];
        }
      }
  }
  return p;
}

/// The rank of w in a sorted subtree list.
std::int64_t rank_in(const std::vector<std::uint32_t>& list, std::int64_t w) {
  auto it = std::lower_bound(list.begin(), list.end(), static_cast<std::uint32_t>(w));
  return it - list.begin();
}

/// One step's operations at a node: a message out and/or in across each dimension.
struct StepOps {
  std::vector<Op> ops;
  std::vector<std::pair<std::size_t, int>> recvs;  // (index into ops, dimension)
};

/// The step form the all-to-all collectives share: in each step, across every dimension whose
/// message is not empty (Plan::step_sends), one exchange (a send and a receive at once).
/// `pack(d, entry, out)` appends an edge's items to the message across d; `unpack(d, entry, got,
/// offset)` takes them, in the same order, from the message received (every node has the same
/// lists: the schedule is translated). `reduce`: the steps run last to first (the reduce-scatter)
/// and the elements received in a step are charged as additions after it. One coroutine for all
/// the steps, its ops reused from step to step: a step allocates nothing but its messages (a
/// coroutine a step was a frame allocated, and cold, per node and step).
template <class Pack, class Unpack>
Task<> exchange_steps(Node& self, const Plan& P, const SubCube& sub, std::int64_t M, Pack pack, Unpack unpack,
                      bool below = false, bool reduce = false) {
  const Plan::StepSends& plan = P.step_sends(M, below);
  const bool data = self.data_mode();
  StepOps st;
  // At most a send and a receive across each dimension a step: one allocation each, not one a
  // doubling (the vectors' growth was 10 of A3's 60 allocations a node, all-port on 2^12 nodes).
  st.ops.reserve(static_cast<std::size_t>(2 * sub.n()));
  if (data || reduce) st.recvs.reserve(static_cast<std::size_t>(sub.n()));
  for (int i = 0; i < P.steps; ++i) {
    const int s = reduce ? P.steps - 1 - i : i;
    if (plan.first[s] == plan.first[s + 1]) continue;  // nothing to send in step s, anywhere
    st.ops.clear();
    st.recvs.clear();
    for (std::uint32_t k = plan.first[s]; k < plan.first[s + 1]; ++k) {
      const auto [d, size] = plan.sends[k];
      Buffer out;
      if (data) {
        for (const Entry& e : P.at(s, d)) pack(d, e, out);
      } else {
        out = Buffer::sized(size);  // timing mode: the size from the plan, no items packed
      }
      st.ops.push_back(self.send(sub.dims[d], std::move(out)));
      if (data || reduce) st.recvs.emplace_back(st.ops.size(), d);  // read after the step only then
      st.ops.push_back(self.recv(sub.dims[d]));
    }
    co_await all_of(st.ops);
    if (!data && !reduce) continue;  // timing mode: nothing to unpack or charge
    std::int64_t received = 0;
    for (auto [k, d] : st.recvs) {
      const Buffer got = st.ops[k].take();
      received += got.size();
      std::int64_t off = 0;
      if (data)
        for (const Entry& e : P.at(s, d)) unpack(d, e, got, off);
    }
    if (reduce && received > 0) co_await self.compute(received);
  }
}

}  // namespace

Terms lockstep_alltoall(Family f, Schedule sched, int n, std::int64_t M, std::int64_t B) {
  // Tree by tree, without a plan: the step and dimension of the edge into each q (ascending q,
  // parents first), then subtree sizes (descending q, children first). 9 bytes a node, reused
  // for every tree, where the plan with its subtree lists took kilobytes (issue 18).
  const std::int64_t N = std::int64_t{1} << n;
  const int trees = tree_count(f, n);
  std::vector<std::int32_t> step(static_cast<std::size_t>(N));
  std::vector<std::int8_t> dim(static_cast<std::size_t>(N));
  std::vector<std::uint32_t> size(static_cast<std::size_t>(N));
  std::vector<std::int64_t> load;  // [step * n + dim]: elements across dim in that step
  for (int j = 0; j < trees; ++j) {
    const std::int64_t part = cubesim::part_size(M, trees, j);
    for_each_edge(f, n, j, [&](std::uint32_t q, int k, std::uint32_t par) {
      dim[q] = static_cast<std::int8_t>(k);
      step[q] = edge_step(f, sched, n, j, q, k, par == 0 ? -1 : step[par], par == 0 ? n - 1 : dim[par]);
      size[q] = 1;
    });
    for (std::int64_t qi = N - 1; qi >= 1; --qi) {
      const auto q = static_cast<std::uint32_t>(qi);
      const std::uint32_t par = q ^ (std::uint32_t{1} << dim[q]);
      if (par != 0) size[par] += size[q];
      const auto at =
          static_cast<std::size_t>(step[q]) * static_cast<std::size_t>(n) + static_cast<std::size_t>(dim[q]);
      if (load.size() <= at) load.resize((static_cast<std::size_t>(step[q]) + 1) * static_cast<std::size_t>(n), 0);
      load[at] += static_cast<std::int64_t>(size[q]) * part;
    }
  }
  Terms t;
  for (std::size_t s0 = 0; n > 0 && s0 < load.size(); s0 += static_cast<std::size_t>(n)) {
    const std::int64_t most = *std::max_element(load.begin() + static_cast<std::ptrdiff_t>(s0),
                                                load.begin() + static_cast<std::ptrdiff_t>(s0) + n);
    add_message(t, most, B);
  }
  return t;
}

Terms root_messages_rbfs(Family f, int n, std::int64_t M, std::int64_t B) {
  // The root's child above each q (ascending q: parents first), one byte a node, reused for
  // every tree; elements by (level, child) in the reverse breadth-first order of the sends.
  const std::int64_t N = std::int64_t{1} << n;
  const int trees = tree_count(f, n);
  std::vector<std::int8_t> top(static_cast<std::size_t>(N), -1);
  std::vector<std::int64_t> e(static_cast<std::size_t>((n + 1) * std::max(n, 1)), 0);  // [L * n + d]
  for (int j = 0; j < trees; ++j) {
    const std::int64_t part = cubesim::part_size(M, trees, j);
    for_each_edge(f, n, j, [&](std::uint32_t q, int k, std::uint32_t par) {
      top[q] = static_cast<std::int8_t>(par == 0 ? k : top[par]);
      e[static_cast<std::size_t>(std::popcount(q) * n + top[q])] += part;
    });
  }
  Terms t;
  for (int L = n; L >= 1; --L)
    for (int d = 0; d < n; ++d) add_message(t, e[static_cast<std::size_t>(L * n + d)], B);
  return t;
}

namespace {
std::shared_ptr<const Plan> cached_plan(Family f, Schedule s, int n, Detail detail) {
  static std::mutex mu;
  static std::map<std::tuple<int, int, int, Detail>, std::shared_ptr<const Plan>> cache;
  const std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_tuple(static_cast<int>(f), static_cast<int>(s), n, detail);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  auto p = build(f, s, n, detail);
  cache.emplace(key, p);
  return p;
}
}  // namespace

std::shared_ptr<const Plan> plan(Family f, Schedule s, int n, bool with_subtrees) {
  return cached_plan(f, s, n, with_subtrees ? Detail::subtrees : Detail::edges);
}
std::shared_ptr<const Plan> plan_sizes(Family f, Schedule s, int n) { return cached_plan(f, s, n, Detail::sizes); }

namespace {

/// The step loop shared by the tree broadcast and the reduction to the root over the same trees.
/// Forwards (the broadcast): step by step, each node receives its parts of every tree from its
/// parent and sends them on to its children; the parts received are written into `data`.
/// Backwards (the reduction): the last step first and every edge turned round, so each node
/// receives from its children and sends to its parent; the parts received are added into `data`
/// (their additions charged after each step). r is this node's address relative to the root in
/// `sub`; a node's messages of one step and dimension are its parts of every tree, concatenated.
Task<> tree_steps(Node& self, const Plan& P, std::int64_t M, std::int64_t r, const SubCube& sub, bool backwards,
                  Buffer& data) {
  struct Ev {
    int step, dim;
    bool send;
    int tree;
  };
  std::vector<Ev> evs;
  for (int j = 0; j < P.trees; ++j) {
    if (P.part_size(M, j) == 0) continue;  // M < trees: an empty part is not sent at all
    if (r != 0) evs.push_back({P.step_of(j, r), P.parent_dim(j, r), backwards, j});
    for (int d = 0; d < P.n; ++d) {
      const std::int64_t c = r ^ (std::int64_t{1} << d);
      if (c != 0 && P.parent_dim(j, c) == d) evs.push_back({P.step_of(j, c), d, !backwards, j});
    }
  }
  std::sort(evs.begin(), evs.end(), [backwards](const Ev& a, const Ev& b) {
    if (a.step != b.step) return backwards ? a.step > b.step : a.step < b.step;
    return std::tie(a.dim, a.send, a.tree) < std::tie(b.dim, b.send, b.tree);
  });
  for (std::size_t i = 0; i < evs.size();) {
    StepOps st;
    std::vector<std::vector<int>> in_trees;
    const int s = evs[i].step;
    while (i < evs.size() && evs[i].step == s) {
      const int d = evs[i].dim;
      Buffer out;
      bool sends = false;
      std::vector<int> in;
      for (; i < evs.size() && evs[i].step == s && evs[i].dim == d; ++i) {
        const int j = evs[i].tree;
        if (evs[i].send) {
          out.append(data.slice(P.part_offset(M, j), P.part_size(M, j)));
          sends = true;
        } else {
          in.push_back(j);
        }
      }
      if (!in.empty()) {
        st.recvs.emplace_back(st.ops.size(), d);
        st.ops.push_back(self.recv(sub.dims[d]));
        in_trees.push_back(std::move(in));
      }
      if (sends) st.ops.push_back(self.send(sub.dims[d], std::move(out)));
    }
    co_await all_of(st.ops);
    std::int64_t received = 0;
    for (std::size_t k = 0; k < st.recvs.size(); ++k) {
      const Buffer got = st.ops[st.recvs[k].first].take();
      std::int64_t off = 0;
      for (int j : in_trees[k]) {
        const Buffer part = got.slice(off, P.part_size(M, j));
        if (backwards)
          add_into(data, part, P.part_offset(M, j));
        else
          data.write(P.part_offset(M, j), part);
        off += P.part_size(M, j);
      }
      received += got.size();
    }
    if (backwards && received > 0) co_await self.compute(received);
  }
}

/// exchange_program's: exchange_steps' operations in timing mode (tree_routing.hpp).
class ExchangeSteps final : public StepProgram {
 public:
  ExchangeSteps(std::shared_ptr<const Plan> plan, std::int64_t M, bool below)
      : plan_(std::move(plan)), sends_(&plan_->step_sends(M, below)), elements_(plan_->N * M) {}
  [[nodiscard]] std::int64_t steps() const override { return plan_->steps; }
  /// The plan's sends of a step are every node's (its trees are node 0's translated: docs/lockstep.md
  /// "Uniform steps").
  [[nodiscard]] bool uniform(std::int64_t /*s*/) const override { return true; }
  void step(NodeId /*x*/, std::int64_t s, std::vector<StepOp>& ops) const override {
    const auto at = static_cast<std::size_t>(s);
    for (std::uint32_t k = sends_->first[at]; k < sends_->first[at + 1]; ++k) {
      const auto [d, size] = sends_->sends[k];
      ops.push_back({.kind = StepOp::Kind::send, .port = d, .elements = size});
      ops.push_back({.kind = StepOp::Kind::recv, .port = d});
    }
  }
  [[nodiscard]] std::int64_t result_elements(NodeId /*x*/) const override { return elements_; }

 private:
  std::shared_ptr<const Plan> plan_;
  const Plan::StepSends* sends_;
  std::int64_t elements_;
};
}  // namespace

std::unique_ptr<StepProgram> exchange_program(std::shared_ptr<const Plan> plan, std::int64_t M, bool below) {
  return std::make_unique<ExchangeSteps>(std::move(plan), M, below);
}

Task<Buffer> broadcast(Node& self, std::int64_t root, std::int64_t M, Buffer message, std::shared_ptr<const Plan> pl) {
  const Plan& P = *pl;
  const std::int64_t r = self.id() ^ root;
  Buffer all =
      r == 0 ? std::move(message) : Buffer::make(M, self.data_mode(), [](std::int64_t) { return Element{-1}; });
  co_await tree_steps(self, P, M, r, SubCube::whole(P.n), false, all);
  co_return all;
}

Task<Buffer> allgather(Node& self, std::int64_t M, Buffer own, std::shared_ptr<const Plan> pl) {
  return allgather(self, M, std::move(own), pl, SubCube::whole(pl->n));
}

Task<Buffer> allgather(Node& self, std::int64_t M, Buffer own, std::shared_ptr<const Plan> pl, SubCube sub) {
  const Plan& P = *pl;
  const NodeId x = sub.local(self.id());
  Buffer all = Buffer::make(P.N * M, self.data_mode(), [](std::int64_t) { return Element{-1}; });
  all.write(x * M, own);
  auto where = [&](std::int64_t src, int j) { return src * M + P.part_offset(M, j); };
  co_await exchange_steps(
      self, P, sub, M,
      [&](int d, const Entry& e, Buffer& out) {  // x holds part j of the block of src
        const int j = static_cast<int>(e.tree);
        out.append(all.slice(where(x ^ (NodeId{1} << d) ^ e.q, j), P.part_size(M, j)));
      },
      [&](int, const Entry& e, const Buffer& got, std::int64_t& off) {
        const int j = static_cast<int>(e.tree);
        all.write(where(x ^ e.q, j), got.slice(off, P.part_size(M, j)));
        off += P.part_size(M, j);
      });
  co_return all;
}

Task<Buffer> reduce_scatter(Node& self, std::int64_t M, Buffer partials, std::shared_ptr<const Plan> pl, SubCube sub) {
  const Plan& P = *pl;
  const NodeId x = sub.local(self.id());
  auto where = [&](std::int64_t dst, int j) { return dst * M + P.part_offset(M, j); };
  // The all-to-all broadcast backwards: where it sent part j of the block of src across d, this
  // receives the partial sum for src from that neighbour and adds it; where it received, this
  // sends its partial sum for src, complete by then (its subtree's edges come later forwards,
  // earlier backwards).
  auto pack = [&](int, const Entry& e, Buffer& out) {
    const int j = static_cast<int>(e.tree);
    out.append(partials.slice(where(x ^ e.q, j), P.part_size(M, j)));
  };
  auto unpack = [&](int d, const Entry& e, const Buffer& got, std::int64_t& off) {
    const int j = static_cast<int>(e.tree);
    const std::int64_t at = where(x ^ (NodeId{1} << d) ^ e.q, j), len = P.part_size(M, j);
    add_into(partials, got.slice(off, len), at);
    off += len;
  };
  co_await exchange_steps(self, P, sub, M, pack, unpack, false, true);
  co_return partials.slice(x * M, M);
}

Task<Buffer> alltoall(Node& self, std::int64_t M, Buffer own, std::shared_ptr<const Plan> pl) {
  return alltoall(self, M, std::move(own), pl, SubCube::whole(pl->n));
}

Task<Buffer> alltoall(Node& self, std::int64_t M, Buffer own, std::shared_ptr<const Plan> pl, SubCube sub) {
  const Plan& P = *pl;
  const NodeId x = sub.local(self.id());
  const std::int64_t N = P.N;
  if (!self.data_mode()) {  // timing mode: message sizes from the plan, no O(N) state a node
    const auto none = [](auto&&...) {};
    co_await exchange_steps(self, P, sub, M, none, none, true);
    co_return Buffer::sized(N * M);
  }
  // Every node holds, for each source src and tree j, the parts (of the blocks src sends) for the
  // subtree of tree j below this node (relative address q = x ^ src), ascending: a segment of
  // |subtree| items. Segments lie in one buffer, tree by tree, then by q.
  std::vector<std::int64_t> seg(static_cast<std::size_t>(P.trees * N + 1));
  {
    std::int64_t off = 0;
    for (int j = 0; j < P.trees; ++j)
      for (std::int64_t q = 0; q < N; ++q) {
        seg[j * N + q] = off;
        off += static_cast<std::int64_t>(P.below(j, q).size()) * P.part_size(M, j);
      }
    seg.back() = off;
  }
  auto item = [&](int j, std::int64_t q, std::int64_t rank) { return seg[j * N + q] + rank * P.part_size(M, j); };
  Buffer hold = Buffer::make(seg.back(), self.data_mode(), [](std::int64_t) { return Element{-1}; });
  for (int j = 0; j < P.trees; ++j) {  // own blocks: subtree of 0 is every node, rank w
    for (std::int64_t w = 0; w < N; ++w)
      hold.write(item(j, 0, w), own.slice((x ^ w) * M + P.part_offset(M, j), P.part_size(M, j)));
  }
  co_await exchange_steps(
      self, P, sub, M,
      [&](int d, const Entry& e, Buffer& out) {  // the parts for q's subtree, held for parent(q)
        const int j = static_cast<int>(e.tree);
        const std::int64_t par = e.q ^ (std::int64_t{1} << d);  // this node, relative to the source
        const auto& mine = P.below(j, par);
        for (std::uint32_t w : P.below(j, e.q))
          out.append(hold.slice(item(j, par, rank_in(mine, w)), P.part_size(M, j)));
      },
      [&](int, const Entry& e, const Buffer& got, std::int64_t& off) {
        const int j = static_cast<int>(e.tree);
        const std::int64_t len = static_cast<std::int64_t>(P.below(j, e.q).size()) * P.part_size(M, j);
        hold.write(item(j, e.q, 0), got.slice(off, len));
        off += len;
      },
      true);
  // The block from src for this node: item of rank 0 (w = q itself) in segment (j, x ^ src).
  Buffer result = Buffer::make(N * M, self.data_mode(), [](std::int64_t) { return Element{-1}; });
  for (std::int64_t src = 0; src < N; ++src)
    for (int j = 0; j < P.trees; ++j)
      result.write(src * M + P.part_offset(M, j), hold.slice(item(j, x ^ src, 0), P.part_size(M, j)));
  co_return result;
}

Task<Buffer> scatter_rbfs(Node& self, std::int64_t root, std::int64_t M, Buffer all, std::shared_ptr<const Plan> pl) {
  const Plan& P = *pl;
  const std::int64_t q = self.id() ^ root;
  const int depth = ones(q);
  // This node's segment of each tree: the parts for its subtree, ascending.
  std::vector<std::int64_t> seg(static_cast<std::size_t>(P.trees + 1));
  for (int j = 0; j < P.trees; ++j)
    seg[j + 1] = seg[j] + static_cast<std::int64_t>(P.below(j, q).size()) * P.part_size(M, j);
  auto item = [&](int j, std::int64_t rank) { return seg[j] + rank * P.part_size(M, j); };
  Buffer hold = Buffer::make(seg.back(), self.data_mode(), [](std::int64_t) { return Element{-1}; });
  if (q == 0)
    for (int j = 0; j < P.trees; ++j)
      for (std::int64_t w = 0; w < P.N; ++w)
        hold.write(item(j, w), all.slice((w ^ root) * M + P.part_offset(M, j), P.part_size(M, j)));
  for (int L = P.n; L >= depth; --L) {
    // Receive this level's items from each dimension that is a parent edge in some tree.
    StepOps st;
    std::vector<int> in_dims;
    if (q != 0)
      for (int j = 0; j < P.trees; ++j) {
        const int d = P.parent_dim(j, q);
        if (std::find(in_dims.begin(), in_dims.end(), d) != in_dims.end()) continue;
        bool any = false;  // does any tree with this parent dimension have level-L nodes below?
        for (int j2 = 0; j2 < P.trees && !any; ++j2)
          any = P.parent_dim(j2, q) == d && P.part_size(M, j2) > 0 && P.below_at_level(j2, q, L) > 0;
        if (!any) continue;
        in_dims.push_back(d);
        st.recvs.emplace_back(st.ops.size(), d);
        st.ops.push_back(self.recv(d));
      }
    if (!st.ops.empty()) co_await all_of(st.ops);
    for (auto [k, d] : st.recvs) {
      if (!self.data_mode()) break;  // timing mode: nothing to unpack
      const Buffer got = st.ops[k].take();
      std::int64_t off = 0;
      for (int j = 0; j < P.trees; ++j) {
        if (P.parent_dim(j, q) != d) continue;
        const auto& mine = P.below(j, q);
        for (std::size_t rk = 0; rk < mine.size(); ++rk)
          if (std::popcount(mine[rk]) == L) {
            hold.write(item(j, static_cast<std::int64_t>(rk)), got.slice(off, P.part_size(M, j)));
            off += P.part_size(M, j);
          }
      }
    }
    if (L == depth) break;
    // Forward the level-L items of each child's subtree, one message per child dimension.
    std::vector<Op> sends;
    for (int e = 0; e < P.n; ++e) {
      const std::int64_t c = q ^ (std::int64_t{1} << e);
      if (c == 0) continue;
      Buffer out;
      bool any = false;
      if (!self.data_mode()) {  // timing mode: the message's size from the plan, no items
        std::int64_t len = 0;
        for (int j = 0; j < P.trees; ++j)
          if (P.parent_dim(j, c) == e && P.part_size(M, j) > 0) len += P.below_at_level(j, c, L) * P.part_size(M, j);
        if (len > 0) sends.push_back(self.send(e, Buffer::sized(len)));
        continue;
      }
      for (int j = 0; j < P.trees; ++j) {
        if (P.parent_dim(j, c) != e || P.part_size(M, j) == 0) continue;
        const auto& mine = P.below(j, q);
        for (std::uint32_t w : P.below(j, c))
          if (std::popcount(w) == L) {
            out.append(hold.slice(item(j, rank_in(mine, w)), P.part_size(M, j)));
            any = true;
          }
      }
      if (any) sends.push_back(self.send(e, std::move(out)));
    }
    if (!sends.empty()) co_await all_of(sends);
  }
  Buffer mine = Buffer::make(M, self.data_mode(), [](std::int64_t) { return Element{-1}; });
  for (int j = 0; j < P.trees; ++j) mine.write(P.part_offset(M, j), hold.slice(item(j, 0), P.part_size(M, j)));
  co_return mine;
}

void add_into(Buffer& acc, const Buffer& other, std::int64_t offset) {
  if (!acc.has_data() || !other.has_data()) return;
  auto a = acc.values();
  auto b = other.values();
  for (std::size_t i = 0; i < b.size(); ++i) a[static_cast<std::size_t>(offset) + i] += b[i];
}

Task<Buffer> allgather_doubling(Node& self, std::int64_t M, Buffer own, SubCube sub) {
  const NodeId x = sub.local(self.id());
  Buffer all = Buffer::make(sub.size() * M, self.data_mode(), [](std::int64_t) { return Element{-1}; });
  all.write(x * M, own);
  for (int i = 0; i < sub.n(); ++i) {
    const NodeId span = NodeId{1} << i;
    const NodeId base = x & ~(span - 1);  // my group: local nodes [base, base + 2^i)
    auto snd = self.send(sub.dims[i], all.slice(base * M, span * M));
    auto rcv = self.recv(sub.dims[i]);
    co_await all_of(snd, rcv);
    all.write((base ^ span) * M, rcv.take());
  }
  co_return all;
}

Task<Buffer> reduce_halving(Node& self, std::int64_t M, Buffer all, SubCube sub) {
  const NodeId x = sub.local(self.id());
  // After the step over local dimension d only the blocks whose owners agree with x on bits d..
  // are still held: [lo, lo + 2^d).
  for (int d = sub.n() - 1; d >= 0; --d) {
    const NodeId span = NodeId{1} << d;
    const NodeId lo = x & ~((span << 1) - 1);  // the 2^(d+1) blocks held now
    const NodeId mine = lo | (x & span), theirs = lo | (~x & span);
    auto snd = self.send(sub.dims[d], all.slice(theirs * M, span * M));
    auto rcv = self.recv(sub.dims[d]);
    co_await all_of(snd, rcv);
    add_into(all, rcv.take(), mine * M);
    co_await self.compute(span * M);
  }
  co_return all.slice(x * M, M);
}

Task<Buffer> standard_exchange(Node& self, std::int64_t M, Buffer slots, SubCube sub) {
  const NodeId x = sub.local(self.id()), S = sub.size();
  for (int d = sub.n() - 1; d >= 0; --d) {
    const NodeId bit = NodeId{1} << d;
    Buffer out = Buffer::sized(S / 2 * M);  // timing-only: the size is all there is
    if (self.data_mode()) {
      out = Buffer::of({});
      for (NodeId v = 0; v < S; ++v)
        if ((v & bit) != (x & bit)) out.append(slots.slice(v * M, M));
    }
    auto snd = self.send(sub.dims[d], std::move(out));
    auto rcv = self.recv(sub.dims[d]);
    co_await all_of(snd, rcv);
    const Buffer in = rcv.take();
    if (!self.data_mode()) continue;
    std::int64_t off = 0;
    for (NodeId v = 0; v < S; ++v)
      if ((v & bit) != (x & bit)) {
        slots.write(v * M, in.slice(off, M));
        off += M;
      }
  }
  co_return slots;
}

Task<Buffer> reduce_to(Node& self, NodeId root, std::int64_t M, Buffer own, std::shared_ptr<const Plan> pl,
                       SubCube sub) {
  const std::int64_t r = sub.local(self.id()) ^ root;
  co_await tree_steps(self, *pl, M, r, sub, true, own);  // the broadcast's steps turned round
  if (r != 0) co_return Buffer{};
  co_return own;
}

namespace {

/// The groups of one tree (one part j) this node holds, by relative address g, ascending. A node
/// holds few: a tree's root all 2^k at first, a node the tree reaches at step s 2^(k-1-s), a leaf
/// its own. (A dense vector of 2^k a part on every node was k 2^k buffers a node: 4.5 GB for
/// matmul2d.a3v2 all-port on 2^16 nodes, k = 8, most of its 21 s spent zeroing pages.)
using Groups = std::vector<std::pair<std::int64_t, Buffer>>;

/// The groups whose address agrees with `at` on the dimensions of `mask`, in ascending g, taken
/// out and concatenated.
Buffer take_groups(Groups& held, std::int64_t at, std::int64_t mask) {
  Buffer out;
  std::size_t kept = 0;
  for (std::size_t r = 0; r < held.size(); ++r) {
    if ((held[r].first & mask) == (at & mask)) {
      out.append(held[r].second);
    } else {
      if (kept != r) held[kept] = std::move(held[r]);
      ++kept;
    }
  }
  held.resize(kept);
  return out;
}

/// The reverse of take_groups: `got` cut into parts of `len`, one for each group of the 2^k whose
/// address agrees with `at` on `mask`, in ascending g (the free bits' subsets counted up).
void file_groups(Groups& held, const Buffer& got, std::int64_t len, std::int64_t at, std::int64_t mask,
                 std::int64_t groups) {
  const std::int64_t fixed = at & mask, free = (groups - 1) & ~mask;
  const auto old = static_cast<std::ptrdiff_t>(held.size());
  std::int64_t off = 0, sub = 0;
  do {
    held.emplace_back(fixed | sub, got.slice(off, len));
    off += len;
    sub = (sub - free) & free;
  } while (sub != 0);
  auto by_group = [](const auto& a, const auto& b) { return a.first < b.first; };
  std::inplace_merge(held.begin(), held.begin() + old, held.end(), by_group);
  for (std::size_t r = 1; r < held.size(); ++r)
    if (held[r - 1].first == held[r].first)
      throw std::logic_error("move_groups: group " + std::to_string(held[r].first) + " arrived where it was held");
}

/// Group g of `held`, or null.
const Buffer* find_group(const Groups& held, std::int64_t g) {
  const auto it =
      std::lower_bound(held.begin(), held.end(), g, [](const auto& a, std::int64_t v) { return a.first < v; });
  return it != held.end() && it->first == g ? &it->second : nullptr;
}

/// Splitting or accumulation on k ports in `ksub`, addresses relative to `root`: 2^k groups of G
/// elements (group t: the blocks for the node at relative address t), part j of every group on
/// the SBT rotated by j, phased: in step s tree j crosses local dimension e = (k-1-s+j) mod k.
/// Splitting (steps 0 .. k-1), each holder (zero on the dimensions tree j has still to cross)
/// sends its child across e the groups on the child's side; accumulation runs the same steps
/// backwards, each child sending back all it has gathered. held[j][g]: part j of the group of
/// relative address g, where this node holds it.
Task<> move_groups(Node& self, SubCube ksub, NodeId root, std::int64_t G, std::vector<Groups>& held, bool split) {
  const int k = ksub.n();
  const std::int64_t t = ksub.local(self.id()) ^ root;
  const std::int64_t groups = std::int64_t{1} << k;
  for (int i = 0; i < k; ++i) {
    const int s = split ? i : k - 1 - i;
    std::vector<Op> ops;
    struct Incoming {
      int j;
      std::int64_t at, mask;
      std::size_t op;
    };
    std::vector<Incoming> incoming;
    for (int j = 0; j < k; ++j) {
      if (part_size(G, k, j) == 0) continue;
      const int e = ((k - 1 - s + j) % k + k) % k;
      std::int64_t unprocessed = 0;  // local dimensions tree j crosses in steps s .. k-1
      for (int s2 = s; s2 < k; ++s2) unprocessed |= std::int64_t{1} << (((k - 1 - s2 + j) % k + k) % k);
      const std::int64_t bit = std::int64_t{1} << e, mask = ((groups - 1) & ~unprocessed) | bit;
      const bool holder = (t & unprocessed) == 0, child = (t & unprocessed) == bit;
      if (split ? holder : child) {  // the groups on the far side of e (split) or this side (back)
        ops.push_back(self.send(ksub.dims[e], take_groups(held[j], split ? t | bit : t, mask), j));
      } else if (split ? child : holder) {
        incoming.push_back({j, split ? t : t ^ bit, mask, ops.size()});
        ops.push_back(self.recv(ksub.dims[e], j));
      }
    }
    if (ops.empty()) continue;
    co_await all_of(ops);
    for (const Incoming& in : incoming)
      file_groups(held[in.j], ops[in.op].take(), part_size(G, k, in.j), in.at, in.mask, groups);
  }
}

/// The one-port splitting: across the k dimensions from the highest down, every holder sends its
/// neighbour, as one message, the half of its groups on the neighbour's side (sometoall.sbt).
Task<Buffer> split_halves(Node& self, std::int64_t G, Buffer all, SubCube ksub, NodeId root) {
  const NodeId a = ksub.local(self.id()), t = a ^ root;
  Buffer mine = t == 0 ? std::move(all) : Buffer{};  // the groups of the addresses sharing a's bits above d
  for (int d = ksub.n() - 1; d >= 0; --d) {
    const NodeId bit = NodeId{1} << d;
    const std::int64_t half = (std::int64_t{1} << d) * G;
    if ((t & ((bit << 1) - 1)) == 0) {    // a holder: relative bits d .. 0 clear
      const bool upper = (a & bit) == 0;  // the neighbour's half, in ascending local addresses
      co_await self.send(ksub.dims[d], mine.slice(upper ? half : 0, half));
      mine = mine.slice(upper ? 0 : half, half);
    } else if ((t & bit) != 0 && (t & (bit - 1)) == 0) {  // its receiver
      mine = co_await self.recv(ksub.dims[d]);
    }
  }
  co_return mine;
}

}  // namespace

Task<Buffer> split_groups(Node& self, std::int64_t G, Buffer all, SubCube ksub, NodeId root) {
  const int k = ksub.n();
  const std::int64_t t = ksub.local(self.id()) ^ root, groups = std::int64_t{1} << k;
  if (k == 0) co_return all;
  std::vector<Groups> held(static_cast<std::size_t>(k));
  if (t == 0)
    for (int j = 0; j < k; ++j) {
      held[j].reserve(static_cast<std::size_t>(groups));
      for (std::int64_t g = 0; g < groups; ++g)
        held[j].emplace_back(g, all.slice((g ^ root) * G + part_offset(G, k, j), part_size(G, k, j)));
    }
  co_await move_groups(self, ksub, root, G, held, true);
  Buffer mine;
  for (int j = 0; j < k; ++j)
    if (const Buffer* b = find_group(held[j], t)) mine.append(*b);
  co_return mine;
}

Task<Buffer> accumulate_groups(Node& self, std::int64_t G, Buffer mine, SubCube ksub, NodeId root) {
  const int k = ksub.n();
  const std::int64_t t = ksub.local(self.id()) ^ root, groups = std::int64_t{1} << k;
  if (k == 0) co_return mine;
  std::vector<Groups> held(static_cast<std::size_t>(k));
  for (int j = 0; j < k; ++j) held[j].emplace_back(t, mine.slice(part_offset(G, k, j), part_size(G, k, j)));
  co_await move_groups(self, ksub, root, G, held, false);
  Buffer out;
  if (t != 0) co_return out;
  for (std::int64_t g = 0; g < groups; ++g)
    for (int j = 0; j < k; ++j)
      if (const Buffer* b = find_group(held[j], g ^ root)) out.append(*b);
  co_return out;
}

Task<Buffer> sometoall(Node& self, std::int64_t M, Buffer mine, SubCube sub, int l, NodeId root, bool nport) {
  SubCube lsub, ksub;
  for (int d = 0; d < sub.n(); ++d) (d < l ? lsub : ksub).dims.push_back(sub.dims[d]);
  const std::int64_t G = (std::int64_t{1} << l) * M;  // a group: the blocks for one l-subcube
  if (ksub.n() > 0 && nport) mine = co_await split_groups(self, G, std::move(mine), ksub, root);
  if (ksub.n() > 0 && !nport) mine = co_await split_halves(self, G, std::move(mine), ksub, root);
  if (l == 0) co_return mine;
  // Node (t, u) now holds from source (root, u) the blocks for (t, 0 .. 2^l - 1).
  if (nport)
    co_return co_await alltoall(self, M, std::move(mine), plan(Family::nrsbt, Schedule::phased, l, true), lsub);
  co_return co_await standard_exchange(self, M, std::move(mine), lsub);
}

namespace {
// pipelined_path's parts (source, relay, destination; and the rare path of no hops, or none), a
// coroutine each: a million of them in DPT on 2^16 processors, so each frame holds only what its
// part awaits. One coroutine for all three was 672 bytes (and 1,216 with a receive of its own for
// the relay and the destination: GCC 12 gives every co_await expression's operation and awaiter a
// slot in the frame); the path's dimensions are not kept.
// The order of the operations is each part's own: the source starts every packet's send, a relay
// starts packet i's send once it has it, the destination appends; then all sends end.
/// A part's packet sends, awaited in order: the first request in the frame, the others in a list
/// (a path of one packet, the usual one, then allocates no list: 57 k of A3's 247 k allocations on
/// 2^12 nodes went to lists of one).
struct PacketSends {
  Request first;
  std::vector<Request> rest;
  bool any = false;
  explicit PacketSends(std::int64_t packets) { rest.reserve(static_cast<std::size_t>(packets - 1)); }  // packets >= 1
  void add(Request r) {
    if (any)
      rest.push_back(std::move(r));
    else
      first = std::move(r);
    any = true;
  }
};

Task<> path_source(Node& self, int out_port, int tag, std::int64_t size, std::int64_t packets, Buffer data,
                   Buffer* out) {
  const std::int64_t B = self.packet_elements();
  PacketSends sends(packets);
  for (std::int64_t i = 0; i < packets; ++i)
    sends.add(self.start(self.send(out_port, data.slice(i * B, std::min(B, size - i * B)), tag)));
  co_await sends.first;
  for (Request& r : sends.rest) co_await r;
  *out = Buffer{};
}

Task<> path_relay(Node& self, int in_port, int out_port, int tag, std::int64_t packets, Buffer* out) {
  PacketSends sends(packets);
  for (std::int64_t i = 0; i < packets; ++i) {
    Buffer pkt = co_await self.recv(in_port, tag);
    sends.add(self.start(self.send(out_port, std::move(pkt), tag)));
  }
  co_await sends.first;
  for (Request& r : sends.rest) co_await r;
  *out = Buffer{};
}

/// path_relay for a path of one packet (the usual one: TXP and SPT blocks of at most B): the same
/// receive, send and wait, in a frame without the list of packet sends (448 bytes, not 560: the
/// all-port A3 on 2^16 nodes holds about a million of them at once, 764 -> 704 MiB).
Task<> path_relay_one(Node& self, int in_port, int out_port, int tag, Buffer* out) {
  Buffer pkt = co_await self.recv(in_port, tag);
  Request sent = self.start(self.send(out_port, std::move(pkt), tag));
  co_await sent;
  *out = Buffer{};
}

/// path_destination for a path of one packet: the receive alone, into `out`.
Task<> path_destination_one(Node& self, int in_port, int tag, Buffer* out) { *out = co_await self.recv(in_port, tag); }

Task<> path_destination(Node& self, int in_port, int tag, std::int64_t packets, Buffer* out) {
  Buffer got;
  for (std::int64_t i = 0; i < packets; ++i) {
    Buffer pkt = co_await self.recv(in_port, tag);
    got.append(pkt);
  }
  *out = std::move(got);
}

/// A path of no hops: its source is its destination, which ends with the message's `size`
/// elements (no caller makes one; kept so that the function's contract covers every path).
Task<> path_to_itself(std::int64_t size, Buffer data, Buffer* out) {
  *out = data.slice(0, size);
  co_return;
}

Task<> off_path() { co_return; }
}  // namespace

bool forward_part(Node& self, std::span<const int> dims, NodeId src, int tag, std::int64_t size, Forwards& relays,
                  Buffer* out) {
  if (self.observed() || std::max<std::int64_t>(1, ceil_div(size, self.packet_elements())) != 1) return false;
  NodeId at = src;
  std::size_t hop = 0;
  while (hop < dims.size() && at != self.id()) at ^= NodeId{1} << dims[hop++];
  if (at != self.id() || hop == 0) return false;
  if (hop < dims.size())
    relays.add(dims[hop - 1], dims[hop], tag);
  else
    relays.receive(dims[hop - 1], tag, out);
  return true;
}

Task<> pipelined_path(Node& self, std::span<const int> dims, NodeId src, int tag, std::int64_t size, Buffer data,
                      Buffer* out) {
  const std::int64_t packets = std::max<std::int64_t>(1, ceil_div(size, self.packet_elements()));
  NodeId at = src;
  std::size_t hop = 0;
  while (hop < dims.size() && at != self.id()) at ^= NodeId{1} << dims[hop++];
  if (at != self.id()) return off_path();
  if (dims.empty()) return path_to_itself(size, std::move(data), out);
  if (hop == 0) return path_source(self, dims[0], tag, size, packets, std::move(data), out);
  if (hop < dims.size() && packets == 1) return path_relay_one(self, dims[hop - 1], dims[hop], tag, out);
  if (hop < dims.size()) return path_relay(self, dims[hop - 1], dims[hop], tag, packets, out);
  if (packets == 1) return path_destination_one(self, dims[hop - 1], tag, out);
  return path_destination(self, dims[hop - 1], tag, packets, out);
}

PathParts::PathParts(Node& self, std::size_t paths, bool direct) : self_(self), direct_(direct), relays_(self, paths) {
  roles_.reserve(paths);
}

void PathParts::add(std::span<const int> dims, NodeId src, int tag, std::int64_t size, Buffer data, Buffer* out) {
  if (direct_ && src == self_.id() && !dims.empty()) {  // path_source of one packet
    own_.push_back(self_.start(self_.send(dims[0], data.slice(0, size), tag)));
    return;
  }
  if (direct_ && forward_part(self_, dims, src, tag, size, relays_, out)) return;
  roles_.push_back(pipelined_path(self_, dims, src, tag, size, src == self_.id() ? std::move(data) : Buffer{}, out));
}

Task<> PathParts::done() {
  co_await all_of(std::move(roles_));
  co_await relays_;
  for (Request& q : own_) co_await q;
}

}  // namespace cubesim::routing
