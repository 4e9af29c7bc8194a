#pragma once
/// Matrix multiplication on the Boolean cube (Johnsson & Ho, TR-530 §5): A <- C D + E, C of
/// P x Q, D of Q x R, E and A of P x R (the paper's notation; docs/matmul.md has the crosswalk to
/// C = A B of FOH and Gao). Shared by the one- and two-dimensional algorithms: the matrices'
/// values, blocks of them, the local multiply, the check of the product, and the cost terms.
///
/// Values are small integers (|c|, |d| <= 3, 0 <= e <= 2), so every product and sum is exact in
/// doubles and the check compares exactly. The reference product is computed once, outside the
/// simulation, in verify.
///
/// Blocks and padding. A matrix of X rows on N1 processors is cut into blocks of ceil(X/N1) rows
/// (TR-530 §5: "⌈P/N1⌉"); the last blocks are padded with zero rows (columns likewise). Every node
/// holds, sends and multiplies whole padded blocks, so the tables' ⌈X/N⌉ terms are the block
/// sizes; where a table writes PQ/N we read P⌈Q/N⌉ (equal when N divides Q), and arithmetic is
/// charged on padded blocks too (2 Q ⌈P/N1⌉ ⌈R/N2⌉ is "2Q per element of the node's block").
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/collectives/tree_routing.hpp"
#include "algorithms/rows.hpp"

namespace cubesim::matmul {

enum class Which { C, D, E };
Element value(Which m, std::int64_t i, std::int64_t j);

/// A rectangle of a matrix: rows [r0, r0 + rows), columns [c0, c0 + cols).
struct Rect {
  std::int64_t r0 = 0, rows = 0, c0 = 0, cols = 0;
  [[nodiscard]] std::int64_t size() const { return rows * cols; }
};

/// The matrix sizes of a run.
struct Shape {
  std::int64_t P = 0, Q = 0, R = 0;
  [[nodiscard]] std::int64_t rows(Which m) const { return m == Which::D ? Q : P; }
  [[nodiscard]] std::int64_t cols(Which m) const { return m == Which::C ? Q : R; }
};

/// The block `r` of matrix m, row-major; entries outside the matrix (padding) are 0.
Buffer block(bool data, const Shape& sh, Which m, const Rect& r);

/// A[a_off + i lda + j] += sum_{t<k} C(i, t) D(t, j) for i < m, j < n, in data mode (the caller
/// charges the flops). An operand's element (i, t) is buf[off + i ld + t cs]: cs = 1 for a
/// row-major block, ld = 1 and cs = its row length for a block held transposed.
struct Operand {
  const Buffer* buf;
  std::int64_t off, ld, cs = 1;
};
void multiply_add(Buffer& A, std::int64_t a_off, std::int64_t lda, Operand C, Operand D, std::int64_t m, std::int64_t k,
                  std::int64_t n);

/// Checks that node x ends with the A block `where(x)` (row-major, padding 0) of A = C D + E.
Verdict verify_product(const Setup& s, const std::vector<Buffer>& results, const std::function<Rect(NodeId)>& where);

/// The same for K successive products of the same matrices, each node's K blocks one after the other.
Verdict verify_products(const Setup& s, const std::vector<Buffer>& results, std::int64_t K,
                        const std::function<Rect(NodeId)>& where);

/// Common checks: a hypercube (unless `any_topology`: the mesh algorithms), P, Q, R >= 1, B within
/// the machine's B_m, and in data mode no more than 2^27 elements held by all nodes at once
/// (`peak_per_node` elements each; the timing mode has no such limit).
std::optional<SetupError> check(const Setup& s, std::int64_t peak_per_node, bool any_topology = false);

/// The collectives the algorithms compose, on a subcube (the whole cube, a processor row or
/// column), one-port or all-port by the machine (all-port where the subcube has more than one
/// dimension):
///  - gather: all-to-all broadcast, SBT-b(1,.) by recursive doubling / nRSBT-b(n,.) by depth;
///  - reduce: all-to-all reduction, the same backwards (recursive halving / nRSBT-b reversed);
///  - alltoall: all-to-all personalized, the standard exchange SBT-p(1,.) / nRSBT-p(n,.) phased.
bool all_port(const Node& self, const routing::SubCube& sub);
Task<Buffer> gather(Node& self, std::int64_t M, Buffer own, routing::SubCube sub);
Task<Buffer> reduce(Node& self, std::int64_t M, Buffer partials, routing::SubCube sub);
Task<Buffer> alltoall(Node& self, std::int64_t M, Buffer slots, routing::SubCube sub);

/// Charges one local product of m x k by k x n: 2 m k n flops, then the machine's loop overhead
/// t_elem for each of the m n result elements (FOH eq. (16): the Mark II's 119 µs M^2; a delay on
/// the critical path). The mesh family charges its products so; TR-530's algorithms charge flops
/// only, as its Table 7 does (their loop overhead on a calibrated machine is t_call, a kernel
/// call's overhead, which the kernel charges on every compute: docs/model.md "Node software").
Task<> local_product(Node& self, std::int64_t m, std::int64_t k, std::int64_t n);

/// Charges the one-off initialisation of a node's result block of `elements` (FOH §5.1: "the
/// time taken to initialize the matrix C to zero at the beginning of the multiplication"): the
/// machine's t_init each, a delay, once per multiplication. 0 on every formula preset.
Task<> initialise(Node& self, std::int64_t elements);

/// Runs `a` and `b` (operations on disjoint links: a row's and a column's) at once on an all-port
/// machine, one after the other otherwise.
Task<> both(Node& self, Task<> a, Task<> b);

/// A prediction from row terms (TR-530 Tables 6-12 are sums of Table 1-4 rows) and flops.
Prediction from_terms(const Setup& s, const RowTerms& t, std::int64_t flops, std::string source);

}  // namespace cubesim::matmul
