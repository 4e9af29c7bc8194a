#include "algorithms/transpose/matrix.hpp"

#include <string>

#include "algorithms/collectives/verify.hpp"

namespace cubesim::tr572 {

std::optional<SetupError> check_matrix(const Setup& s) {
  if (s.topology.kind() != Topology::Kind::hypercube)
    return SetupError{"/topology", "TR-572's algorithms run on hypercubes"};
  for (auto [key, v] : {std::pair{"P", s.params.P}, std::pair{"Q", s.params.Q}})
    if (log2_exact(v) < 0)
      return SetupError{
          std::string("/params/") + key,
          std::string(key) + " must be a power of two (TR-572 §2: P = 2^p, Q = 2^q), got " + std::to_string(v)};
  const int m = log2_exact(s.params.P) + log2_exact(s.params.Q);
  if (m > (s.data_mode ? 24 : 40))
    return SetupError{"/params/Q", "PQ = 2^" + std::to_string(m) + " elements is more than " +
                                       (s.data_mode ? std::string("2^24 in data mode (use \"mode\": \"timing\")")
                                                    : std::string("2^40"))};
  if (s.params.B < 1 || s.params.B > s.machine.packet_elements)
    return SetupError{"/params/B",
                      "B must be between 1 and the machine's B_m (" + std::to_string(s.machine.packet_elements) + ")"};
  return std::nullopt;
}

// ---- one-dimensional ----

OneD one_d(const Params& p, const Topology& t) {
  OneD o;
  o.P = p.P;
  o.Q = p.Q;
  o.N = t.size();
  o.n = t.dim();
  o.before = RowLayout{static_cast<int>(p.layout_before), o.P, o.N};
  o.after = RowLayout{static_cast<int>(p.layout_after), o.Q, o.N};
  return o;
}

std::optional<SetupError> check_one_d(const Setup& s) {
  if (auto e = check_matrix(s)) return e;
  const NodeId N = s.topology.size();
  if (s.params.P < N)
    return SetupError{"/params/P", "a one-dimensional partitioning needs P >= N (" + std::to_string(N) + " nodes)"};
  if (s.params.Q < N)
    return SetupError{"/params/Q", "a one-dimensional partitioning needs Q >= N (" + std::to_string(N) +
                                       " nodes): every node gets rows of A^T"};
  return std::nullopt;
}

Buffer OneD::initial(NodeId x, bool data) const {
  return Buffer::make(D(), data, [&](std::int64_t i) { return element(before.row_at(x, i / Q), i % Q, Q); });
}

Buffer OneD::block_for(const Buffer& mine, NodeId y) const {
  const std::int64_t rows = before.per_node(), cols = after.per_node();
  if (!mine.has_data()) return Buffer::sized(rows * cols);
  std::vector<Element> v(static_cast<std::size_t>(rows * cols));
  auto src = mine.values();
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      v[static_cast<std::size_t>(r * cols + c)] = src[static_cast<std::size_t>(r * Q + after.row_at(y, c))];
  return Buffer::of(std::move(v));
}

Buffer OneD::assemble(NodeId y, const std::vector<Buffer>& from, bool data) const {
  if (!data) return Buffer::sized(D());
  const std::int64_t rows = before.per_node(), cols = after.per_node();
  std::vector<Element> out(static_cast<std::size_t>(D()));
  for (NodeId x = 0; x < N; ++x) {
    const Buffer& b = from[static_cast<std::size_t>(x)];
    if (b.size() != rows * cols || !b.has_data())
      throw std::logic_error("node " + std::to_string(y) + " holds no complete block from node " + std::to_string(x));
    auto v = b.values();
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) {
        const std::int64_t u = before.row_at(x, r), col = after.row_at(y, c);  // A(u, col) = A^T(col, u)
        out[static_cast<std::size_t>(after.position(col) * P + u)] = v[static_cast<std::size_t>(r * cols + c)];
      }
  }
  return Buffer::of(std::move(out));
}

Verdict OneD::verify(const Setup& s, const std::vector<Buffer>& results) const {
  return verify_each(
      s, results, [&](NodeId) { return D(); },
      [&](NodeId y, std::int64_t i) {
        const std::int64_t v = after.row_at(y, i / P), u = i % P;  // A^T(v, u) = A(u, v)
        return element(u, v, Q);
      });
}

// ---- two-dimensional ----

