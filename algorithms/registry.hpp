#pragma once
/// The algorithms, bound by name (STYLE.md habit 4): one registry built once, passed to whoever
/// needs it; no global map that code reads from anywhere.
#include <map>
#include <string>
#include <vector>

#include "algorithms/algorithm.hpp"

namespace cubesim {

class Registry {
 public:
  void add(AlgorithmInfo info);
  [[nodiscard]] const AlgorithmInfo* find(const std::string& name) const;
  [[nodiscard]] std::vector<const AlgorithmInfo*> all() const;

 private:
  std::map<std::string, AlgorithmInfo> algorithms_;
};

/// Every algorithm cubesim has.
Registry make_registry();

// Each family registers its own.
void register_broadcast(Registry& r);
void register_allgather(Registry& r);
void register_personalized(Registry& r);
void register_reduction(Registry& r);

}  // namespace cubesim
