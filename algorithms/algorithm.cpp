#include "algorithms/algorithm.hpp"

#include <algorithm>
#include <cstdio>

#include "sim/time.hpp"

namespace cubesim {

std::string relation_name(Relation r) {
  switch (r) {
    case Relation::exact:
      return "exact";
    case Relation::upper_bound:
      return "upper_bound";
    case Relation::approx:
      return "approx";
    case Relation::lower_bound:
      return "lower_bound";
  }
  return "?";
}

std::int64_t model_bytes(const Setup& s, MemoryModel m, double elements) {
  const double bytes =
      m.node_bytes * static_cast<double>(s.topology.size()) + (s.data_mode ? m.element_bytes * elements : 0.0);
  return bytes >= 9.2e18 ? INT64_MAX : static_cast<std::int64_t>(bytes);
}

std::int64_t default_elements(const Setup& s) {
  const Params& p = s.params;
  const double N = static_cast<double>(s.topology.size());
  const double e = std::max(N * static_cast<double>(p.M), static_cast<double>(p.P) * static_cast<double>(p.Q) +
                                                              static_cast<double>(p.Q) * static_cast<double>(p.R) +
                                                              static_cast<double>(p.P) * static_cast<double>(p.R));
  return e >= 9.2e18 ? INT64_MAX : static_cast<std::int64_t>(e);
}

std::int64_t default_memory(const Setup& s) {
  return model_bytes(s, kDefaultMemory, static_cast<double>(default_elements(s)));
}

std::int64_t algorithm_memory(const AlgorithmInfo& a, const Setup& s) {
  return a.memory ? a.memory(s) : default_memory(s);
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

Time prediction_time(const Machine& m, const Prediction& p) {
  const char* w = "the predicted time";
  std::int64_t t = checked_mul(p.startups, m.tau.count(), "the predicted start-ups times tau");
  t = checked_add(t, checked_mul(p.msg_startups, m.tau_msg.count(), "the predicted messages times tau_msg"), w);
  t = checked_add(t, checked_mul(p.element_transfers, m.t_c.count(), "the predicted element transfers times t_c"), w);
  t = checked_add(t, checked_mul(p.flops, m.t_a.count(), "the predicted flops times t_a"), w);
  t = checked_add(t, checked_mul(p.copies, m.t_copy.count(), "the predicted copies times t_copy"), w);
  t = checked_add(t, p.delays.count(), w);
  return Time::ps(t);
}

std::int64_t binomial(int n, int k) {
  if (k < 0 || k > n) return 0;
  std::int64_t c = 1;
  for (int i = 1; i <= k; ++i) c = c * (n - k + i) / i;
  return c;
}

namespace {
/// a b, or INT64_MAX where it overflows (then beyond every limit anyway); a, b >= 0.
std::int64_t saturating_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}
std::string count_text(std::int64_t v) {
  if (v == INT64_MAX) return "more than 9.2e18";
  char buf[32];
  std::snprintf(buf, sizeof buf, v < 1'000'000'000'000 ? "%.0f" : "%.3g", static_cast<double>(v));
  return buf;
}
std::string beyond(const std::string& what, std::int64_t v, int log2_limit, const char* unit) {
  return "the " + what + " is " + count_text(v) + " " + unit + ", beyond the 2^" + std::to_string(log2_limit) +
         " a run may take (64-bit counts and times stay exact below it)";
}
}  // namespace

std::optional<SetupError> check_sizes(const Setup& s) {
  const Params& p = s.params;
  for (const ParamSpec& spec : kParams)
    if (spec.field != nullptr && p.*spec.field > kMaxElements)
      return SetupError{"/params/" + std::string(spec.key),
                        std::string(spec.key) + " = " + std::to_string(p.*spec.field) + " is beyond 2^40"};
  const std::int64_t NM = saturating_mul(s.topology.size(), p.M);
  if (NM > kMaxElements) return SetupError{"/params/M", beyond("busiest node's data, N M,", NM, 40, "elements")};
  const std::pair<const char*, std::int64_t> dims[] = {{"P", p.P}, {"Q", p.Q}, {"R", p.R}};
  for (int a = 0; a < 3; ++a)
    for (int b = a + 1; b < 3; ++b)
      if (const std::int64_t e = saturating_mul(dims[a].second, dims[b].second); e > kMaxElements)
        return SetupError{"/params/" + std::string(dims[dims[a].second >= dims[b].second ? a : b].first),
                          beyond(std::string("matrix of ") + dims[a].first + " x " + dims[b].first, e, 40, "elements")};
  const std::int64_t flops =
      saturating_mul(saturating_mul(saturating_mul(p.P, p.Q), p.R), std::max<std::int64_t>(p.K, 1));
  if (flops > kMaxFlops)
    return SetupError{p.K > 1 ? "/params/K" : "/params/Q", beyond("product P Q R K", flops, 50, "multiply-adds")};
  return std::nullopt;
}

std::optional<SetupError> check_cube_collective(const Setup& s, bool uses_root) {
  if (s.topology.kind() != Topology::Kind::hypercube)
    return SetupError{"/topology/kind", "this algorithm runs on a hypercube, not a " + s.topology.kind_name()};
  if (uses_root && (s.params.root < 0 || s.params.root >= s.topology.size()))
    return SetupError{"/params/root",
                      "root " + std::to_string(s.params.root) + " is not a node of the " + s.topology.describe()};
  return check_block(s);
}

std::optional<SetupError> check_block(const Setup& s) {
  if (s.params.M < 1) return SetupError{"/params/M", "M must be at least 1 element"};
  if (s.params.B < 1 || s.params.B > s.machine.packet_elements)
    return SetupError{"/params/B", "B = " + std::to_string(s.params.B) + " must be between 1 and the machine's B_m = " +
                                       std::to_string(s.machine.packet_elements)};
  return std::nullopt;
}

}  // namespace cubesim
