#include "algorithms/param_docs.hpp"

#include <array>
#include <stdexcept>

namespace cubesim {

namespace {

/// Sources: DESIGN.md "Algorithm names" (M per operation) and the comments that open each
/// algorithm's file (the papers' sections they cite).
constexpr std::array kOverrides{
    // ---- M: what the papers' M counts ----
    ParamOverride{
        .algorithms = "broadcast.gc broadcast.sbt broadcast.nesbt broadcast.nrsbt broadcast.sbnt broadcast.tcbt",
        .key = "M",
        .meaning = "the message: the root sends these M elements to every other node (TR-530 §4.1)"},
    ParamOverride{.algorithms = "broadcast.pipe broadcast.tree broadcast.split",
                  .key = "M",
                  .meaning = "the message: on every line along `axis`, the node at coordinate `root` sends these M "
                             "elements to every node of its line"},
    ParamOverride{.algorithms = "allgather.cra allgather.gcea allgather.sbt allgather.hybrid allgather.sbnt "
                                "allgather.nrsbt",
                  .key = "M",
                  .meaning = "each node's block: every node starts with M elements and ends with all N blocks, N M "
                             "elements (TR-530 §4.2)"},
    ParamOverride{.algorithms = "allgather.ring",
                  .key = "M",
                  .meaning = "each node's block: every node of a line of L nodes along `axis` ends with the line's L "
                             "blocks, L M elements (Gao's Complete-Broadcast)"},
    ParamOverride{.algorithms = "scatter.*",
                  .key = "M",
                  .meaning = "the block for each destination: the root sends M elements to each other node, (N-1) M "
                             "in all (TR-530 §4.3)"},
    ParamOverride{.algorithms = "alltoall.*",
                  .key = "M",
                  .meaning = "the block for each destination: every node sends M elements to each other node, "
                             "(N-1) M each (TR-530 §4.4)"},
    ParamOverride{.algorithms = "sometoall.sbt sometoall.sbnt",
                  .key = "M",
                  .meaning = "the block for each destination: each of the 2^(n-k) sending nodes sends M elements to "
                             "every node (TR-572 §3.3)"},
    ParamOverride{.algorithms = "alltosome.sbt alltosome.sbnt",
                  .key = "M",
                  .meaning = "the block for each destination: every node sends M elements to each of the 2^(n-k) "
                             "receiving nodes (TR-572 §3.3)"},
    ParamOverride{.algorithms = "reduce.sbt",
                  .key = "M",
                  .meaning = "the vector: every node holds M elements; the root ends with their element-wise sum"},
    ParamOverride{.algorithms = "allreduce.sbt",
                  .key = "M",
                  .meaning = "the vector: every node holds M elements and ends with the element-wise sum over all "
                             "nodes"},
    ParamOverride{.algorithms = "reduce_scatter.sbt",
                  .key = "M",
                  .meaning = "the block for each destination: every node holds N blocks of M elements; node j ends "
                             "with block j summed over all nodes"},
    ParamOverride{.algorithms = "reduce_scatter.ring",
                  .key = "M",
                  .meaning = "the block for each destination: every node of a line of L nodes along `axis` holds L "
                             "blocks of M elements and ends with its own block summed along the line"},
    ParamOverride{.algorithms = "shift.gc shift.ring",
                  .key = "M",
                  .meaning = "each node's block: every node sends its M elements to its ring successor"},
    ParamOverride{.algorithms = "exchange.grid exchange.grid_phased",
                  .key = "M",
                  .meaning = "each node's block: every node sends its M elements to each of its 2d grid neighbours"},
    ParamOverride{.algorithms = "permute.*",
                  .key = "M",
                  .meaning = "each node's block: it moves whole to the node whose address is the node's own with its "
                             "bits permuted (TR-572 §7)"},
    ParamOverride{.algorithms = "matmul.foh matmul.foh_ring",
                  .key = "M",
                  .meaning = "FOH's matrix order: M x M matrices, the same as P = Q = R = M (give M, or P, Q and R)",
                  .default_text = "none: give M, or P, Q and R"},
    // ---- k ----
    ParamOverride{.algorithms = "allgather.hybrid matmul1d.a1.hybrid",
                  .key = "k",
                  .meaning = "SBT exchange steps first (dimensions 0 .. k-1, gathering 2^k blocks), then the GCEA on "
                             "the other n-k dimensions with 2^k-block super-blocks (TR-530 §5.1, Fig. 10)"},
    ParamOverride{.algorithms = "sometoall.sbt alltosome.sbt sometoall.sbnt alltosome.sbnt",
                  .key = "k",
                  .meaning = "splitting steps: the 2^(n-k) nodes with addresses below 2^(n-k) are the ones that send "
                             "(some-to-all) or receive (all-to-some) (TR-572 §3.3)"},
    // ---- variant ----
    ParamOverride{.algorithms = "convert.cyclic",
                  .key = "variant",
                  .meaning = "TR-572 §6.2's Algorithm 1 (exchange-row, exchange-column, then the transpose step by "
                             "step: 2n steps), 2 (a local transpose first: n steps) or 3 (n steps, no transpose "
                             "before); 0 is 3",
                  .default_text = "0 (Algorithm 3)",
                  .bounds = "0, 1, 2 or 3"},
    ParamOverride{.algorithms = "permute.dimensions",
                  .key = "variant",
                  .meaning = "0: Lemma 15's construction (at most ceil(log2 n) parallel swappings); 1: two "
                             "involutions (two parallel swappings; ours, not the paper's)",
                  .default_text = "0 (Lemma 15)",
                  .bounds = "0 or 1"},
    ParamOverride{.algorithms = "matmul2d.cannon",
                  .key = "variant",
                  .meaning = "0: the alignment by CRA shifts along the Gray-code rings; 1: the cube alignment, shifts "
                             "by powers of two (TR-530 §5.2.1: at most 2 log N1 and 2 log N2 steps)",
                  .default_text = "0 (CRA shifts)",
                  .bounds = "0 or 1"},
    ParamOverride{.algorithms = "matmul.gao3d",
                  .key = "variant",
                  .meaning = "0: the ring collectives along each axis (Gao's algorithm); 1, on a hypercube only: the "
                             "subcube collectives (SBT-b one-port, nRSBT-b all-port)",
                  .default_text = "0 (ring collectives)",
                  .bounds = "0, or 1 on a hypercube"},
    // ---- keys whose generic row needs a word for some algorithms ----
    ParamOverride{.algorithms = "broadcast.pipe broadcast.tree broadcast.split",
                  .key = "root",
                  .meaning = "the coordinate, along each line of `axis`, of the node that broadcasts on that line",
                  .unit = "grid coordinate",
                  .bounds = "0 <= root < L, the line's length"},
    ParamOverride{.algorithms = "transpose.* convert.cyclic",
                  .key = "P",
                  .meaning = "rows of the P x Q matrix to transpose (TR-572 §2: P = 2^p)",
                  .bounds = "a power of two; 2-D partitionings (transpose.spt, dpt, mpt, ...): >= 2^(n/2)"},
    ParamOverride{.algorithms = "transpose.* convert.cyclic",
                  .key = "Q",
                  .meaning = "columns of the P x Q matrix to transpose (TR-572 §2: Q = 2^q)",
                  .bounds = "a power of two; 2-D partitionings (transpose.spt, dpt, mpt, ...): >= 2^(n/2)"},
    ParamOverride{.algorithms = "matmul.foh matmul.foh_ring",
                  .key = "P",
                  .meaning = "rows of C and of the product A (A <- C D + E: C is P x Q, D is Q x R); or give M",
                  .default_text = "M"},
    ParamOverride{.algorithms = "matmul.foh matmul.foh_ring",
                  .key = "Q",
                  .meaning = "the inner dimension of the product: columns of C, rows of D; or give M",
                  .default_text = "M"},
    ParamOverride{.algorithms = "matmul.foh matmul.foh_ring",
                  .key = "R",
                  .meaning = "columns of D and of the product A; or give M",
                  .default_text = "M"},
    ParamOverride{.algorithms = "matmul.foh",
                  .key = "N1",
                  .meaning = "processor rows N1 of FOH's N1 x N0 torus (§4: N0 = N/N1 columns, N0 <= N1, N1/N0 an "
                             "integer); on a torus or mesh, its own rows",
                  .default_text = "2^ceil(n/2) on a hypercube; the torus's rows",
                  .bounds = "a power of two dividing N, N1 >= N/N1"},
    ParamOverride{
        .algorithms = "matmul2d.outer",
        .key = "N1",
        .meaning = "processor rows of the square grid the pipelined outer product runs on (N1 = N2 = sqrt(N))",
        .default_text = "sqrt(N)",
        .bounds = "sqrt(N): n even"},
    ParamOverride{.algorithms = "matmul2d.outer",
                  .key = "N2",
                  .meaning = "processor columns of the square grid (N1 = N2 = sqrt(N))",
                  .default_text = "sqrt(N)",
                  .bounds = "sqrt(N): n even"},
};

}  // namespace

std::span<const ParamOverride> param_overrides() { return kOverrides; }

bool names_algorithm(std::string_view pattern, std::string_view algorithm) {
  std::size_t at = 0;
  while (at < pattern.size()) {
    std::size_t end = pattern.find(' ', at);
    if (end == std::string_view::npos) end = pattern.size();
    const std::string_view one = pattern.substr(at, end - at);
    if (one == algorithm) return true;
    // "op.*": every algorithm whose name starts with "op."
    if (one.size() > 1 && one.ends_with(".*") && algorithm.starts_with(one.substr(0, one.size() - 1))) return true;
    at = end + 1;
  }
  return false;
}

ParamDoc param_doc(std::string_view algorithm, std::string_view key) {
  const ParamSpec* spec = find_param(key);
  if (spec == nullptr) throw std::invalid_argument("no parameter \"" + std::string(key) + "\"");
  ParamDoc d{std::string(key),          std::string(spec->meaning),
             std::string(spec->unit),   std::string(spec->default_text),
             std::string(spec->bounds), false};
  for (const ParamOverride& o : kOverrides)
    if (o.key == key && names_algorithm(o.algorithms, algorithm)) {
      d.meaning = o.meaning;
      if (!o.unit.empty()) d.unit = o.unit;
      if (!o.default_text.empty()) d.default_text = o.default_text;
      if (!o.bounds.empty()) d.bounds = o.bounds;
      d.own = true;
      break;
    }
  return d;
}

std::string param_schema_description(const ParamSpec& spec) {
  std::string s = std::string(spec.meaning) + ". Unit: " + std::string(spec.unit) +
                  "; default: " + std::string(spec.default_text) + "; accepted: " + std::string(spec.bounds) + ".";
  if (spec.per_algorithm) s += " Its meaning differs by algorithm: `cubesim describe ALGORITHM`.";
  return s;
}

}  // namespace cubesim
