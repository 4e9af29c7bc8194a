#pragma once
/// Algorithm parameters (DESIGN.md "Algorithm names"): the struct, and the one table of their
/// keys that config parsing, trace headers, replay and configs/schema.json all follow (a test
/// checks the schema against it). A new parameter is one field and one row here.
///
/// Three kinds of parameter: integers; names (a string from a fixed list, kept as its index:
/// the matrix layouts of TR-572 §2); and lists of integers (a dimension permutation, TR-572 §7).
#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace cubesim {

/// Matrix layouts of TR-572 §2, Tables 1-2 (one-dimensional partitionings by rows): the
/// assignment (consecutive or cyclic) and the encoding of the processor field (binary or Gray).
inline constexpr std::array<std::string_view, 4> kLayoutNames{"consecutive", "cyclic", "consecutive_gray",
                                                              "cyclic_gray"};

/// 0 means "not given" for B, N1, N2; -1 for B_copy.
struct Params {
  std::int64_t root = 0;
  std::int64_t M = 0;  ///< the papers' M (see DESIGN.md for its meaning per operation)
  std::int64_t B = 0;  ///< packet elements in force; resolved to the machine's B_m when not given
  std::int64_t P = 0, Q = 0, R = 0;
  std::int64_t N1 = 0, N2 = 0;
  std::int64_t k = 0;  ///< dimensions of a first phase (allgather.hybrid: SBT steps; some-to-all: splitting steps)
  std::int64_t K = 0;  ///< successive products (matmul2d.outer, matmul2d.cannon); 0: one
  std::int64_t B_copy = -1;        ///< TR-572 §8.1: shorter blocks are copied into one buffer; -1: the machine's
  std::int64_t layout_before = 0;  ///< index into kLayoutNames
  std::int64_t layout_after = 0;   ///< index into kLayoutNames
  std::int64_t variant = 0;        ///< which of a paper's numbered algorithms (convert.cyclic: 1, 2 or 3)
  std::vector<std::int64_t> perm;  ///< a dimension permutation: perm[i] = the dimension that bit i moves to
  std::int64_t axis = 0;           ///< the grid axis a mesh collective runs along (algorithms/mesh/lattice.hpp)
  std::vector<std::int64_t> grid;  ///< a processor grid's extents on a hypercube (empty: the algorithm's default)
};

struct ParamSpec {
  std::string_view key;                   ///< the key in a config's "params" and a trace header's "params"
  std::int64_t Params::*field = nullptr;  ///< integers and names
  std::int64_t schema_minimum = 0;        ///< configs/schema.json's "minimum" (the algorithm's check says more)
  /// What the key means for every algorithm that takes it. `cubesim describe`, docs/reference.md
  /// and configs/schema.json's descriptions are written from these four and from the
  /// per-algorithm rows of algorithms/param_docs.cpp (issue 33).
  std::string_view meaning;
  std::string_view unit;          ///< what the value counts: "elements", "node", "processors", ...
  std::string_view default_text;  ///< the value in force when the key is left out
  std::string_view bounds;        ///< what the algorithms' checks accept
  /// The meaning differs from algorithm to algorithm (M: a message, a block, a block per
  /// destination, a matrix order): every algorithm that takes the key has its own row in
  /// algorithms/param_docs.cpp (a test holds every such algorithm to it).
  bool per_algorithm = false;
  std::span<const std::string_view> names{};          ///< a name parameter: its values
  std::vector<std::int64_t> Params::*list = nullptr;  ///< a list parameter
  std::int64_t unset = 0;  ///< the field's value when not given (not written to trace headers)
  /// A report echoes the row's value in every run, given or not (root, M, and B resolved to the
  /// machine's B_m); the other rows only where given.
  bool always_reported = false;
  [[nodiscard]] constexpr bool is_name() const { return !names.empty(); }
  [[nodiscard]] constexpr bool is_list() const { return list != nullptr; }
};

