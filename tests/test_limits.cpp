// Sizes at their limits (issue 18, docs/reliability.md "Sizes"): every count and time a
// prediction forms stays inside 64 bits, or the input is refused up front. Under the sanitizer
// build (scripts/test-sanitizers.sh) a wrapped signed integer anywhere here aborts the test; in
// the plain build a wrapped count shows up as a negative one.
#include <gtest/gtest.h>

#include <chrono>

#include "algorithms/algorithm.hpp"
#include "machines/machine_loader.hpp"
#include "sim/resources.hpp"
#include "tests/helpers.hpp"

namespace cubesim::test {
namespace {

/// The parameter sets tried on an n-cube: each at or next to a limit of check_sizes.
std::vector<Params> corners(const AlgorithmInfo& info, int n, std::int64_t bm) {
  std::vector<Params> v;
  const std::int64_t N = std::int64_t{1} << n;
  if (multiplies(info)) {
    const std::int64_t pqr[][4] = {{1 << 17, 1 << 17, 1 << 16, 1},
                                   {1 << 20, 1 << 20, 1 << 10, 1},
                                   {1 << 10, 1 << 20, 1 << 20, 1},
                                   {1 << 10, 1 << 10, 1 << 10, 1 << 20}};
    for (const auto& c : pqr)
      for (const std::int64_t n1 : {std::int64_t{0}, std::int64_t{1} << (n / 2)}) {
        Params p;
        p.P = c[0], p.Q = c[1], p.R = c[2], p.K = c[3], p.N1 = n1, p.B = bm;
        v.push_back(p);
      }
  } else if (takes_matrix(info)) {
    for (const std::int64_t P : {std::int64_t{1} << 20, N})
      for (const std::int64_t B : {std::int64_t{1}, bm}) {
        Params p;
        p.P = P, p.Q = kMaxElements / P, p.B = B;
        fill_grid_params(p, n, n);
        v.push_back(p);
      }
  } else {
    for (const std::int64_t M : {std::int64_t{1}, kMaxElements / N})
      for (const std::int64_t B : {std::int64_t{1}, std::min(M, bm)}) {
        Params p;
        p.M = M, p.B = B, p.root = N - 1, p.k = n / 2;
        v.push_back(p);
      }
  }
  return v;
}

TEST(Sizes, EveryPredictionAtTheLimitsIsRightOrRefused) {
  const Registry reg = make_registry();
  // The iPSC's costs (the time overflows first) and costs of 1 ps (the counts do).
  const Machine nx = machine_from_json(*preset_json("ipsc-nx"), "ipsc-nx", "", true);
  Machine tiny = simple_machine(kOne, 1 << 20);
  tiny.tau = tiny.tau_msg = tiny.t_c = tiny.t_a = tiny.t_copy = Time::ps(1);
  for (const AlgorithmInfo* info : reg.all()) {
    int accepted = 0, overflowed = 0;
    double slowest = 0;
    for (const Machine& base : {nx, tiny})
      for (const PortModel ports : {kOne, kAll})
        for (const int n : {0, 1, 2, 5, 11, 16, 20, 24})
          for (const Params& p : corners(*info, n, base.packet_elements)) {
            // On the 24-cube some one-port predictions count over all 2^24 nodes (about a
            // second each): there, only the largest block in packets of one, on 1 ps costs.
            if (n == 24 && (base.name != tiny.name || p.B != 1 || p.M == 1 || p.P == (std::int64_t{1} << 24))) continue;
            cubesim::Setup s;
            s.machine = base;
            s.machine.ports = ports;
            s.topology = Topology::hypercube(n);
            s.params = p;
            s.data_mode = false;
            if (check_sizes(s) || info->check(s)) continue;
            ++accepted;
            const auto t0 = std::chrono::steady_clock::now();
            try {
              const Prediction pr = info->predict(s);
              const std::string at = info->name + " n=" + std::to_string(n) + " ports " + ports.name() + " machine " +
                                     base.name + " M=" + std::to_string(p.M) + " P=" + std::to_string(p.P) +
                                     " Q=" + std::to_string(p.Q) + " R=" + std::to_string(p.R);
              EXPECT_GE(pr.startups, 0) << at;
              EXPECT_GE(pr.msg_startups, 0) << at;
              EXPECT_GE(pr.element_transfers, 0) << at;
              EXPECT_GE(pr.flops, 0) << at;
              EXPECT_GE(pr.copies, 0) << at;
              EXPECT_GE(pr.time, Time{}) << at;
            } catch (const std::overflow_error&) {
              ++overflowed;  // refused as a config would be (exit 2, naming the size)
            }
            slowest = std::max(slowest, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
          }
    EXPECT_GT(accepted, 0) << info->name << ": no corner passed the algorithm's check, so nothing was tested";
    std::cout << "[ sizes ] " << info->name << ": " << accepted << " corners, " << overflowed
              << " refused as overflowing the clock, slowest prediction " << slowest << " s\n";
  }
}

TEST(Sizes, TheBoundsAreNamedByTheParameter) {
  const Registry reg = make_registry();
  cubesim::Setup s;
  s.machine = simple_machine();
  s.topology = Topology::hypercube(24);
  s.params.M = std::int64_t{1} << 40;  // N M = 2^64: the product itself would wrap
  auto e = check_sizes(s);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->pointer, "/params/M");
  EXPECT_NE(e->message.find("more than 9.2e18"), std::string::npos) << e->message;
  s.params.M = std::int64_t{1} << 16;  // exactly 2^40
  EXPECT_FALSE(check_sizes(s).has_value());
  s.params.M = 0;
  s.params.P = s.params.Q = s.params.R = std::int64_t{1} << 17;  // P Q R = 2^51
  e = check_sizes(s);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->pointer, "/params/Q");
  s.params.R = std::int64_t{1} << 16;  // 2^50
  EXPECT_FALSE(check_sizes(s).has_value());
  s.params.K = 2;
  EXPECT_EQ(check_sizes(s)->pointer, "/params/K");
}

TEST(Sizes, MemoryFloorRefusesBeforeAllocating) {
  ::setenv("CUBESIM_MEMORY_LIMIT", "1000000", 1);
  EXPECT_EQ(available_memory_bytes(), 1000000);
  EXPECT_EQ(memory_refusal(run_memory_floor(16, 0), "x"), "") << "16 nodes fit in a megabyte";
  const std::string why = memory_refusal(run_memory_floor(1024, 0), "the 10-cube");
  EXPECT_EQ(why.rfind("the 10-cube needs at least 1.5 MiB of memory and 977 KiB is available", 0), 0u) << why;
  ::unsetenv("CUBESIM_MEMORY_LIMIT");
  EXPECT_GT(available_memory_bytes(), 0);
}

}  // namespace
}  // namespace cubesim::test
