#include "app/calibrate.hpp"

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <variant>

#include "app/io.hpp"
#include "app/sweep.hpp"
#include "machines/machine_loader.hpp"
#include "sim/input_error.hpp"

namespace cubesim {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::string join(const std::vector<std::string>& v, const std::string& sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

/// The time keys, for error messages.
std::string time_keys() {
  return machine_key_list([](const MachineKey& k) { return k.kind == KeyKind::time; });
}

/// One CSV line split into fields: commas separate; a field in double quotes may hold commas, and
/// "" inside it is one quote; spaces around a field are dropped. nullopt: an unclosed quote.
std::optional<std::vector<std::string>> split_csv(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t i = 0;
  while (true) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::string f;
    if (i < line.size() && line[i] == '"') {
      ++i;
      bool closed = false;
      while (i < line.size()) {
        if (line[i] == '"' && i + 1 < line.size() && line[i + 1] == '"') {
          f += '"';
          i += 2;
        } else if (line[i] == '"') {
          ++i;
          closed = true;
          break;
        } else {
          f += line[i++];
        }
      }
      if (!closed) return std::nullopt;
      while (i < line.size() && line[i] != ',') {
        if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r') return std::nullopt;
        ++i;
      }
    } else {
      while (i < line.size() && line[i] != ',') f += line[i++];
      f = trim(f);
    }
    fields.push_back(f);
    if (i >= line.size()) break;
    ++i;  // the comma
  }
  return fields;
}

/// A whole-field number (decimal or scientific), or nullopt.
std::optional<double> parse_number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

/// A measured time: seconds as a number, or a number with a unit (ps ns us ms s).
std::variant<double, std::string> parse_measured_time(const std::string& text) {
  if (text.empty()) return std::string("no time (a number of seconds or a time such as \"12.5ms\")");
  if (text[0] == '-') return "a measured time cannot be negative, got \"" + text + "\"";
  double v = 0;
  if (auto n = parse_number(text)) {
    if (!std::isfinite(*n)) return "\"" + text + "\" is not a time";
    v = *n;
  } else {
    try {
      v = parse_time(text).seconds();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  }
  if (v < 0) return "a measured time cannot be negative, got \"" + text + "\"";
  if (v == 0) return "a measured time must be above 0 (the residuals are relative to it), got \"" + text + "\"";
  return v;
}

/// A cell of an override column as the config value: JSON where it parses as JSON (1024, [4,4],
/// true, "text"), else the text itself (broadcast.sbt, one, timing).
ojson cell_value(const std::string& text) {
  ojson v = ojson::parse(text, nullptr, false);
  if (v.is_discarded()) return text;
  return v;
}

}  // namespace

MeasuredTable parse_measured(const std::string& text, const std::string& file, const std::vector<std::string>& fitted) {
  MeasuredTable t;
  t.file = file;
  std::istringstream in(text);
  std::string raw;
  int line = 0;
  int config_col = -1, time_col = -1, weight_col = -1;
  bool header = false;
  const auto fail = [&](const std::string& where, const std::string& msg) -> InputError {
    return InputError(file, where, msg);
  };
  const auto at = [](int l, std::size_t c, const std::string& name) {
    return "line " + std::to_string(l) + ", column " + std::to_string(c + 1) + (name.empty() ? "" : " (" + name + ")");
  };
  const std::filesystem::path folder = std::filesystem::path(file).parent_path();
  while (std::getline(in, raw)) {
    ++line;
    const std::string stripped = trim(raw);
    if (stripped.empty() || stripped[0] == '#') continue;
    const std::string where = "line " + std::to_string(line);
    const auto fields = split_csv(raw);
    if (!fields) throw fail(where, "a quoted field is not closed (or text follows its closing quote)");
    if (!header) {
      header = true;
      const bool named = std::find(fields->begin(), fields->end(), "config") != fields->end() ||
                         std::find(fields->begin(), fields->end(), "time") != fields->end();
      if (!named)
        throw fail(where,
                   "no header row: the first line that is not a comment names the columns (config, "
                   "time, an optional weight, and config keys as a sweep names them), got \"" +
                       stripped + "\"");
      std::set<std::string> seen;
      for (std::size_t c = 0; c < fields->size(); ++c) {
        const std::string& name = (*fields)[c];
        if (name.empty()) throw fail(at(line, c, ""), "a column needs a name");
        if (!seen.insert(name).second) throw fail(at(line, c, ""), "column \"" + name + "\" is named twice");
        if (name == "config")
          config_col = static_cast<int>(c);
        else if (name == "time")
          time_col = static_cast<int>(c);
        else if (name == "weight")
          weight_col = static_cast<int>(c);
        else if (name == "machine")
          throw fail(at(line, c, ""),
                     "a column cannot set the machine: every row runs on --machine, the machine "
                     "being calibrated");
        else if (!is_sweep_key(name))
          throw fail(at(line, c, ""), "unknown column \"" + name +
                                          "\" (config, time, weight, or a config key as a "
                                          "sweep names it: " +
                                          kSweepKeys + ")");
        const std::string mo = "machine_overrides.";
        if (name.rfind(mo, 0) == 0 && std::find(fitted.begin(), fitted.end(), name.substr(mo.size())) != fitted.end())
          throw fail(at(line, c, ""), "column \"" + name + "\" sets a key that --fit fits: the fit needs it free");
        t.columns.push_back(name);
      }
      if (config_col < 0) throw fail(where, "the header has no \"config\" column (the path of each row's config)");
      if (time_col < 0) throw fail(where, "the header has no \"time\" column (each row's measured time)");
      continue;
    }
    if (fields->size() != t.columns.size())
      throw fail(where, std::to_string(fields->size()) + " field" + (fields->size() == 1 ? "" : "s") +
                            ", but the header names " + std::to_string(t.columns.size()) + " columns");
    MeasuredRow r;
    r.line = line;
    for (std::size_t c = 0; c < fields->size(); ++c) {
      const std::string& cell = (*fields)[c];
      const std::string& name = t.columns[c];
      if (static_cast<int>(c) == config_col) {
        if (cell.empty()) throw fail(at(line, c, name), "no config (the path of a cubesim config)");
        r.config = cell;
        const std::filesystem::path p(cell);
        r.config_path = p.is_absolute() ? cell : (folder / p).lexically_normal().string();
      } else if (static_cast<int>(c) == time_col) {
        auto v = parse_measured_time(cell);
        if (auto* e = std::get_if<std::string>(&v)) throw fail(at(line, c, name), *e);
        r.time_s = std::get<double>(v);
      } else if (static_cast<int>(c) == weight_col) {
        if (cell.empty()) continue;
        const auto w = parse_number(cell);
        if (!w || !std::isfinite(*w) || *w <= 0)
          throw fail(at(line, c, name), "a weight is a number above 0, got \"" + cell + "\"");
        r.weight = *w;
      } else if (!cell.empty()) {
        r.cells.emplace_back(name, cell);
        r.cell_where.emplace_back(name, at(line, c, name));
      }
    }
    t.rows.push_back(std::move(r));
  }
  if (!header) throw fail("", "no header row and no measurements (the file has only blank lines and comments)");
  if (t.rows.empty()) throw fail("", "no measurements: the header is the last line that is not a comment");
  return t;
}

std::vector<const MachineKey*> parse_fit_keys(const std::string& text) {
  std::vector<const MachineKey*> keys;
  std::string rest = text;
  while (true) {
    const auto comma = rest.find(',');
    const std::string name = trim(rest.substr(0, comma));
    if (!name.empty()) {
      const MachineKey* k = find_machine_key(name);
      if (k == nullptr)
        throw InputError("", "--fit", "unknown machine key \"" + name + "\" (time keys: " + time_keys() + ")");
      if (k->kind != KeyKind::time)
        throw InputError("", "--fit",
                         "\"" + name + "\" is not a time: only time keys can be fitted (" + time_keys() + ")");
      if (std::find(keys.begin(), keys.end(), k) != keys.end())
        throw InputError("", "--fit", "\"" + name + "\" is named twice");
      keys.push_back(k);
    }
    if (comma == std::string::npos) break;
    rest = rest.substr(comma + 1);
  }
  if (keys.empty())
    throw InputError("", "--fit", "name the keys to fit, e.g. --fit tau,t_c (time keys: " + time_keys() + ")");
  return keys;
}

// --- numbers -----------------------------------------------------------------------------------

namespace {

/// The continued fraction of the regularized incomplete beta function (Lentz's method).
double beta_fraction(double a, double b, double x) {
  constexpr double tiny = 1e-300, eps = 1e-15;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 1000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < eps) break;
  }
  return h;
}

