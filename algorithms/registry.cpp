#include "algorithms/registry.hpp"

#include <stdexcept>

namespace cubesim {

void Registry::add(AlgorithmInfo info) {
  const std::string name = info.name;
  if (!algorithms_.emplace(name, std::move(info)).second) throw std::logic_error("algorithm registered twice: " + name);
}

const AlgorithmInfo* Registry::find(const std::string& name) const {
  auto it = algorithms_.find(name);
  return it == algorithms_.end() ? nullptr : &it->second;
}

std::vector<const AlgorithmInfo*> Registry::all() const {
  std::vector<const AlgorithmInfo*> v;
  for (const auto& [k, a] : algorithms_) v.push_back(&a);
  return v;
}

namespace {
/// The registration functions of every algorithm file, in static-initialization order.
std::vector<Registration::Add>& registrations() {
  static std::vector<Registration::Add> v;
  return v;
}
}  // namespace

Registration::Registration(Add add) { registrations().push_back(add); }

Registry make_registry() {
  Registry r;
  for (Registration::Add add : registrations()) add(r);
  return r;
}

}  // namespace cubesim
