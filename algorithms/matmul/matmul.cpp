#include "algorithms/matmul/matmul.hpp"

#include <limits>

namespace cubesim::matmul {

Element value(Which m, std::int64_t i, std::int64_t j) {
  switch (m) {
    case Which::C:
      return static_cast<Element>((i * 3 + j * 5) % 7 - 3);
    case Which::D:
      return static_cast<Element>((i * 5 + j * 2 + 1) % 5 - 2);
    case Which::E:
      return static_cast<Element>((i + 2 * j) % 3);
  }
  return 0;
}

Buffer block(bool data, const Shape& sh, Which m, const Rect& r) {
  const std::int64_t rows = sh.rows(m), cols = sh.cols(m);
  return Buffer::make(r.size(), data, [&](std::int64_t k) {
    const std::int64_t i = r.r0 + k / r.cols, j = r.c0 + k % r.cols;
    return i < rows && j < cols ? value(m, i, j) : Element{0};
  });
}

void multiply_add(Buffer& A, std::int64_t a_off, std::int64_t lda, Operand C, Operand D, std::int64_t m, std::int64_t k,
                  std::int64_t n) {
  if (!A.has_data() || !C.buf->has_data() || !D.buf->has_data()) return;
  auto a = A.values();
  auto c = C.buf->values();
  auto d = D.buf->values();
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t t = 0; t < k; ++t) {
      const Element cv = c[C.off + i * C.ld + t * C.cs];
      if (cv == 0) continue;
      const Element* drow = d.data() + D.off + t * D.ld;
      Element* arow = a.data() + a_off + i * lda;
      if (D.cs == 1)
        for (std::int64_t j = 0; j < n; ++j) arow[j] += cv * drow[j];
      else
        for (std::int64_t j = 0; j < n; ++j) arow[j] += cv * drow[j * D.cs];
    }
}

Verdict verify_product(const Setup& s, const std::vector<Buffer>& results, const std::function<Rect(NodeId)>& where) {
  const Shape sh{s.params.P, s.params.Q, s.params.R};
  std::vector<Element> ref;
  if (s.data_mode) {  // A = C D + E, once, outside the simulation
    ref.assign(static_cast<std::size_t>(sh.P * sh.R), 0);
    std::vector<Element> drow(static_cast<std::size_t>(sh.R));
    for (std::int64_t i = 0; i < sh.P; ++i)
      for (std::int64_t j = 0; j < sh.R; ++j) ref[i * sh.R + j] = value(Which::E, i, j);
    for (std::int64_t t = 0; t < sh.Q; ++t) {
      for (std::int64_t j = 0; j < sh.R; ++j) drow[j] = value(Which::D, t, j);
      for (std::int64_t i = 0; i < sh.P; ++i) {
        const Element c = value(Which::C, i, t);
        if (c == 0) continue;
        for (std::int64_t j = 0; j < sh.R; ++j) ref[i * sh.R + j] += c * drow[j];
      }
    }
  }
  for (std::size_t x = 0; x < results.size(); ++x) {
    const Rect r = where(static_cast<NodeId>(x));
    const Buffer& b = results[x];
    if (b.size() != r.size())
      return {false, "node " + std::to_string(x) + " ends with " + std::to_string(b.size()) +
                         " elements of A, expected " + std::to_string(r.size()) + " (a " + std::to_string(r.rows) +
                         " x " + std::to_string(r.cols) + " block)"};
    if (!s.data_mode) continue;
    if (!b.has_data()) return {false, "node " + std::to_string(x) + " ends with no data in data mode"};
    auto v = b.values();
    for (std::int64_t k = 0; k < r.size(); ++k) {
      const std::int64_t i = r.r0 + k / r.cols, j = r.c0 + k % r.cols;
      const Element want = i < sh.P && j < sh.R ? ref[i * sh.R + j] : Element{0};
      if (v[k] != want)
        return {false, "node " + std::to_string(x) + ": A(" + std::to_string(i) + ", " + std::to_string(j) + ") is " +
                           std::to_string(v[k]) + ", expected " + std::to_string(want)};
    }
  }
  return {};
}

