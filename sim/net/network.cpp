#include "sim/net/network.hpp"

#include <algorithm>
#include <stdexcept>

namespace cubesim {

namespace {
std::vector<NetworkModelInfo>& registry() {
  static std::vector<NetworkModelInfo> r;
  return r;
}
}  // namespace

NetworkRegistration::NetworkRegistration(const NetworkModelInfo& info) {
  auto& r = registry();
  if (find_network_model(info.name) != nullptr)
    throw std::logic_error(std::string("network model registered twice: ") + info.name);
  r.push_back(info);
  std::sort(r.begin(), r.end(), [](const NetworkModelInfo& a, const NetworkModelInfo& b) {
    return std::string_view(a.name) < std::string_view(b.name);
  });
}

const std::vector<NetworkModelInfo>& network_models() { return registry(); }

const NetworkModelInfo* find_network_model(std::string_view name) {
  for (const NetworkModelInfo& i : registry())
    if (name == i.name) return &i;
  return nullptr;
}

const NetworkModelInfo& network_model_of(const Machine& m) {
  const std::string name = !m.network.empty()                            ? m.network
                           : m.switching == Switching::store_and_forward ? "store_and_forward"
                                                                         : "bit_serial_router";
  const NetworkModelInfo* i = find_network_model(name);
  if (i == nullptr) throw std::invalid_argument("unknown network model \"" + name + "\"");
  if (i->switching != m.switching)
    throw std::invalid_argument("network model \"" + name + "\" is " + switching_name(i->switching) +
                                ", the machine's switching is " + switching_name(m.switching));
  return *i;
}

}  // namespace cubesim
