#pragma once
/// The algorithm tables of the docs, generated from the registry (`cubesim list algorithms
/// --markdown [--summary]`): README.md and docs/primitives.md hold them between markers, and
/// scripts/gen-docs.sh rewrites them; a test fails when a committed table differs.
#include <string>

#include "algorithms/registry.hpp"

namespace cubesim {

/// Every algorithm, one row per port model: the row it predicts, the relation, and the worst
/// deviations the exact grid measures (the registry's figures, which that test checks).
std::string algorithms_markdown(const Registry& reg);
/// Every algorithm in one row: name, what it does, the paper's section and rows.
std::string algorithms_summary_markdown(const Registry& reg);

/// The markers around a generated block in a Markdown file.
inline constexpr const char* kGeneratedBegin = "<!-- BEGIN generated: ";
inline constexpr const char* kGeneratedEnd = "<!-- END generated -->";

}  // namespace cubesim