/// I_x(a, b), the regularized incomplete beta function.
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

/// P(T <= t) for Student's t with df degrees of freedom, t >= 0.
double student_t_cdf(double t, double df) { return 1 - 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t)); }

/// A small dense symmetric positive definite system: Cholesky factor in place; false when a pivot
/// is not above `floor` (the matrix is singular as far as these numbers tell).
bool cholesky(std::vector<std::vector<double>>& a, double floor) {
  const std::size_t n = a.size();
  for (std::size_t j = 0; j < n; ++j) {
    double d = a[j][j];
    for (std::size_t k = 0; k < j; ++k) d -= a[j][k] * a[j][k];
    if (!(d > floor)) return false;
    a[j][j] = std::sqrt(d);
    for (std::size_t i = j + 1; i < n; ++i) {
      double s = a[i][j];
      for (std::size_t k = 0; k < j; ++k) s -= a[i][k] * a[j][k];
      a[i][j] = s / a[j][j];
    }
  }
  return true;
}

/// Solves L L^T x = b with the factor of cholesky().
std::vector<double> cholesky_solve(const std::vector<std::vector<double>>& l, std::vector<double> b) {
  const std::size_t n = l.size();
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < i; ++k) b[i] -= l[i][k] * b[k];
    b[i] /= l[i][i];
  }
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t k = i + 1; k < n; ++k) b[i] -= l[k][i] * b[k];
    b[i] /= l[i][i];
  }
  return b;
}