Verdict verify_products(const Setup& s, const std::vector<Buffer>& results, std::int64_t K,
                        const std::function<Rect(NodeId)>& where) {
  for (std::int64_t k = 0; k < K; ++k) {
    std::vector<Buffer> one;
    for (std::size_t x = 0; x < results.size(); ++x) {
      const std::int64_t M = where(static_cast<NodeId>(x)).size();
      if (results[x].size() != K * M)
        return {false, "node " + std::to_string(x) + " ends with " + std::to_string(results[x].size()) +
                           " elements, expected K = " + std::to_string(K) + " blocks of " + std::to_string(M)};
      one.push_back(results[x].slice(k * M, M));
    }
    if (Verdict v = verify_product(s, one, where); !v.ok) {
      if (K > 1) v.message = "product " + std::to_string(k + 1) + " of " + std::to_string(K) + ": " + v.message;
      return v;
    }
  }
  return {};
}

std::optional<SetupError> check(const Setup& s, std::int64_t peak_per_node, bool any_topology) {
  if (!any_topology && s.topology.kind() != Topology::Kind::hypercube)
    return SetupError{"/topology/kind", "this algorithm runs on a hypercube, not a " + s.topology.kind_name()};
  for (auto [key, v] : {std::pair{"P", s.params.P}, std::pair{"Q", s.params.Q}, std::pair{"R", s.params.R}})
    if (v < 1)
      return SetupError{std::string("/params/") + key,
                        std::string(key) + " must be at least 1 (matrix sizes: C is P x Q, D is Q x R)"};
  if (s.params.B < 1 || s.params.B > s.machine.packet_elements)
    return SetupError{"/params/B", "B = " + std::to_string(s.params.B) + " must be between 1 and the machine's B_m = " +
                                       std::to_string(s.machine.packet_elements)};
  constexpr std::int64_t kDataLimit = std::int64_t{1} << 27;
  if (s.data_mode && (peak_per_node > kDataLimit / s.topology.size()))
    return SetupError{"/params", "the nodes would hold " + std::to_string(peak_per_node) + " elements each, " +
                                     std::to_string(s.topology.size()) +
                                     " nodes: more than 2^27 elements in data mode (use \"mode\": \"timing\")"};
  return std::nullopt;
}

bool all_port(const Node& self, const routing::SubCube& sub) {
  return self.machine().ports.kind == PortKind::all && sub.n() > 1;
}

Task<Buffer> gather(Node& self, std::int64_t M, Buffer own, routing::SubCube sub) {
  if (all_port(self, sub))
    co_return co_await routing::allgather(
        self, M, std::move(own), routing::plan(routing::Family::nrsbt, routing::Schedule::depth, sub.n()), sub);
  co_return co_await routing::allgather_doubling(self, M, std::move(own), sub);
}

Task<Buffer> reduce(Node& self, std::int64_t M, Buffer partials, routing::SubCube sub) {
  if (all_port(self, sub))
    co_return co_await routing::reduce_scatter(
        self, M, std::move(partials), routing::plan(routing::Family::nrsbt, routing::Schedule::depth, sub.n()), sub);
  co_return co_await routing::reduce_halving(self, M, std::move(partials), sub);
}

Task<Buffer> alltoall(Node& self, std::int64_t M, Buffer slots, routing::SubCube sub) {
  if (all_port(self, sub))
    co_return co_await routing::alltoall(
        self, M, std::move(slots), routing::plan(routing::Family::nrsbt, routing::Schedule::phased, sub.n(), true),
        sub);
  co_return co_await routing::standard_exchange(self, M, std::move(slots), sub);
}

Task<> local_product(Node& self, std::int64_t m, std::int64_t k, std::int64_t n) {
  co_await self.compute(2 * m * k * n);
  if (self.machine().t_elem != Time{}) co_await self.delay(self.machine().t_elem * (m * n));
}

Task<> initialise(Node& self, std::int64_t elements) {
  if (self.machine().t_init != Time{}) co_await self.delay(self.machine().t_init * elements);
}

Task<> both(Node& self, Task<> a, Task<> b) {
  if (self.machine().ports.kind == PortKind::all) {
    std::vector<Task<>> t;
    t.push_back(std::move(a));
    t.push_back(std::move(b));
    co_await all_of(std::move(t));
  } else {
    co_await std::move(a);
    co_await std::move(b);
  }
}

Prediction from_terms(const Setup& s, const RowTerms& t, std::int64_t flops, std::string source) {
  Prediction pr;
  pr.source = std::move(source);
  take_terms(pr, t);
  pr.flops = flops;
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

}  // namespace cubesim::matmul
