#include <gtest/gtest.h>

#include <bit>
#include <set>

#include "algorithms/embedding/gray.hpp"

using namespace cubesim;

class GrayCode : public ::testing::TestWithParam<int> {};

TEST_P(GrayCode, IsACyclicHamiltonianPathOfTheCube) {
  const int n = GetParam();
  const std::uint64_t N = std::uint64_t{1} << n;
  std::set<std::uint64_t> seen;
  for (std::uint64_t i = 0; i < N; ++i) {
    const std::uint64_t g = gray::encode(i);
    EXPECT_LT(g, N);
    EXPECT_EQ(gray::decode(g), i);
    seen.insert(g);
    const std::uint64_t next = gray::encode((i + 1) % N);
    EXPECT_EQ(std::popcount(g ^ next), 1) << "codes " << i << " and " << i + 1 << " are not adjacent";
    EXPECT_EQ(g ^ next, std::uint64_t{1} << gray::transition(i, n));
  }
  EXPECT_EQ(seen.size(), N);
}

INSTANTIATE_TEST_SUITE_P(Dims, GrayCode, ::testing::Range(1, 11));

TEST(Gray, KnownSequencesFromTheePaper) {
  // TR-530 §4.1.1: the 3-cube sequence of dimensions is (0,1,0,2,0,1,0).
  std::vector<int> dims;
  for (std::uint64_t i = 0; i < 7; ++i) dims.push_back(gray::transition(i, 3));
  EXPECT_EQ(dims, (std::vector<int>{0, 1, 0, 2, 0, 1, 0}));
  EXPECT_EQ(gray::encode(5), 7u);
  EXPECT_EQ(gray::decode(7), 5u);
}

TEST(Gray, RejectsPositionsOutsideTheSequence) {
  EXPECT_THROW((void)gray::transition(8, 3), std::invalid_argument);
  EXPECT_THROW((void)gray::transition(0, 0), std::invalid_argument);
}
