#include "app/algorithm_docs.hpp"

#include <cstdio>

#include "app/markdown.hpp"

namespace cubesim {

namespace {

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
    s += "| `" + a->name + "` | one | " + markdown_cell(a->one_port.row) + " | " + markdown_cell(a->one_port.relation) +
         " | " + markdown_cell(deviations(a->one_port)) + " |\n";
    s += "| | all | " + markdown_cell(a->all_port.row) + " | " + markdown_cell(a->all_port.relation) + " | " +
         markdown_cell(deviations(a->all_port)) + " |\n";
  }
  return s;
}

std::string algorithms_summary_markdown(const Registry& reg) {
  std::string s = "| algorithm | what it does | paper |\n|---|---|---|\n";
  for (const AlgorithmInfo* a : reg.all())
    s += "| `" + a->name + "` | " + markdown_cell(a->summary) + " | " + markdown_cell(a->source) + " |\n";
  return s;
}

}  // namespace cubesim
