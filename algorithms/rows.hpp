#pragma once
/// Table rows that several algorithms share (TR-530 Tables 1-4): the terms of each, written once.
/// Each returns the row's exact terms with the relation "exact"; the caller states another
/// relation where its schedule departs from the row.
#include <cstdint>
#include <string>

#include "algorithms/algorithm.hpp"

namespace cubesim {

/// The terms of one Table 1-4 row for a block of M elements on an n-cube with packets of B, for
/// the algorithms that are sums of rows (TR-530 §5, Tables 5-12).
struct RowTerms {
  std::int64_t startups = 0, elements = 0, messages = 0;
  RowTerms& operator+=(const RowTerms& o) {
    startups += o.startups, elements += o.elements, messages += o.messages;
    return *this;
  }
  /// The same row k times over (k steps of it).
  [[nodiscard]] RowTerms times(std::int64_t k) const { return {startups * k, elements * k, messages * k}; }
};
/// Sets pr's start-ups, element transfers and messages (tau_msg terms) to t's.
inline void take_terms(Prediction& pr, const RowTerms& t) {
  pr.startups = t.startups;
  pr.element_transfers = t.elements;
  pr.msg_startups = t.messages;
}
/// Table 2 SBT-b(1,N) (recursive doubling; reversed: the all-to-all reduction): (N-1)M,
/// sum_{i<n} ceil(2^i M / B), n messages.
RowTerms sbt_doubling_terms(std::int64_t M, int n, std::int64_t B);
/// Table 2 SBnT-b(n,N) and nRSBT-b(n,N): ceil((N-1)M/n), sum_{i=1}^{n} ceil(C(n,i) M / (nB)), n.
RowTerms balanced_levels_terms(std::int64_t M, int n, std::int64_t B);
/// Table 4 SBT-p(1,N) (the standard exchange): n steps of NM/2: (n/2)NM, ceil(NM/(2B)) n, n.
RowTerms standard_exchange_terms(std::int64_t M, int n, std::int64_t B);
/// Table 4 nRSBT-p(n,N): NM/2, ceil(NM/(2nB)) n, n.
RowTerms nrsbt_alltoall_terms(std::int64_t M, int n, std::int64_t B);
/// TR-572 §3.3 Table 3, some-to-all personalized (routing::sometoall): 2^l sources each send M
/// elements to every node of a (k + l)-cube; k splitting steps, step i (i = k-1 .. 0) moving 2^i
/// groups of 2^l M, then the all-to-all personalized inside the l-subcubes; one message a step.
/// One-port: 2^(l+i) M a step, then l steps of 2^(l-1) M (the standard exchange). k ports: the
/// largest part of each step's data on one port: ceil(2^l M / k) a group in the splitting, and
/// ceil(M/l) of each of the 2^(l-1) blocks in the all-to-all (nRSBT-p(l,.) phased); the printed
/// row where k divides 2^l M and l divides M.
RowTerms sometoall_terms(std::int64_t M, int k, int l, std::int64_t B, bool nport);
/// Table 2 GCEA(1,N) and CRA(1,N): (N-1)M, ceil(M/B)(N-1), N-1 messages.
RowTerms ring_terms(std::int64_t M, int n, std::int64_t B);
/// Table 2 GCEA(n,N): part = ceil(M/n) on every port: (N-1) part, (N-1) ceil(part/B), N-1.
RowTerms rotated_gray_terms(std::int64_t M, int n, std::int64_t B);

/// The row TR-530 Table 2 SBT-b(1,N) and Table 3 SBT-p(1,1) share: element transfers (N-1)M,
/// start-ups sum_{i<n} ceil(2^i M / B), one message per dimension, B_opt = NM/2, min start-ups n.
Prediction predict_sbt_doubling(const Setup& s, std::string source);
/// GC(n,1) (Table 1) and GCEA(n,N) (Table 2): N-1 steps of one part on every port, the largest
/// part ceil(M/n) setting each step: element transfers ceil(M/n)(N-1), start-ups
/// ceil(ceil(M/n)/B)(N-1), B_opt M/n, min start-ups N-1.
Prediction predict_rotated_gray(const Setup& s, std::string source);
/// SBT-b(n,N) (Table 2) and SBT-p(n,1) (Table 3): the SBT's busiest port carries C(n-1, i)
/// blocks in step i: element transfers NM/2, start-ups sum_{i<n} ceil(C(n-1,i) M / B),
/// B_opt NM / sqrt(2 pi (n-1)), min start-ups n.
Prediction predict_sbt_levels(const Setup& s, std::string source);
/// SBnT-b(n,N), nRSBT-b(n,N) (Table 2), SBnT-p(n,1), nRSBT-p(n,1) (Table 3): C(n,i)/n blocks a
/// port in step i: element transfers (N-1)M/n, start-ups sum_{i=1}^{n} ceil(C(n,i) M / (nB)),
/// B_opt sqrt(2/pi) NM / n^1.5, min start-ups n. (Exact terms; the caller states the relation.)
Prediction predict_balanced_levels(const Setup& s, std::string source);
/// The rows of a pipeline of P = ceil(M/B) packets through k further stages (GC(1,1): k = N - 2;
/// nESBT-b(1,1): k = n): start-ups P + k, element transfers M + k min(B, M), every packet its own
/// message; B_opt = sqrt(M tau / (k t_c)) and min start-ups k + 2 sqrt(k M t_c / tau) for k > 0.
void pipeline_row(Prediction& pr, const Setup& s, std::int64_t k);

}  // namespace cubesim
