#pragma once
/// Algorithm parameters (DESIGN.md "Algorithm names"): the struct, and the one table of their
/// keys that config parsing, trace headers, replay and configs/schema.json all follow (a test
/// checks the schema against it). A new parameter is one field and one row here.
#include <array>
#include <cstdint>
#include <string_view>

namespace cubesim {

/// 0 means "not given" for B, N1, N2.
struct Params {
  std::int64_t root = 0;
  std::int64_t M = 0;  ///< the papers' M (see DESIGN.md for its meaning per operation)
  std::int64_t B = 0;  ///< packet elements in force; resolved to the machine's B_m when not given
  std::int64_t P = 0, Q = 0, R = 0;
  std::int64_t N1 = 0, N2 = 0;
  std::int64_t k = 0;  ///< dimensions of a first phase (allgather.hybrid: SBT steps; some-to-all: splitting steps)
};

struct ParamSpec {
  std::string_view key;        ///< the key in a config's "params" and a trace header's "params"
  std::int64_t Params::*field;
  std::int64_t schema_minimum;  ///< configs/schema.json's "minimum" (the algorithm's check says more)
  std::string_view meaning;
};

/// Every parameter, in the order reports and trace headers list them.
inline constexpr std::array<ParamSpec, 9> kParams{{
    {"root", &Params::root, 0, "the source (or destination) node of a one-to-all (all-to-one) operation"},
    {"M", &Params::M, 0, "elements: the message, or each node's block, or the block for each destination"},
    {"B", &Params::B, 1, "packet elements in force (default the machine's B_m)"},
    {"P", &Params::P, 0, "matrix rows"},
    {"Q", &Params::Q, 0, "matrix columns (inner dimension of a product)"},
    {"R", &Params::R, 0, "columns of the second factor"},
    {"N1", &Params::N1, 0, "processor rows of a 2-D grid"},
    {"N2", &Params::N2, 0, "processor columns of a 2-D grid"},
    {"k", &Params::k, 0, "dimensions of a first phase (hybrid: SBT steps; some-to-all: splitting steps)"},
}};

/// The row of `key`, or null.
constexpr const ParamSpec* find_param(std::string_view key) {
  for (const ParamSpec& p : kParams)
    if (p.key == key) return &p;
  return nullptr;
}

}  // namespace cubesim