/// Every parameter, in the order reports and trace headers list them.
inline constexpr std::array<ParamSpec, 17> kParams{{
    {.key = "root",
     .field = &Params::root,
     .meaning = "the source (or destination) node of a one-to-all (all-to-one) operation",
     .unit = "node address",
     .default_text = "0",
     .bounds = "0 <= root < N, the topology's nodes",
     .always_reported = true},
    {.key = "M",
     .field = &Params::M,
     .meaning = "the papers' M: the message, or each node's block, or the block for each destination, or a matrix "
                "order (see the algorithm)",
     .unit = "elements",
     .default_text = "none (required)",
     .bounds = ">= 1",
     .per_algorithm = true,
     .always_reported = true},
    {.key = "B",
     .field = &Params::B,
     .schema_minimum = 1,
     .meaning = "the packet size in force: a message of S elements travels as ceil(S/B) packets (not the machine "
                "key packet_elements, B_m, the largest packet the machine allows, which bounds it)",
     .unit = "elements per packet",
     .default_text = "the machine's packet_elements (B_m)",
     .bounds = "1 <= B <= B_m",
     .always_reported = true},
    {.key = "P",
     .field = &Params::P,
     .meaning = "rows of C and of the product A (A <- C D + E: C is P x Q, D is Q x R)",
     .unit = "matrix rows",
     .default_text = "none (required)",
     .bounds = ">= 1"},
    {.key = "Q",
     .field = &Params::Q,
     .meaning = "the inner dimension of the product: columns of C, rows of D",
     .unit = "matrix columns",
     .default_text = "none (required)",
     .bounds = ">= 1"},
    {.key = "R",
     .field = &Params::R,
     .meaning = "columns of D and of the product A",
     .unit = "matrix columns",
     .default_text = "none (required)",
     .bounds = ">= 1"},
    {.key = "N1",
     .field = &Params::N1,
     .meaning = "processor rows of the 2-D grid the nodes form (N1 x N2 = N, Gray-coded: rows on the high address "
                "bits)",
     .unit = "processors",
     .default_text = "2^ceil(n/2)",
     .bounds = "a power of two dividing N"},
    {.key = "N2",
     .field = &Params::N2,
     .meaning = "processor columns of the 2-D grid (N1 x N2 = N)",
     .unit = "processors",
     .default_text = "N / N1",
     .bounds = "a power of two, N1 N2 = N"},
    {.key = "k",
     .field = &Params::k,
     .meaning = "dimensions of a first phase (hybrid: SBT steps; some-to-all: splitting steps)",
     .unit = "cube dimensions",
     .default_text = "none (required)",
     .bounds = "0 <= k <= n",
     .per_algorithm = true},
    {.key = "K",
     .field = &Params::K,
     .schema_minimum = 1,
     .meaning = "successive matrix products computed one after another (the same C, D and E each time)",
     .unit = "products",
     .default_text = "1",
     .bounds = ">= 1"},
    {.key = "B_copy",
     .field = &Params::B_copy,
     .meaning = "blocks shorter than this are copied into one buffer before sending (TR-572 §8.1)",
     .unit = "elements",
     .default_text = "the machine's B_copy",
     .bounds = ">= 0 (0: never copy)",
     .unset = -1},
    {.key = "layout_before",
     .field = &Params::layout_before,
     .meaning = "the matrix layout before: rows assigned consecutively or cyclically, the processor field binary or "
                "Gray-coded (TR-572 §2)",
     .unit = "a name",
     .default_text = "consecutive",
     .bounds = "consecutive, cyclic, consecutive_gray or cyclic_gray",
     .names = kLayoutNames},
    {.key = "layout_after",
     .field = &Params::layout_after,
     .meaning = "the layout of the transposed matrix after (the same names)",
     .unit = "a name",
     .default_text = "consecutive",
     .bounds = "consecutive, cyclic, consecutive_gray or cyclic_gray",
     .names = kLayoutNames},
    {.key = "variant",
     .field = &Params::variant,
     .meaning = "which of the paper's numbered algorithms (see the algorithm)",
     .unit = "a number",
     .default_text = "0",
     .bounds = "the algorithm's variants",
     .per_algorithm = true},
    {.key = "perm",
     .meaning = "a dimension permutation: a list whose i-th entry is the dimension that address bit i moves to",
     .unit = "a list of dimensions",
     .default_text = "none (required)",
     .bounds = "a permutation of 0 .. n-1",
     .list = &Params::perm},
    {.key = "axis",
     .field = &Params::axis,
     .meaning = "the grid axis a line collective runs along, on every line of that axis at once (0: the "
                "fastest-varying coordinate)",
     .unit = "a grid axis",
     .default_text = "0",
     .bounds = "0 <= axis < the grid's axes"},
    {.key = "grid",
     .schema_minimum = 1,
     .meaning = "the processor grid: on a hypercube 1-3 powers of two whose product is N, axis 0 on the lowest "
                "address bits, each axis Gray-coded; on a mesh or torus a grid emulated on its shape (Gao Lemma 4)",
     .unit = "a list of 1-3 extents",
     .default_text = "the algorithm's (a mesh's or torus's own shape)",
     .bounds = "extents >= 1 multiplying to N",
     .list = &Params::grid},
}};

/// The row of `key`, or null.
constexpr const ParamSpec* find_param(std::string_view key) {
  for (const ParamSpec& p : kParams)
    if (p.key == key) return &p;
  return nullptr;
}

}  // namespace cubesim
