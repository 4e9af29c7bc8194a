#include "app/algorithm_docs.hpp"

#include <cstdio>

namespace cubesim {

namespace {

std::string cell(std::string s) {
  std::string o;
  for (char c : s) o += c == '|' ? std::string("\\|") : std::string(1, c);
  return o;
}

std::string g3(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

std::string deviations(const PortDoc& d) {
  if (d.deviations.empty()) return "—";
  std::string s;
  for (const Deviation& v : d.deviations) {
    if (!s.empty()) s += "; ";
    if (v.relation == Relation::approx)
      s += "≤ " + g3(v.tolerance) + ": worst " + g3(v.worst);
    else
      s += "bound: lowest " + g3(v.worst);
    s += " (" + v.at + ")";
  }
  return s;
}

}  // namespace

std::string algorithms_markdown(const Registry& reg) {
  std::string s =
      "| algorithm | ports | row or derivation | relation | worst seen on the grid |\n|---|---|---|---|---|\n";
  for (const AlgorithmInfo* a : reg.all()) {
    s += "| `" + a->name + "` | one | " + cell(a->one_port.row) + " | " + cell(a->one_port.relation) + " | " +
         cell(deviations(a->one_port)) + " |\n";
    s += "| | all | " + cell(a->all_port.row) + " | " + cell(a->all_port.relation) + " | " +
         cell(deviations(a->all_port)) + " |\n";
  }
  return s;
}

std::string algorithms_summary_markdown(const Registry& reg) {
  std::string s = "| algorithm | what it does | paper |\n|---|---|---|\n";
  for (const AlgorithmInfo* a : reg.all())
    s += "| `" + a->name + "` | " + cell(a->summary) + " | " + cell(a->source) + " |\n";
  return s;
}

}  // namespace cubesim