/// A time in seconds with `digits` significant digits and a unit: "1.10012 ms".
std::string seconds_text(double s, int digits = 6) {
  struct U {
    double scale;
    const char* name;
  };
  static constexpr U units[] = {{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}, {1e-12, "ps"}};
  const double a = std::fabs(s);
  const U* u = &units[4];
  if (a == 0) u = &units[0];
  for (const U& x : units)
    if (a >= x.scale * (1 - 1e-12)) {
      u = &x;
      break;
    }
  // `digits` significant digits, never an exponent ("110 ns", not "1.1e+02 ns"), no trailing zeros.
  const double v = s / u->scale;
  const int decimals = v == 0 ? 0 : std::max(0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string t = buf;
  if (t.find('.') != std::string::npos) {
    while (t.back() == '0') t.pop_back();
    if (t.back() == '.') t.pop_back();
  }
  return t + " " + u->name;
}

/// A time in seconds as a machine file writes it: exact picoseconds in the largest unit ("1.1ms").
std::string time_value_text(std::int64_t ps) {
  std::string t = format_time(Time::ps(ps));
  t.erase(std::remove(t.begin(), t.end(), ' '), t.end());
  return t;
}

// --- the rows and their runs -------------------------------------------------------------------

/// A measurement ready to run: its single point, in timing mode.
struct Row {
  const MeasuredRow* measured = nullptr;
  RunPoint point;
};

/// Loads each row's config with the row's columns and the base machine set; one run each.
std::vector<Row> load_rows(const Registry& reg, const MeasuredTable& t, const ResolvedMachine& base,
                           const std::string& base_arg, const std::vector<const MachineKey*>& keys,
                           const RunLimits& limits) {
  ojson inline_machine = machine_to_json(base.machine);
  if (!base.default_topology.is_null()) inline_machine["default_topology"] = base.default_topology;
  std::vector<Row> rows;
  for (const MeasuredRow& m : t.rows) {
    const std::string where = "line " + std::to_string(m.line);
    std::vector<KeyOverride> overrides{{"machine", inline_machine, "", "--machine " + base_arg}};
    for (std::size_t c = 0; c < m.cells.size(); ++c)
      overrides.push_back({m.cells[c].first, cell_value(m.cells[c].second), t.file, m.cell_where[c].second});
    Experiment ex;
    try {
      ex = load_experiment(m.config_path, reg, overrides);
      if (ex.runs.size() != 1) {
        std::vector<std::string> swept;
        for (const auto& kv : ex.runs.front().point) {
          const std::string& k = kv.first;  // not a structured binding: clang 14 cannot capture one
          if (std::none_of(overrides.begin(), overrides.end(), [&](const KeyOverride& o) { return o.key == k; }))
            swept.push_back(k);
        }
        throw InputError(t.file, where,
                         m.config + " sweeps " + std::to_string(ex.runs.size()) + " points (" + join(swept) +
                             "): a row is one run; give each swept key a column");
      }
      RunPoint& p = ex.runs.front();
      for (const MachineKey* k : keys) {
        const auto s = p.setup.machine.sources.find(std::string(k->key));
        if (s != p.setup.machine.sources.end() && s->second == "machine_overrides in the config")
          throw InputError(t.file, where,
                           m.config + " sets " + std::string(k->key) +
                               " in its machine_overrides, and --fit fits it: the fit needs it free (remove the "
                               "override, or the key from --fit)");
      }
      p.setup.data_mode = false;  // the time is the same; sizes only is faster
      // Admitted as the fit will run it: a fitted node-software overhead makes every trial
      // machine one the lockstep simulator leaves to the engine (sim/lockstep.hpp).
      RunLimits admit = limits;
      for (const MachineKey* k : keys)
        if (std::string_view(k->key) == "o_send" || std::string_view(k->key) == "o_recv") admit.lockstep = false;
      check_memory(ex, admit);
    } catch (const InputError& e) {
      if (e.file() == t.file) throw;
      throw InputError(t.file, where, e.what());
    }
    rows.push_back({&m, std::move(ex.runs.front())});
  }
  return rows;
}

/// Runs the rows on machines that differ in the fitted keys' values (picoseconds).
class Evaluator {
 public:
  Evaluator(const std::vector<Row>& rows, const std::vector<const MachineKey*>& keys, const CalibrateOptions& o)
      : rows_(rows), keys_(keys), limits_(o.limits), jobs_(o.jobs) {}

  /// Simulated times (seconds) of every row, per set of values.
  std::vector<std::vector<double>> simulate(const std::vector<std::vector<std::int64_t>>& sets) {
    const std::size_t n = rows_.size(), total = sets.size() * n;
    std::vector<std::vector<double>> times(sets.size(), std::vector<double>(n, 0));
    std::vector<std::string> errors(total);
    const std::size_t jobs = std::min<std::size_t>(
        total, jobs_ > 0 ? static_cast<std::size_t>(jobs_) : std::max(1u, std::thread::hardware_concurrency()));
    make_executor(jobs)->run(total, [&](std::size_t t) {
      const std::size_t k = t / n, i = t % n;
      RunPoint p = rows_[i].point;
      for (std::size_t j = 0; j < keys_.size(); ++j)
        if (auto e = keys_[j]->set(*keys_[j], p.setup.machine, std::to_string(sets[k][j]) + "ps")) errors[t] = *e;
      if (!errors[t].empty()) return true;
      try {
        const RunOutcome out = run_point(p, *p.info, false, nullptr, limits_);
        if (!out.error.empty())
          errors[t] = out.error;
        else
          times[k][i] = out.stats.time.seconds();
      } catch (const std::overflow_error& e) {
        errors[t] = e.what();
      }
      return true;
    });
    runs_ += static_cast<std::int64_t>(total);
    for (std::size_t t = 0; t < total; ++t)
      if (!errors[t].empty()) {
        const std::size_t k = t / n, i = t % n;
        std::string at;
        for (std::size_t j = 0; j < keys_.size(); ++j)
          at += (at.empty() ? "" : ", ") + std::string(keys_[j]->key) + " = " + time_value_text(sets[k][j]);
        throw std::runtime_error(rows_[i].measured->config_path + " (line " + std::to_string(rows_[i].measured->line) +
                                 ") failed to run with " + at + ": " + errors[t]);
      }
    return times;
  }
  [[nodiscard]] std::int64_t runs() const { return runs_; }

 private:
  const std::vector<Row>& rows_;
  const std::vector<const MachineKey*>& keys_;
  RunLimits limits_;
  int jobs_;
  std::int64_t runs_ = 0;
};

Time key_value(const MachineKey& k, const Machine& m) {
  const std::string ps = k.get(k, m).get<std::string>();  // "NNNps"
  return Time::ps(std::stoll(ps.substr(0, ps.size() - 2)));
}

}  // namespace

