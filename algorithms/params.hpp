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
  std::string_view meaning;
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
    {"root",
     &Params::root,
     0,
     "the source (or destination) node of a one-to-all (all-to-one) operation",
     {},
     nullptr,
     0,
     true},
    {"M",
     &Params::M,
     0,
     "elements: the message, or each node's block, or the block for each destination",
     {},
     nullptr,
     0,
     true},
    {"B", &Params::B, 1, "packet elements in force (default the machine's B_m)", {}, nullptr, 0, true},
    {"P", &Params::P, 0, "matrix rows"},
    {"Q", &Params::Q, 0, "matrix columns (inner dimension of a product)"},
    {"R", &Params::R, 0, "columns of the second factor"},
    {"N1", &Params::N1, 0, "processor rows of a 2-D grid"},
    {"N2", &Params::N2, 0, "processor columns of a 2-D grid"},
    {"k", &Params::k, 0, "dimensions of a first phase (hybrid: SBT steps; some-to-all: splitting steps)"},
    {"K", &Params::K, 1,
     "successive matrix products computed one after another (matmul2d.outer, matmul2d.cannon; default 1)"},
    {"B_copy",
     &Params::B_copy,
     0,
     "blocks shorter than this are copied into one buffer before sending (default the machine's B_copy; 0: never)",
     {},
     nullptr,
     -1},
    {"layout_before", &Params::layout_before, 0,
     "the matrix layout before: consecutive, cyclic, consecutive_gray or cyclic_gray rows", kLayoutNames},
    {"layout_after", &Params::layout_after, 0, "the layout of the transposed matrix after (the same names)",
     kLayoutNames},
    {"variant", &Params::variant, 0, "which of the paper's numbered algorithms (convert.cyclic: Algorithm 1, 2 or 3)"},
    {"perm",
     nullptr,
     0,
     "a dimension permutation: a list whose i-th entry is the dimension that address bit i moves to",
     {},
     &Params::perm},
    {"axis", &Params::axis, 0,
     "the grid axis a mesh collective runs along, on every line of that axis at once (0: the fastest-varying "
     "coordinate)"},
    {"grid",
     nullptr,
     1,
     "a processor grid on a hypercube: 1-3 powers of two whose product is N, axis 0 on the lowest address bits, each "
     "axis Gray-coded (default: the algorithm's)",
     {},
     &Params::grid},
}};

/// The row of `key`, or null.
constexpr const ParamSpec* find_param(std::string_view key) {
  for (const ParamSpec& p : kParams)
    if (p.key == key) return &p;
  return nullptr;
}

}  // namespace cubesim
