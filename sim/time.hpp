#pragma once
/// Simulated time: an integer count of picoseconds (DESIGN.md, "Engine").
/// Machine parameters are rounded to picoseconds once, at load; everything after that is exact
/// integer arithmetic, so an exact formula and a simulation agree to the last picosecond.
#include <compare>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

namespace cubesim {

class Time {
 public:
  constexpr Time() = default;
  static constexpr Time ps(std::int64_t v) { return Time(v); }
  [[nodiscard]] constexpr std::int64_t count() const { return ps_; }
  [[nodiscard]] constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }

  // Arithmetic is checked: a time past the 64-bit clock (about 106 days) throws
  // std::overflow_error rather than wrapping (a branch the CPU predicts; see bench/).
  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Time o) const { return Time(add(ps_, o.ps_)); }
  constexpr Time operator-(Time o) const { return Time(sub(ps_, o.ps_)); }
  constexpr Time& operator+=(Time o) {
    ps_ = add(ps_, o.ps_);
    return *this;
  }
  constexpr Time& operator-=(Time o) {
    ps_ = sub(ps_, o.ps_);
    return *this;
  }
  constexpr Time operator*(std::int64_t k) const { return Time(mul(ps_, k)); }
  friend constexpr Time operator*(std::int64_t k, Time t) { return Time(mul(t.ps_, k)); }

  static constexpr Time max() { return Time(INT64_MAX); }

 private:
  constexpr explicit Time(std::int64_t v) : ps_(v) {}
  [[noreturn]] static void overflow();
  static constexpr std::int64_t add(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) overflow();
    return r;
  }
  static constexpr std::int64_t sub(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    if (__builtin_sub_overflow(a, b, &r)) overflow();
    return r;
  }
  static constexpr std::int64_t mul(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) overflow();
    return r;
  }
  std::int64_t ps_ = 0;
};

namespace literals {
constexpr Time operator""_ps(unsigned long long v) { return Time::ps(static_cast<std::int64_t>(v)); }
constexpr Time operator""_ns(unsigned long long v) { return Time::ps(static_cast<std::int64_t>(v) * 1000); }
constexpr Time operator""_us(unsigned long long v) { return Time::ps(static_cast<std::int64_t>(v) * 1000000); }
constexpr Time operator""_ms(unsigned long long v) { return Time::ps(static_cast<std::int64_t>(v) * 1000000000); }
constexpr Time operator""_s(unsigned long long v) { return Time::ps(static_cast<std::int64_t>(v) * 1000000000000); }
}  // namespace literals

/// For test output.
inline void PrintTo(Time t, std::ostream* os);

/// Parses "1.5ms", "4us", "250 ns", "3ps", "0.002s" or a plain number of seconds ("0.0015").
/// Decimal digits are converted exactly; a value finer than 1 ps is rounded to the nearest
/// picosecond (half away from zero). Throws std::invalid_argument with a readable reason.
Time parse_time(std::string_view text);

/// Seconds given as a JSON number, rounded to the nearest picosecond.
Time time_from_seconds(double seconds);

/// "1.5 ms", "4 us", "3 ps": the shortest exact rendering, for logs and text reports.
std::string format_time(Time t);

/// a*b with an overflow check; throws std::overflow_error naming `what`.
std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what);
std::int64_t checked_add(std::int64_t a, std::int64_t b, const char* what);

inline void PrintTo(Time t, std::ostream* os) { *os << t.count() << " ps"; }

}  // namespace cubesim