TwoD two_d(const Params& p, const Topology& topo, bool gray_cols) {
  TwoD t;
  t.P = p.P;
  t.Q = p.Q;
  t.n = topo.dim();
  t.h = t.n / 2;
  t.side = NodeId{1} << t.h;
  t.gray_cols = gray_cols;
  return t;
}

std::optional<SetupError> check_two_d(const Setup& s) {
  if (auto e = check_matrix(s)) return e;
  const int n = s.topology.dim();
  if (n % 2 != 0)
    return SetupError{
        "/topology/dim",
        "a two-dimensional partitioning needs an even cube dimension (TR-572 §6.1: n_r = n_c = n/2), got " +
            std::to_string(n)};
  const NodeId side = NodeId{1} << (n / 2);
  if (s.params.P < side) return SetupError{"/params/P", "P must be at least 2^(n/2) = " + std::to_string(side)};
  if (s.params.Q < side) return SetupError{"/params/Q", "Q must be at least 2^(n/2) = " + std::to_string(side)};
  return std::nullopt;
}

Buffer TwoD::initial(NodeId x, bool data) const {
  const std::int64_t I = block_row(x), J = block_col(x);
  return Buffer::make(D(), data, [&](std::int64_t i) { return element(I * Pb() + i / Qb(), J * Qb() + i % Qb(), Q); });
}

Buffer TwoD::assemble(const Buffer& received, bool data) const {
  if (!data) return Buffer::sized(D());
  if (received.size() != D() || !received.has_data()) throw std::logic_error("a node ends without a whole block");
  std::vector<Element> out(static_cast<std::size_t>(D()));
  auto v = received.values();
  for (std::int64_t i = 0; i < Pb(); ++i)
    for (std::int64_t j = 0; j < Qb(); ++j)
      out[static_cast<std::size_t>(j * Pb() + i)] = v[static_cast<std::size_t>(i * Qb() + j)];
  return Buffer::of(std::move(out));
}

Verdict TwoD::verify(const Setup& s, const std::vector<Buffer>& results) const {
  // Node y holds A^T's block (J, I) = (block_row(y), block_col(y)), (Q/side) x (P/side) row-major.
  return verify_each(
      s, results, [&](NodeId) { return D(); },
      [&](NodeId y, std::int64_t i) {
        const std::int64_t J = block_row(y), I = block_col(y);
        const std::int64_t v = J * Qb() + i / Pb(), u = I * Pb() + i % Pb();
        return element(u, v, Q);
      });
}

Task<Buffer> step_by_step(Node& self, const std::vector<int>& dims, std::function<NodeId(NodeId)> start,
                          std::function<NodeId(NodeId)> route, std::vector<std::pair<NodeId, Buffer>> held,
                          std::optional<std::vector<NodeId>> candidates) {
  const NodeId x = self.id(), N = self.size();
  // The blocks followed (ascending: the receives are posted in this order) and where each is.
  std::vector<NodeId> blocks;
  if (candidates) {
    blocks = std::move(*candidates);
  } else {
    blocks.resize(static_cast<std::size_t>(N));
    for (NodeId s = 0; s < N; ++s) blocks[static_cast<std::size_t>(s)] = s;
  }
  std::vector<NodeId> pos(blocks.size());
  for (std::size_t i = 0; i < blocks.size(); ++i) pos[i] = start(blocks[i]);
  for (int d : dims) {
    const NodeId bit = NodeId{1} << d, y = x ^ bit;
    std::vector<Op> ops;
    std::size_t sends = 0;
    for (auto& [s, b] : held)
      if (route(s) & bit) {
        ops.push_back(self.send(d, std::move(b), static_cast<int>(s)));
        ++sends;
      }
    std::vector<NodeId> incoming;
    for (std::size_t i = 0; i < blocks.size(); ++i)
      if (pos[i] == y && (route(blocks[i]) & bit)) incoming.push_back(blocks[i]);
    for (NodeId s : incoming) ops.push_back(self.recv(d, static_cast<int>(s)));
    co_await all_of(ops);
    std::erase_if(held, [&](const auto& h) { return (route(h.first) & bit) != 0; });
    for (std::size_t i = 0; i < incoming.size(); ++i) held.emplace_back(incoming[i], ops[sends + i].take());
    for (std::size_t i = 0; i < blocks.size(); ++i)
      if (route(blocks[i]) & bit) pos[i] ^= bit;
  }
  if (held.empty()) co_return Buffer{};
  if (held.size() != 1) throw std::logic_error("a node ends with " + std::to_string(held.size()) + " blocks");
  co_return std::move(held.front().second);
}

}  // namespace cubesim::tr572
