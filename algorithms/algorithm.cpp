#include "algorithms/algorithm.hpp"

#include "sim/time.hpp"

namespace cubesim {

std::string relation_name(Relation r) {
  switch (r) {
    case Relation::exact: return "exact";
    case Relation::upper_bound: return "upper_bound";
    case Relation::approx: return "approx";
    case Relation::lower_bound: return "lower_bound";
  }
  return "?";
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

Time prediction_time(const Machine& m, const Prediction& p) {
  const char* w = "predicted time";
  std::int64_t t = checked_mul(p.startups, m.tau.count(), w);
  t = checked_add(t, checked_mul(p.msg_startups, m.tau_msg.count(), w), w);
  t = checked_add(t, checked_mul(p.element_transfers, m.t_c.count(), w), w);
  t = checked_add(t, checked_mul(p.flops, m.t_a.count(), w), w);
  t = checked_add(t, checked_mul(p.copies, m.t_copy.count(), w), w);
  t = checked_add(t, p.delays.count(), w);
  return Time::ps(t);
}

std::int64_t binomial(int n, int k) {
  if (k < 0 || k > n) return 0;
  std::int64_t c = 1;
  for (int i = 1; i <= k; ++i) c = c * (n - k + i) / i;
  return c;
}

std::optional<SetupError> check_cube_collective(const Setup& s, bool uses_root) {
  if (s.topology.kind() != Topology::Kind::hypercube)
    return SetupError{"/topology/kind", "this algorithm runs on a hypercube, not a " + s.topology.kind_name()};
  if (uses_root && (s.params.root < 0 || s.params.root >= s.topology.size()))
    return SetupError{"/params/root", "root " + std::to_string(s.params.root) + " is not a node of the " +
                                          s.topology.describe()};
  if (s.params.M < 1) return SetupError{"/params/M", "M must be at least 1 element"};
  if (s.params.B < 1 || s.params.B > s.machine.packet_elements)
    return SetupError{"/params/B", "B = " + std::to_string(s.params.B) + " must be between 1 and the machine's B_m = " +
                                       std::to_string(s.machine.packet_elements)};
  return std::nullopt;
}

}  // namespace cubesim
