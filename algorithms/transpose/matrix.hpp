#pragma once
/// The matrix of TR-572 and its layouts (§2, Tables 1-2), shared by the transposition and
/// permutation algorithms: a P x Q matrix A, P = 2^p and Q = 2^q, element (u, v) carried as the
/// value u Q + v (its own index: a check needs nothing else).
///
/// One-dimensional partitioning by rows (RowLayout): consecutive (row u on block u / (P/N)) or
/// cyclic (row u on block u mod N), the block index binary or Gray-coded (Table 1). Locally a
/// node keeps its rows in increasing order, each row in increasing column order. The transpose
/// A^T (Q x P) is laid out the same way, by its rows (the columns of A).
///
/// Two-dimensional partitioning (TwoD, §6): N = 2^n nodes, n even, a 2^(n/2) x 2^(n/2) grid of
/// consecutive blocks; node x = (x_r || x_c), the row index in the high n/2 bits. Block (I, J),
/// (P/2^(n/2)) x (Q/2^(n/2)) row-major, sits on node (I || J), or (I || G(J)) with Gray-coded
/// column indices (§6.3). A^T's block (J, I) goes to node (J || I) (or (J || G(I))): the whole
/// block of node x goes to tr(x). A node transposes its block locally when it arrives (the
/// "local transpose" of §5 and §6, not in the paper's formulas and not charged).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/embedding/gray.hpp"

