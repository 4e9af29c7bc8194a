#pragma once
/// SimGrid platforms of cubesim machines (DESIGN.md "SimGrid backend", docs/simgrid.md).
///
/// One host per node, named "node-<id>", computing 1/t_a flop/s; one split-duplex link per edge,
/// with bandwidth element_bytes / t_c bytes/s and the latency the caller asks for (tau for the
/// S4U backend, which sends each packet on its own; tau + tau_msg for TI traces, one action per
/// message); routes along cubesim's dimension-order routes:
///  - a hypercube (n >= 1) or a torus is a SimGrid TORUS cluster (a hypercube is the torus
///    2 x 2 x ... x 2). Its routing is dimension-order, lowest dimension first, as cubesim's;
///    at a tie on an even extent (the destination half-way round) SimGrid goes down from the
///    upper half and up from the lower, cubesim always up: the same length, another route.
///    It is small at any size (2^16 hosts: one line of XML).
///  - a mesh is a Full zone with one explicit route per ordered pair: at most kMaxFullNodes nodes
///    (the route table is N x N).
/// Every host has a loopback link (unused by the backend, which delivers a send to itself at
/// once; SMPI needs it).
#include <optional>
#include <string>
#include <vector>

#include "sim/machine.hpp"
#include "sim/topology.hpp"

namespace cubesim::sgplat {

constexpr NodeId kMaxFullNodes = 1024;

/// "node-<id>".
std::string host_name(NodeId node);

/// Why SimGrid cannot take this machine and topology, or nothing if it can.
struct Unsupported {
  bool machine = false;  ///< the machine is at fault (else the topology)
  std::string message;
};
std::optional<Unsupported> unsupported(const Machine& machine, const Topology& topology);

/// The platform as SimGrid XML (platform version 4.1), with links of latency `latency`.
/// Call unsupported() first; throws std::invalid_argument where it would have said why.
std::string platform_xml(const Machine& machine, const Topology& topology, Time latency);

/// The options that make one uncontended transfer of S bytes over a route of h links take exactly
/// h x latency + S / bandwidth (shared/SIMGRID.md, checked against SimGrid 3.32):
/// CM02 with latency and bandwidth factors of 1 (CM02's defaults, set anyway), no cross-traffic,
/// an unbounded TCP window.
std::vector<std::string> exact_flags();

}  // namespace cubesim::sgplat
