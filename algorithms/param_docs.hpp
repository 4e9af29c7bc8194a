#pragma once
/// What each parameter means for one algorithm (issue 33): the generic rows of kParams
/// (algorithms/params.hpp) and, where a key means something else for some algorithms, their own
/// rows here. `cubesim describe ALGORITHM`, docs/reference.md and configs/schema.json's
/// descriptions are all written from these; tests/test_describe.cpp holds every algorithm that
/// takes a per-algorithm key (ParamSpec::per_algorithm) to a row of its own.
#include <span>
#include <string>
#include <string_view>

#include "algorithms/params.hpp"

namespace cubesim {

/// A per-algorithm row: for the algorithms `algorithms` names, `key` means `meaning`; an empty
/// unit, default or bounds keeps kParams' own.
struct ParamOverride {
  /// "broadcast.sbt" (one algorithm), "broadcast.*" (every algorithm of an operation), or several
  /// of either separated by spaces.
  std::string_view algorithms;
  std::string_view key;
  std::string_view meaning;
  std::string_view unit{};
  std::string_view default_text{};
  std::string_view bounds{};
};

/// A parameter's documentation for one algorithm, resolved.
struct ParamDoc {
  std::string key, meaning, unit, default_text, bounds;
  bool own = false;  ///< from a per-algorithm row, not only kParams
};

/// Every per-algorithm row, in the order of the table.
std::span<const ParamOverride> param_overrides();
/// Whether `pattern` (a ParamOverride::algorithms) names `algorithm`.
bool names_algorithm(std::string_view pattern, std::string_view algorithm);
/// `key` for `algorithm`: its per-algorithm row where one names it (the first), else kParams'.
/// Throws std::invalid_argument for a key kParams lacks.
ParamDoc param_doc(std::string_view algorithm, std::string_view key);
/// configs/schema.json's "description" of a parameter: the generic meaning, unit, default and
/// bounds, in one sentence.
std::string param_schema_description(const ParamSpec& spec);

}  // namespace cubesim
