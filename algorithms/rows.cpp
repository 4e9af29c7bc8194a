#include "algorithms/rows.hpp"

#include <cmath>

#include "sim/time.hpp"

namespace cubesim {

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

void pipeline_row(Prediction& pr, const Setup& s, std::int64_t k) {
  const std::int64_t M = s.params.M, B = s.params.B;
  pr.startups = ceil_div(M, B) + k;
  pr.msg_startups = pr.startups;
  pr.element_transfers = M + k * std::min(B, M);
  if (k <= 0) return;
  const double tc = static_cast<double>(s.machine.t_c.count()), tau = static_cast<double>(s.machine.tau.count());
  pr.b_opt = std::sqrt(static_cast<double>(M) * tau / (static_cast<double>(k) * tc));
  pr.min_startups = static_cast<double>(k) + 2 * std::sqrt(static_cast<double>(k * M) * tc / tau);
}

}  // namespace cubesim