namespace cubesim::tr572 {

inline Element element(std::int64_t u, std::int64_t v, std::int64_t Q) { return static_cast<Element>(u * Q + v); }

struct RowLayout {
  int kind = 0;            ///< index into kLayoutNames
  std::int64_t count = 0;  ///< rows of the matrix laid out
  NodeId N = 1;
  [[nodiscard]] bool cyclic() const { return kind % 2 == 1; }
  [[nodiscard]] bool gray() const { return kind >= 2; }
  [[nodiscard]] std::int64_t per_node() const { return count / N; }
  [[nodiscard]] NodeId owner(std::int64_t u) const {
    const NodeId b = cyclic() ? u % N : u / per_node();
    return gray() ? gray::encode(b) : b;
  }
  /// Where row u lies among its node's rows.
  [[nodiscard]] std::int64_t position(std::int64_t u) const { return cyclic() ? u / N : u % per_node(); }
  /// The j-th row of node x.
  [[nodiscard]] std::int64_t row_at(NodeId x, std::int64_t j) const {
    const NodeId b = gray() ? gray::decode(x) : x;
    return cyclic() ? j * N + b : b * per_node() + j;
  }
};

/// A one-dimensional transpose (or layout conversion) on N = 2^n nodes: A by rows in `before`,
/// A^T by rows in `after`. Each node holds D = PQ/N elements and sends D/N to every node.
struct OneD {
  std::int64_t P = 0, Q = 0;
  NodeId N = 1;
  int n = 0;
  RowLayout before, after;
  [[nodiscard]] std::int64_t D() const { return P * Q / N; }
  [[nodiscard]] std::int64_t block() const { return D() / N; }
  /// Node x's rows of A.
  [[nodiscard]] Buffer initial(NodeId x, bool data) const;
  /// The elements a node sends to node y, in its local order (`mine`: its rows of A).
  [[nodiscard]] Buffer block_for(const Buffer& mine, NodeId y) const;
  /// Node y's rows of A^T from the blocks it received, indexed by source node. The local
  /// rearrangement (TR-572 §5's final local transpose) is not charged.
  [[nodiscard]] Buffer assemble(NodeId y, const std::vector<Buffer>& from, bool data) const;
  [[nodiscard]] Verdict verify(const Setup& s, const std::vector<Buffer>& results) const;
};
OneD one_d(const Params& p, const Topology& t);
/// A hypercube, P and Q powers of two with P, Q >= N, PQ within the data-mode limit.
std::optional<SetupError> check_one_d(const Setup& s);

struct TwoD {
  std::int64_t P = 0, Q = 0;
  int n = 0, h = 0;        ///< h = n/2
  NodeId side = 1;         ///< 2^h
  bool gray_cols = false;  ///< column block indices Gray-coded (§6.3)
  [[nodiscard]] std::int64_t Pb() const { return P / side; }
  [[nodiscard]] std::int64_t Qb() const { return Q / side; }
  [[nodiscard]] std::int64_t D() const { return Pb() * Qb(); }
  [[nodiscard]] NodeId node_of(NodeId I, NodeId J) const { return (I << h) | (gray_cols ? gray::encode(J) : J); }
  [[nodiscard]] NodeId block_row(NodeId x) const { return x >> h; }
  [[nodiscard]] NodeId block_col(NodeId x) const {
    const NodeId c = x & (side - 1);
    return gray_cols ? gray::decode(c) : c;
  }
  /// Where node x's block must go: the node of A^T's block (J, I).
  [[nodiscard]] NodeId target(NodeId x) const { return node_of(block_col(x), block_row(x)); }
  [[nodiscard]] Buffer initial(NodeId x, bool data) const;
  /// Node y's block of A^T from the block of A it received (the local transpose, not charged).
  [[nodiscard]] Buffer assemble(const Buffer& received, bool data) const;
  [[nodiscard]] Verdict verify(const Setup& s, const std::vector<Buffer>& results) const;
};
TwoD two_d(const Params& p, const Topology& t, bool gray_cols);
/// A hypercube of even dimension, P and Q powers of two with P, Q >= 2^(n/2).
std::optional<SetupError> check_two_d(const Setup& s);

/// The B_copy in force: the parameter, or the machine's (TR-572 §8.1).
inline std::int64_t b_copy(const Params& p, const Machine& m) { return p.B_copy >= 0 ? p.B_copy : m.b_copy; }

/// The common limit on the matrix: PQ <= 2^24 elements in data mode, 2^40 in timing mode.
std::optional<SetupError> check_matrix(const Setup& s);

/// Moves whole blocks step by step (the one-port exchange steps of TR-572 §8.2.1): in step k
/// every node sends, across dims[k], each block it holds whose remaining route crosses it, and
/// receives those coming its way. Block s starts at start(s) and crosses the dimensions in
/// route(s). `held`: the blocks this node starts with, by source. Returns the block that ends
/// here (empty when none); more than one is a logic error. `candidates`, when given, ascending:
/// the only blocks that can ever pass through this node (a superset; the rest are not followed),
/// so that a node tracks a few blocks instead of all N (2^16 nodes: 32 GB and 2^32 steps for the
/// whole run otherwise).
Task<Buffer> step_by_step(Node& self, const std::vector<int>& dims, std::function<NodeId(NodeId)> start,
                          std::function<NodeId(NodeId)> route, std::vector<std::pair<NodeId, Buffer>> held,
                          std::optional<std::vector<NodeId>> candidates = std::nullopt);

/// A parallel swapping (TR-572 Definition 18): disjoint pairs of address bits exchanged at once.
using Swapping = std::vector<std::pair<int, int>>;
/// permute.dimensions' decomposition of perm (perm[p] = where bit p goes) into parallel
/// swappings, applied in order: variant 0 Lemma 15's construction, 1 two involutions. Defined in
/// permute.cpp.
std::vector<Swapping> dimension_swappings(const std::vector<int>& perm, int variant);

/// convert.cyclic's data movement: counts[src * N + dst] = elements going from src to dst
/// (TR-572 §6.2: all-to-all personalized when P, Q >= N). Defined in convert_cyclic.cpp.
std::vector<std::int64_t> conversion_counts(const Params& p, const Topology& t);

/// TR-572 Theorem 2, the MPT's closed form (seconds; tau the per-packet start-up, D = PQ/N), its
/// case (1..4, in the theorem's order) and B_opt. Defined in transpose_mpt.cpp.
struct Theorem2 {
  double time = 0, b_opt = 0;
  int case_number = 0;
};
Theorem2 theorem2(std::int64_t D, int n, double tau, double tc);
/// TR-572 Theorem 3: every two-dimensional transpose takes at least max(n tau, (PQ/2N) t_c).
inline double theorem3(std::int64_t D, int n, double tau, double tc) {
  return std::max(n * tau, static_cast<double>(D) / 2 * tc);
}

}  // namespace cubesim::tr572
