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

/// Every algorithm cubesim has: a new registry holding what every algorithm file registered.
Registry make_registry();

/// How an algorithm file registers its algorithms, so that a new algorithm costs one file: at
/// namespace scope,
///
///   const Registration kRegistrationBroadcast{[](Registry& r) {  // a name of its own (unity builds)
///     r.add({.name = "broadcast.sbt", .summary = "...", .source = "TR-530 §4.1.2, Table 1",
///            .params = {"root", "M", "B"}, .required = {"M"}, .check = ..., .process = ...,
///            .predict = ..., .verify = ..., .one_port = {...}, .all_port = {...}});
///   }};
///
/// The build compiles every file under algorithms/ and links them whole (CMakeLists.txt), so no
/// list of files or families is kept anywhere else. The functions run when make_registry() is
/// called, not before; the registry itself is a value, never a global (STYLE.md habit 4).
class Registration {
 public:
  using Add = void (*)(Registry&);
  explicit Registration(Add add);
};

}  // namespace cubesim
