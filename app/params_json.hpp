#pragma once
/// Parameters as JSON, one way for configs, trace headers and replay (algorithms/params.hpp).
#include <optional>
#include <string>

#include "algorithms/params.hpp"
#include "app/io.hpp"

namespace cubesim {

/// Sets `spec`'s field of `p` from `v`; returns what is wrong with `v`, or nothing.
std::optional<std::string> param_from_json(Params& p, const ParamSpec& spec, const ojson& v);
/// The value of `spec` in `p`, or null when it is not given (its unset value).
ojson param_to_json(const Params& p, const ParamSpec& spec);
/// Every parameter given in `p`, by key (a trace header's and a resume file's "params").
ojson params_to_json(const Params& p);
/// A report's "params" of a run: the rows marked always_reported, then every other row given, in
/// kParams order.
ojson report_params(const Params& p);

}  // namespace cubesim
