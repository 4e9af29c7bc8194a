#include <gtest/gtest.h>

#include "sim/time.hpp"

using namespace cubesim;
using namespace cubesim::literals;

TEST(Time, ParsesUnitsExactly) {
  EXPECT_EQ(parse_time("1.5ms"), Time::ps(1'500'000'000));
  EXPECT_EQ(parse_time("4us"), 4_us);
  EXPECT_EQ(parse_time("250 ns"), 250_ns);
  EXPECT_EQ(parse_time("3ps"), 3_ps);
  EXPECT_EQ(parse_time("2s"), 2_s);
  EXPECT_EQ(parse_time("0.0015"), Time::ps(1'500'000'000));  // bare number: seconds
  EXPECT_EQ(parse_time("36.132813us"), Time::ps(36'132'813));
  EXPECT_EQ(parse_time(".5ns"), Time::ps(500));
}

TEST(Time, RoundsBelowOnePicosecondHalfUp) {
  EXPECT_EQ(parse_time("1.4ps"), 1_ps);
  EXPECT_EQ(parse_time("1.5ps"), 2_ps);
  EXPECT_EQ(parse_time("33.3333335us"), Time::ps(33'333'334));
  EXPECT_EQ(time_from_seconds(1.5e-3), Time::ps(1'500'000'000));
  EXPECT_EQ(time_from_seconds(4e-6), 4_us);
}

TEST(Time, RejectsBadInput) {
  for (const char* bad : {"", "ms", "1.5 parsecs", "1..5ms", "-3ms", "abc", "1e3ms"})
    EXPECT_THROW(parse_time(bad), std::invalid_argument) << bad;
  EXPECT_THROW(parse_time("99999999999999999999s"), std::overflow_error);
  EXPECT_THROW(time_from_seconds(1e300), std::invalid_argument);
}

TEST(Time, Formats) {
  EXPECT_EQ(format_time(Time::ps(1'500'000'000)), "1.5 ms");
  EXPECT_EQ(format_time(4_us), "4 us");
  EXPECT_EQ(format_time(Time{}), "0 s");
  EXPECT_EQ(format_time(Time::ps(1'001)), "1.001 ns");
}

TEST(Time, CheckedArithmetic) {
  EXPECT_EQ(checked_mul(3, 4, "x"), 12);
  EXPECT_THROW(checked_mul(INT64_MAX / 2, 3, "x"), std::overflow_error);
  EXPECT_THROW(checked_add(INT64_MAX, 1, "x"), std::overflow_error);
}
