#include "sim/time.hpp"

#include <cmath>
#include <stdexcept>

namespace cubesim {

void Time::overflow() {
  throw std::overflow_error("simulated time overflows the 64-bit picosecond clock (about 106 days)");
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw std::overflow_error(std::string(what) + " overflows 64-bit picoseconds");
  return r;
}

std::int64_t checked_add(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw std::overflow_error(std::string(what) + " overflows 64-bit picoseconds");
  return r;
}

Time parse_time(std::string_view text) {
  std::string_view s = text;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty()) throw std::invalid_argument("empty time");
  // Split number and unit.
  std::size_t i = 0;
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
  std::string_view num = s.substr(0, i);
  std::string_view unit = s.substr(i);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  if (num.empty())
    throw std::invalid_argument("'" + std::string(text) +
                                "' is not a time: expected a number and a unit (ps ns us ms s)");
  int exp10 = 0;  // picoseconds per unit as a power of ten
  if (unit.empty() || unit == "s")
    exp10 = 12;
  else if (unit == "ms")
    exp10 = 9;
  else if (unit == "us")
    exp10 = 6;
  else if (unit == "ns")
    exp10 = 3;
  else if (unit == "ps")
    exp10 = 0;
  else
    throw std::invalid_argument("unknown time unit '" + std::string(unit) + "' in '" + std::string(text) +
                                "' (use ps ns us ms s)");
  std::size_t dot = num.find('.');
  std::string_view ip = dot == std::string_view::npos ? num : num.substr(0, dot);
  std::string_view fp = dot == std::string_view::npos ? std::string_view{} : num.substr(dot + 1);
  if (fp.find('.') != std::string_view::npos || (ip.empty() && fp.empty()))
    throw std::invalid_argument("'" + std::string(text) + "' is not a number with a unit");
  const char* ovf = "time value";
  std::int64_t scale = 1;
  for (int k = 0; k < exp10; ++k) scale *= 10;
  std::int64_t whole = 0;
  for (char c : ip) whole = checked_add(checked_mul(whole, 10, ovf), c - '0', ovf);
  std::int64_t ps = checked_mul(whole, scale, ovf);
  // Fractional digits: exact down to 1 ps, then round half away from zero on the next digit.
  std::int64_t place = scale;
  for (std::size_t k = 0; k < fp.size(); ++k) {
    int d = fp[k] - '0';
    if (place >= 10) {
      place /= 10;
      ps = checked_add(ps, d * place, ovf);
    } else {
      if (d >= 5) ps = checked_add(ps, 1, ovf);
      break;
    }
  }
  return Time::ps(ps);
}

Time time_from_seconds(double seconds) {
  if (!std::isfinite(seconds)) throw std::invalid_argument("time is not a finite number");
  double ps = std::round(seconds * 1e12);
  if (std::fabs(ps) > 9.2e18) throw std::invalid_argument("time out of range (more than about 106 days)");
  return Time::ps(static_cast<std::int64_t>(ps));
}

std::string format_time(Time t) {
  const std::int64_t v = t.count();
  struct U {
    std::uint64_t div;
    const char* name;
  };
  static constexpr U units[] = {{1000000000000, "s"}, {1000000000, "ms"}, {1000000, "us"}, {1000, "ns"}, {1, "ps"}};
  if (v == 0) return "0 s";
  // The magnitude in unsigned arithmetic: -INT64_MIN has no int64.
  const std::uint64_t a = v < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  for (const U& u : units) {
    if (a < u.div) continue;
    std::string out = v < 0 ? "-" : "";
    out.append(std::to_string(a / u.div));
    if (const std::uint64_t f = a % u.div; f != 0) {
      std::string frac = std::to_string(f);
      frac.insert(0, std::to_string(u.div).size() - 1 - frac.size(), '0');
      while (!frac.empty() && frac.back() == '0') frac.pop_back();
      out.append(".").append(frac);
    }
    return out.append(" ").append(u.name);
  }
  return "0 s";
}

}  // namespace cubesim
