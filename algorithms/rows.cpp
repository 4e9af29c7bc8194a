#include "algorithms/rows.hpp"

#include <cmath>

#include "sim/time.hpp"

namespace cubesim {

RowTerms sbt_doubling_terms(std::int64_t M, int n, std::int64_t B) {
  RowTerms t;
  t.elements = ((std::int64_t{1} << n) - 1) * M;
  for (int i = 0; i < n; ++i) t.startups += ceil_div((std::int64_t{1} << i) * M, B);
  t.messages = n;
  return t;
}

RowTerms balanced_levels_terms(std::int64_t M, int n, std::int64_t B) {
  RowTerms t;
  if (n == 0) return t;
  t.elements = ceil_div(((std::int64_t{1} << n) - 1) * M, n);
  for (int i = 1; i <= n; ++i) t.startups += ceil_div(binomial(n, i) * M, n * B);
  t.messages = n;
  return t;
}

RowTerms standard_exchange_terms(std::int64_t M, int n, std::int64_t B) {
  const std::int64_t half = (std::int64_t{1} << n) * M / 2;
  return {.startups = ceil_div(half, B) * n, .elements = half * n, .messages = n};
}

RowTerms nrsbt_alltoall_terms(std::int64_t M, int n, std::int64_t B) {
  if (n == 0) return {};
  const std::int64_t half = (std::int64_t{1} << n) * M / 2;
  return {.startups = ceil_div(half, n * B) * n, .elements = half, .messages = n};
}

RowTerms sometoall_terms(std::int64_t M, int k, int l, std::int64_t B, bool nport) {
  RowTerms t;
  if (l > 0) {  // the all-to-all in the l-subcubes
    const std::int64_t step = nport ? ceil_div(M, l) << (l - 1) : M << (l - 1);
    t += RowTerms{ceil_div(step, B), step, 1}.times(l);
  }
  if (k > 0) {  // the splitting
    const std::int64_t group = nport ? ceil_div(M << l, k) : M << l;
    for (int i = 0; i < k; ++i) t += RowTerms{ceil_div(group << i, B), group << i, 1};
  }
  return t;
}

RowTerms ring_terms(std::int64_t M, int n, std::int64_t B) {
  const std::int64_t steps = (std::int64_t{1} << n) - 1;
  return {.startups = ceil_div(M, B) * steps, .elements = M * steps, .messages = steps};
}

RowTerms rotated_gray_terms(std::int64_t M, int n, std::int64_t B) {
  if (n == 0) return {};
  const std::int64_t steps = (std::int64_t{1} << n) - 1, part = ceil_div(M, n);
  return {.startups = ceil_div(part, B) * steps, .elements = part * steps, .messages = steps};
}

Prediction predict_sbt_doubling(const Setup& s, std::string source) {
  const std::int64_t N = s.topology.size(), n = s.topology.dim(), M = s.params.M, B = s.params.B;
  Prediction pr;
  pr.source = std::move(source);
  take_terms(pr, sbt_doubling_terms(M, static_cast<int>(n), B));
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
    take_terms(pr, rotated_gray_terms(M, static_cast<int>(n), B));
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
  take_terms(pr, balanced_levels_terms(M, static_cast<int>(n), B));
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
