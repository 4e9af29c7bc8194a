#include "app/params_json.hpp"

namespace cubesim {

namespace {
constexpr std::int64_t kMaxParam = std::int64_t{1} << 50;

std::optional<std::string> integer(const ojson& v, std::int64_t& out, const std::string& what) {
  if (!v.is_number_integer()) return what + " must be an integer";
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxParam))
    return what + " is too large";
  const auto x = v.get<std::int64_t>();
  if (x < 0 || x > kMaxParam)
    return what + " must be an integer from 0 to 2^50 (a node's data is further limited to 2^40 elements), got " +
           std::to_string(x);
  out = x;
  return std::nullopt;
}
}  // namespace

std::optional<std::string> param_from_json(Params& p, const ParamSpec& spec, const ojson& v) {
  const std::string key(spec.key);
  if (spec.is_list()) {
    if (!v.is_array() || v.size() > 64) return key + " must be a list of at most 64 integers";
    std::vector<std::int64_t> xs;
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::int64_t x = 0;
      if (auto e = integer(v[i], x, key + "[" + std::to_string(i) + "]")) return e;
      xs.push_back(x);
    }
    p.*(spec.list) = std::move(xs);
    return std::nullopt;
  }
  if (spec.is_name()) {
    std::string known;
    for (std::size_t i = 0; i < spec.names.size(); ++i) {
      if (v.is_string() && v.get<std::string>() == spec.names[i]) {
        p.*(spec.field) = static_cast<std::int64_t>(i);
        return std::nullopt;
      }
      known += (known.empty() ? "" : ", ") + std::string(spec.names[i]);
    }
    return key + " must be one of " + known + (v.is_string() ? ", got \"" + v.get<std::string>() + "\"" : "");
  }
  return integer(v, p.*(spec.field), key);
}

ojson param_to_json(const Params& p, const ParamSpec& spec) {
  if (spec.is_list()) {
    const auto& xs = p.*(spec.list);
    return xs.empty() ? ojson() : ojson(xs);
  }
  const std::int64_t x = p.*(spec.field);
  if (x == spec.unset && spec.key != "root") return ojson();
  if (spec.is_name())
    return x >= 0 && x < static_cast<std::int64_t>(spec.names.size())
               ? ojson(std::string(spec.names[static_cast<std::size_t>(x)]))
               : ojson();
  return x;
}

ojson params_to_json(const Params& p) {
  ojson params = ojson::object();
  for (const ParamSpec& spec : kParams)
    if (ojson v = param_to_json(p, spec); !v.is_null()) params[std::string(spec.key)] = std::move(v);
  return params;
}

ojson report_params(const Params& p) {
  ojson params = ojson::object();
  for (const ParamSpec& spec : kParams) {
    if (spec.always_reported && spec.field != nullptr)
      params[std::string(spec.key)] = p.*(spec.field);
    else if (ojson v = param_to_json(p, spec); !v.is_null())
      params[std::string(spec.key)] = std::move(v);
  }
  return params;
}

}  // namespace cubesim
