#include "algorithms/registry.hpp"

#include <cmath>
#include <stdexcept>

#include "sim/time.hpp"

namespace cubesim {

std::string relation_name(Relation r) {
  switch (r) {
    case Relation::exact: return "exact";
    case Relation::upper_bound: return "upper_bound";
    case Relation::approx: return "approx";
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
  return Time::ps(t);
}

Prediction predict_sbt_doubling(const Setup& s, std::string source) {
  const std::int64_t N = s.topology.size(), n = s.topology.dim(), M = s.params.M, B = s.params.B;
  Prediction pr;
  pr.source = std::move(source);
  pr.element_transfers = (N - 1) * M;
  for (std::int64_t i = 0; i < n; ++i) pr.startups += ceil_div((std::int64_t{1} << i) * M, B);
  pr.msg_startups = n;
  pr.b_opt = static_cast<double>(N * M) / 2;
  pr.min_startups = static_cast<double>(n);
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

std::int64_t binomial(int n, int k) {
  if (k < 0 || k > n) return 0;
  std::int64_t c = 1;
  for (int i = 1; i <= k; ++i) c = c * (n - k + i) / i;
  return c;
}

Prediction predict_rotated_gray(const Setup& s, std::string source) {
  const std::int64_t N = s.topology.size(), n = s.topology.dim(), M = s.params.M, B = s.params.B;
  Prediction pr;
  pr.source = std::move(source);
  if (n > 0) {
    const std::int64_t part = ceil_div(M, n);
    pr.element_transfers = part * (N - 1);
    pr.startups = ceil_div(part, B) * (N - 1);
    pr.msg_startups = N - 1;
    pr.b_opt = static_cast<double>(M) / static_cast<double>(n);
    pr.min_startups = static_cast<double>(N - 1);
  }
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

Prediction predict_sbt_levels(const Setup& s, std::string source) {
  const std::int64_t N = s.topology.size(), n = s.topology.dim(), M = s.params.M, B = s.params.B;
  Prediction pr;
  pr.source = std::move(source);
  pr.element_transfers = N * M / 2;
  for (int i = 0; i < n; ++i) pr.startups += ceil_div(binomial(static_cast<int>(n) - 1, i) * M, B);
  pr.msg_startups = n;
  if (n > 1) pr.b_opt = static_cast<double>(N * M) / std::sqrt(2 * M_PI * static_cast<double>(n - 1));
  pr.min_startups = static_cast<double>(n);
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

Prediction predict_balanced_levels(const Setup& s, std::string source) {
  const std::int64_t N = s.topology.size(), n = s.topology.dim(), M = s.params.M, B = s.params.B;
  Prediction pr;
  pr.source = std::move(source);
  pr.element_transfers = n > 0 ? ceil_div((N - 1) * M, n) : 0;
  for (int i = 1; i <= n; ++i) pr.startups += ceil_div(binomial(static_cast<int>(n), i) * M, n * B);
  pr.msg_startups = n;
  pr.b_opt = std::sqrt(2 / M_PI) * static_cast<double>(N * M) /
             std::pow(static_cast<double>(std::max<std::int64_t>(n, 1)), 1.5);
  pr.min_startups = static_cast<double>(n);
  pr.time = prediction_time(s.machine, pr);
  return pr;
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

void Registry::add(AlgorithmInfo info) {
  const std::string name = info.name;
  if (!algorithms_.emplace(name, std::move(info)).second) throw std::logic_error("algorithm registered twice: " + name);
}

const AlgorithmInfo* Registry::find(const std::string& name) const {
  auto it = algorithms_.find(name);
  return it == algorithms_.end() ? nullptr : &it->second;
}

std::vector<const AlgorithmInfo*> Registry::all() const {
  std::vector<const AlgorithmInfo*> v;
  for (const auto& [k, a] : algorithms_) v.push_back(&a);
  return v;
}

Registry make_registry() {
  Registry r;
  register_broadcast(r);
  register_allgather(r);
  register_personalized(r);
  register_reduction(r);
  return r;
}

}  // namespace cubesim