double student_t975(double df) {
  double lo = 0, hi = 1e4;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (student_t_cdf(mid, df) < 0.975 ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

Calibration calibrate(const Registry& reg, const CalibrateOptions& o) {
  auto log = command_log();
  const std::vector<const MachineKey*> keys = parse_fit_keys(o.fit);
  if (o.max_iterations < 1)
    throw InputError("", "--max-iterations", "must be at least 1, not " + std::to_string(o.max_iterations));
  if (o.jobs < 0) throw InputError("", "--jobs", "must be a count of runs at once (0 for one per core)");
  if (std::error_code ec; !o.out.empty() && std::filesystem::is_directory(o.out, ec))
    throw InputError(o.out, "--out", "is a folder: --out names the machine file to write");
  const ResolvedMachine base = machine_argument(o.machine, "--machine");
  std::vector<std::string> fitted;
  for (const MachineKey* k : keys) fitted.emplace_back(k->key);

  Calibration c;
  c.measured = o.measured;
  c.base = o.machine;
  c.absolute = o.absolute;
  c.table = parse_measured(read_text_file(o.measured), o.measured, fitted);
  const std::vector<Row> rows = load_rows(reg, c.table, base, o.machine, keys, o.limits);
  const std::size_t n = rows.size(), p = keys.size();
  c.n = n;
  c.p = p;
  if (n < p)
    throw InputError(o.measured, "",
                     std::to_string(n) + " measurement" + (n == 1 ? "" : "s") + " cannot fix " + std::to_string(p) +
                         " keys (" + join(fitted) + "): give at least as many rows as keys, and more for intervals");

  Evaluator ev(rows, keys, o);
  const auto residuals = [&](const std::vector<double>& sim) {
    std::vector<double> r(n);
    for (std::size_t i = 0; i < n; ++i) {
      const MeasuredRow& m = *rows[i].measured;
      const double e = o.absolute ? sim[i] - m.time_s : (sim[i] - m.time_s) / m.time_s;
      r[i] = std::sqrt(m.weight) * e;
    }
    return r;
  };
  const auto sum_sq = [](const std::vector<double>& r) {
    double s = 0;
    for (double x : r) s += x * x;
    return s;
  };
  // The Jacobian of the residuals at `theta` (per picosecond of each key): central differences of
  // a step of 2 % of the value (at least 1 ns), forward where the step down would go below 0.
  const auto jacobian = [&](const std::vector<std::int64_t>& theta, const std::vector<double>& r0) {
    std::vector<std::vector<std::int64_t>> sets;
    std::vector<std::int64_t> step(p);
    std::vector<bool> central(p);
    for (std::size_t j = 0; j < p; ++j) {
      step[j] = std::max<std::int64_t>(1000, std::llround(0.02 * static_cast<double>(theta[j])));
      central[j] = theta[j] - step[j] >= 0;
      sets.push_back(theta);
      sets.back()[j] += step[j];
      if (central[j]) {
        sets.push_back(theta);
        sets.back()[j] -= step[j];
      }
    }
    const auto sims = ev.simulate(sets);
    std::vector<std::vector<double>> jac(n, std::vector<double>(p));
    std::size_t s = 0;
    for (std::size_t j = 0; j < p; ++j) {
      const std::vector<double> up = residuals(sims[s++]);
      const std::vector<double> down = central[j] ? residuals(sims[s++]) : r0;
      const double h = static_cast<double>(central[j] ? 2 * step[j] : step[j]);
      for (std::size_t i = 0; i < n; ++i) jac[i][j] = (up[i] - down[i]) / h;
    }
    return jac;
  };
  // J^T J and J^T r.
  const auto normal = [&](const std::vector<std::vector<double>>& jac, const std::vector<double>& r) {
    std::vector<std::vector<double>> a(p, std::vector<double>(p, 0));
    std::vector<double> g(p, 0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < p; ++j) {
        g[j] += jac[i][j] * r[i];
        for (std::size_t k = 0; k < p; ++k) a[j][k] += jac[i][j] * jac[i][k];
      }
    return std::make_pair(a, g);
  };
  // The normal matrix scaled to unit diagonal (a correlation matrix) and the scale.
  const auto scaled = [&](const std::vector<std::vector<double>>& a) {
    std::vector<double> d(p);
    for (std::size_t j = 0; j < p; ++j) d[j] = 1 / std::sqrt(a[j][j]);
    std::vector<std::vector<double>> r(p, std::vector<double>(p));
    for (std::size_t j = 0; j < p; ++j)
      for (std::size_t k = 0; k < p; ++k) r[j][k] = a[j][k] * d[j] * d[k];
    return std::make_pair(r, d);
  };
  // A key no row's time depends on, or keys the rows cannot tell apart: bad input, named.
  const auto check_identifiable = [&](const std::vector<std::vector<double>>& a,
                                      const std::vector<std::int64_t>& theta) {
    for (std::size_t j = 0; j < p; ++j)
      if (!(a[j][j] > 0))
        throw InputError(o.measured, "--fit " + fitted[j],
                         "changes no simulated time of these " + std::to_string(n) + " rows (tried " +
                             time_value_text(theta[j]) +
                             " and a step of 2 % or 1 ns from it): it cannot be fitted "
                             "from them; leave it out of --fit, or add rows whose runs it costs");
    const auto [r, d] = scaled(a);
    for (std::size_t j = 0; j < p; ++j)
      for (std::size_t k = j + 1; k < p; ++k)
        if (std::fabs(r[j][k]) > 1 - 1e-9)
          throw InputError(o.measured, "--fit " + fitted[j] + "," + fitted[k],
                           "the two keys change every row's simulated time in the same proportion: these rows "
                           "cannot tell them apart (fit one of them, or add rows where they differ)");
    auto l = r;
    if (!cholesky(l, 1e-12))
      throw InputError(o.measured, "--fit " + join(fitted, ","),
                       "the keys are not independent in these rows (one's effect on the times is a combination of "
                       "the others'): fit fewer keys, or add rows of other algorithms or sizes");
  };

  std::vector<std::int64_t> theta(p);
  for (std::size_t j = 0; j < p; ++j) theta[j] = key_value(*keys[j], base.machine).count();
  std::vector<double> r = residuals(ev.simulate({theta})[0]);
  double rss = sum_sq(r);
  double lambda = 1e-6;
  const auto values_text = [&](const std::vector<std::int64_t>& th) {
    std::string s;
    for (std::size_t j = 0; j < p; ++j) s += (s.empty() ? "" : ", ") + fitted[j] + " " + time_value_text(th[j]);
    return s;
  };
  log->info("calibrate: start at {}: RSS {:.6g}", values_text(theta), rss);
  c.stop = "the iteration limit (" + std::to_string(o.max_iterations) + ") was reached";
  for (int iter = 1; iter <= o.max_iterations && !c.converged; ++iter) {
    c.iterations = iter;
    const auto jac = jacobian(theta, r);
    const auto [a, g] = normal(jac, r);
    if (iter == 1) check_identifiable(a, theta);
    std::size_t lost = p;  // a key that changed times at the start and changes none here
    for (std::size_t j = 0; j < p && lost == p; ++j)
      if (!(a[j][j] > 0)) lost = j;
    if (lost < p) {
      c.stop = fitted[lost] + " changes no simulated time at " + time_value_text(theta[lost]);
      break;
    }
    const auto [cor, d] = scaled(a);
    // The damped step over the keys that are free: a key at its bound 0 that the step would take
    // below it stays at 0, and the others' step is solved again without it (an active set), so
    // that a key pinned at 0 does not hold the others away from their optimum.
    const auto damped_step = [&, &cor = cor, &d = d, &g = g]() -> std::optional<std::vector<double>> {
      std::vector<bool> pinned(p, false);
      std::vector<double> delta(p, 0);
      for (std::size_t pass = 0; pass <= p; ++pass) {
        std::vector<std::size_t> free;
        for (std::size_t j = 0; j < p; ++j)
          if (!pinned[j]) free.push_back(j);
        std::vector<std::vector<double>> m(free.size(), std::vector<double>(free.size()));
        std::vector<double> rhs(free.size());
        for (std::size_t u = 0; u < free.size(); ++u) {
          for (std::size_t v = 0; v < free.size(); ++v) m[u][v] = cor[free[u]][free[v]];
          m[u][u] += lambda;
          rhs[u] = -g[free[u]] * d[free[u]];
        }
        if (!cholesky(m, 0)) return std::nullopt;  // rounding made it indefinite: damp more
        const std::vector<double> y = cholesky_solve(m, rhs);
        std::fill(delta.begin(), delta.end(), 0.0);
        bool more = false;
        for (std::size_t u = 0; u < free.size(); ++u) {
          const std::size_t j = free[u];
          delta[j] = y[u] * d[j];
          if (theta[j] == 0 && delta[j] < 0) pinned[j] = more = true;
        }
        if (!more) break;
      }
      return delta;
    };
    while (true) {
      const std::optional<std::vector<double>> delta = damped_step();
      if (!delta && lambda < 1e10) {
        lambda *= 10;
        continue;
      }
      std::vector<std::int64_t> next = theta;
      for (std::size_t j = 0; delta && j < p; ++j)
        next[j] = std::max<std::int64_t>(0, std::llround(static_cast<double>(theta[j]) + (*delta)[j]));
      const auto small = [&](const std::vector<std::int64_t>& th) {
        for (std::size_t j = 0; j < p; ++j)
          if (static_cast<double>(std::llabs(th[j] - theta[j])) > std::max(1.0, 1e-9 * static_cast<double>(theta[j])))
            return false;
        return true;
      };
      if (small(next)) {
        c.converged = true;
        c.stop = "the last step changed no key by more than 1 ps (or 1e-9 of its value)";
        break;
      }
      const std::vector<double> rn = residuals(ev.simulate({next})[0]);
      const double rss_n = sum_sq(rn);
      if (rss_n < rss) {
        log->info("calibrate: iteration {}: {}: RSS {:.6g} (lambda {:.3g})", iter, values_text(next), rss_n, lambda);
        const bool flat = rss - rss_n <= 1e-12 * rss;
        theta = next;
        r = rn;
        rss = rss_n;
        lambda = std::max(lambda / 10, 1e-12);
        if (flat) {
          c.converged = true;
          c.stop = "the last step lowered the RSS by less than 1e-12 of it";
        }
        break;
      }
      lambda *= 10;
      if (lambda > 1e10) {
        c.converged = true;
        c.stop = "no step lowers the RSS further (a minimum at the picosecond resolution of the keys)";
        break;
      }
    }
  }

  // The intervals: s^2 (J^T J)^-1 from the Jacobian at the optimum.
  const auto jac = jacobian(theta, r);
  const auto [a, g] = normal(jac, r);
  c.rss = rss;
  std::vector<double> var(p, NAN);
  if (n > p) {
    c.s = std::sqrt(rss / static_cast<double>(n - p));
    c.t95 = student_t975(static_cast<double>(n - p));
    bool ok = true;
    for (std::size_t j = 0; j < p; ++j) ok = ok && a[j][j] > 0;
    if (ok) {
      auto [cor, d] = scaled(a);
      if (cholesky(cor, 1e-14))
        for (std::size_t j = 0; j < p; ++j) {
          std::vector<double> e(p, 0);
          e[j] = 1;
          var[j] = c.s * c.s * cholesky_solve(cor, e)[j] * d[j] * d[j];
        }
    }
  }
  c.machine = base.machine;
  c.default_topology = base.default_topology;
  for (std::size_t j = 0; j < p; ++j) {
    FittedKey f;
    f.key = fitted[j];
    f.base_s = key_value(*keys[j], base.machine).seconds();
    f.value_ps = theta[j];
    f.value_s = Time::ps(theta[j]).seconds();
    if (std::isfinite(var[j])) f.half_width_s = c.t95 * std::sqrt(var[j]) * 1e-12;
    f.at_bound = theta[j] == 0;
    (void)keys[j]->set(*keys[j], c.machine, std::to_string(theta[j]) + "ps");
    c.keys.push_back(f);
  }
  const std::vector<double> sim = ev.simulate({theta})[0];
  for (std::size_t i = 0; i < n; ++i) {
    RowFit rf;
    rf.row = rows[i].measured;
    rf.simulated_s = sim[i];
    rf.simulated_ps = std::llround(sim[i] * 1e12);
    rf.relative_error = (sim[i] - rf.row->time_s) / rf.row->time_s;
    rf.residual = r[i];
    c.rows.push_back(rf);
  }
  c.runs = ev.runs();
  // The calibrated machine: the fitted keys' sources say how they were found.
  c.machine.kind = ModelKind::calibrated;
  const std::string rows_text = std::to_string(n) + " row" + (n == 1 ? "" : "s");
  for (const FittedKey& f : c.keys)
    c.machine.sources[f.key] = "fitted by cubesim calibrate to " + o.measured + " (" + rows_text +
                               "): " + seconds_text(f.value_s) +
                               (f.half_width_s ? " ± " + seconds_text(*f.half_width_s, 2) + " (95 %)"
                                               : " (no interval: as many keys as rows)");
  c.machine.sources["kind"] = "cubesim calibrate: " + join(fitted) + " fitted to the measured times of " + o.measured +
                              " (" + rows_text + "), the other keys from " + o.machine;
  return c;
}

ojson calibration_json(const Calibration& c, const std::string& machine_file) {
  ojson j;
  j["schema"] = "cubesim.calibration/1";
  j["measured"] = c.measured;
  j["machine"] = c.base;
  j["residuals"] = c.absolute ? "absolute" : "relative";
  j["rows"] = c.n;
  j["converged"] = c.converged;
  j["stop"] = c.stop;
  j["iterations"] = c.iterations;
  j["runs"] = c.runs;
  ojson fit = ojson::object();
  for (const FittedKey& f : c.keys) {
    ojson k;
    k["value_s"] = f.value_s;
    k["value_ps"] = f.value_ps;
    k["ci95_s"] = f.half_width_s ? ojson(*f.half_width_s) : ojson(nullptr);
    k["base_s"] = f.base_s;
    k["at_bound"] = f.at_bound;
    fit[f.key] = k;
  }
  j["fit"] = fit;
  j["rss"] = c.rss;
  j["dof"] = c.n - std::min(c.n, c.p);
  j["intervals"] = c.intervals();
  j["s"] = c.intervals() ? ojson(c.s) : ojson(nullptr);
  j["t95"] = c.intervals() ? ojson(c.t95) : ojson(nullptr);
  ojson rows = ojson::array();
  for (const RowFit& r : c.rows) {
    ojson set = ojson::object();
    for (const auto& [k, v] : r.row->cells) set[k] = cell_value(v);
    rows.push_back({{"line", r.row->line},
                    {"config", r.row->config},
                    {"set", set},
                    {"weight", r.row->weight},
                    {"measured_s", r.row->time_s},
                    {"simulated_s", r.simulated_s},
                    {"simulated_ps", r.simulated_ps},
                    {"relative_error", r.relative_error},
                    {"residual", r.residual}});
  }
  j["residuals_by_row"] = rows;
  j["machine_file"] = machine_file.empty() ? ojson(nullptr) : ojson(machine_file);
  return j;
}

std::string calibration_text(const Calibration& c) {
  std::string s;
  char buf[512];
  std::vector<std::string> fitted;
  for (const FittedKey& f : c.keys) fitted.push_back(f.key);
  s += c.measured + ": " + std::to_string(c.n) + " measurement" + (c.n == 1 ? "" : "s") + " on " + c.base +
       ", fitting " + join(fitted) + " (" + (c.absolute ? "absolute" : "relative") + " residuals)\n";
  s += std::string(c.converged ? "converged" : "NOT CONVERGED") + " after " + std::to_string(c.iterations) +
       " iteration" + (c.iterations == 1 ? "" : "s") + " (" + std::to_string(c.runs) + " runs): " + c.stop + "\n";
  std::size_t w = 0;
  for (const FittedKey& f : c.keys) w = std::max(w, f.key.size());
  for (const FittedKey& f : c.keys) {
    const std::string ci = f.half_width_s ? "± " + seconds_text(*f.half_width_s, 2) + " (95 %)" : "(no interval)";
    std::snprintf(buf, sizeof buf, "  %-*s %-16s %-22s base %s%s\n", static_cast<int>(w), f.key.c_str(),
                  seconds_text(f.value_s).c_str(), ci.c_str(), seconds_text(f.base_s).c_str(),
                  f.at_bound ? "  (at the bound 0)" : "");
    s += buf;
  }
  if (c.intervals())
    std::snprintf(buf, sizeof buf, "RSS %.4g, %zu rows, %zu degrees of freedom, s %.4g, t(0.975) %.4g\n", c.rss, c.n,
                  c.n - c.p, c.s, c.t95);
  else
    std::snprintf(buf, sizeof buf,
                  "RSS %.4g, %zu rows for %zu keys: no degrees of freedom, so no intervals (give more rows)\n", c.rss,
                  c.n, c.p);
  s += buf;
  s += "  line  measured      simulated     error      config\n";
  for (const RowFit& r : c.rows) {
    std::string what = r.row->config;
    for (const auto& [k, v] : r.row->cells) what += " " + k + "=" + v;
    std::snprintf(buf, sizeof buf, "  %4d  %-12s  %-12s  %+8.3f %%  %s\n", r.row->line,
                  seconds_text(r.row->time_s).c_str(), seconds_text(r.simulated_s).c_str(), 100 * r.relative_error,
                  what.c_str());
    s += buf;
  }
  return s;
}

ojson calibrated_machine_json(const Calibration& c, const std::string& name) {
  Machine m = c.machine;
  m.name = name;
  m.description = c.machine.description.empty()
                      ? c.base + " calibrated by cubesim calibrate to " + c.measured
                      : c.machine.description + "; calibrated by cubesim calibrate to " + c.measured;
  const ojson body = machine_to_json(m);
  ojson j;
  j["schema"] = "cubesim.machine/1";
  for (const auto& [k, v] : body.items()) {
    j[k] = v;
    if (k == "description" && !c.default_topology.is_null()) j["default_topology"] = c.default_topology;
  }
  // A fitted key that machine_to_json leaves out (its default, on this machine) is written all the same:
  // its source says where its value comes from.
  for (const FittedKey& f : c.keys)
    if (!j.contains(f.key)) j[f.key] = {{"value", std::to_string(f.value_ps) + "ps"}, {"source", m.sources[f.key]}};
  for (auto& [k, v] : j.items())
    if (v.is_object() && v.contains("value") && v["value"].is_string()) {
      const MachineKey* key = find_machine_key(k);
      const std::string text = v["value"].get<std::string>();
      if (key != nullptr && key->kind == KeyKind::time && text.size() > 2 && text.substr(text.size() - 2) == "ps")
        v["value"] = time_value_text(std::stoll(text.substr(0, text.size() - 2)));
    }
  return j;
}

}  // namespace cubesim
