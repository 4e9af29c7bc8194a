#include "sim/simgrid/platform.hpp"

#include <cstdio>
#include <set>
#include <sstream>
#include <stdexcept>

#include "sim/number_format.hpp"

namespace cubesim::sgplat {

namespace {
std::string g17(double x) { return exact_decimal(x); }
std::string link_name(NodeId a, NodeId b) {
  return "link-" + std::to_string(std::min(a, b)) + "-" + std::to_string(std::max(a, b));
}
// A host that never computes (t_a = 0) still needs a finite speed.
double speed_of(const Machine& m) { return m.t_a.count() > 0 ? 1.0 / m.t_a.seconds() : 1e30; }
double bandwidth_of(const Machine& m) { return static_cast<double>(m.element_bytes) / m.t_c.seconds(); }
}  // namespace

std::string host_name(NodeId node) { return "node-" + std::to_string(node); }

std::optional<Unsupported> unsupported(const Machine& m, const Topology& t) {
  if (m.t_c.count() <= 0) return Unsupported{true, "SimGrid needs a finite link bandwidth: t_c must be above 0"};
  if (m.switching != Switching::store_and_forward)
    return Unsupported{
        true, "the SimGrid backend models store-and-forward machines only, not " + switching_name(m.switching)};
  if (m.o_send != Time{} || m.o_recv != Time{} || m.t_call != Time{})
    return Unsupported{true,
                       "the SimGrid backend does not model node software overheads (o_send, o_recv, t_call): "
                       "run this machine with --engine cycle"};
  if (t.kind() != Topology::Kind::hypercube && t.kind() != Topology::Kind::torus && t.size() > kMaxFullNodes)
    return Unsupported{false, "a " + t.kind_name() + " of " + std::to_string(t.size()) +
                                  " nodes needs a SimGrid route table of N x N routes; at most " +
                                  std::to_string(kMaxFullNodes) + " nodes (hypercubes and tori have no such limit)"};
  return std::nullopt;
}

std::string platform_xml(const Machine& m, const Topology& topo, Time latency) {
  if (auto why = unsupported(m, topo)) throw std::invalid_argument(why->message);
  const NodeId n = topo.size();
  const std::string speed = g17(speed_of(m)) + "f";
  const std::string bw = g17(bandwidth_of(m)) + "Bps";
  const std::string lat = g17(latency.seconds()) + "s";
  std::ostringstream o;
  o << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    << "<!-- cubesim platform: machine " << m.name << ", " << topo.describe() << ".\n"
    << "     Hosts compute 1/t_a flop/s; each edge is a split-duplex link of bandwidth element_bytes/t_c\n"
    << "     and latency " << lat << "; routes are dimension-order. Exact times need the options\n    ";
  for (const std::string& f : exact_flags()) o << " " << f;
  o << " -->\n<platform version=\"4.1\">\n";
  const bool cluster =
      (topo.kind() == Topology::Kind::hypercube && topo.dim() >= 1) || topo.kind() == Topology::Kind::torus;
  if (cluster) {
    std::string dims;
    for (int k = 0; k < topo.dim(); ++k) {
      if (k > 0) dims += ",";
      dims += std::to_string(topo.kind() == Topology::Kind::hypercube ? 2 : topo.shape()[k]);
    }
    o << "<zone id=\"cubesim\" routing=\"Full\">\n"
      << "  <cluster id=\"cube\" topology=\"TORUS\" topo_parameters=\"" << dims << "\" prefix=\"node-\" radical=\"0-"
      << n - 1 << "\" suffix=\"\" speed=\"" << speed << "\" bw=\"" << bw << "\" lat=\"" << lat
      << "\" sharing_policy=\"SPLITDUPLEX\" loopback_bw=\"1e30Bps\" loopback_lat=\"0s\"/>\n"
      << "</zone>\n</platform>\n";
    return o.str();
  }
  o << "<zone id=\"cubesim\" routing=\"Full\">\n";
  for (NodeId i = 0; i < n; ++i) o << "  <host id=\"" << host_name(i) << "\" speed=\"" << speed << "\"/>\n";
  std::set<std::pair<NodeId, NodeId>> edges;
  for (NodeId a = 0; a < n; ++a)
    for (int p = 0; p < topo.num_ports(); ++p) {
      const NodeId b = topo.neighbor(a, p);
      if (b >= 0 && b != a) edges.emplace(std::min(a, b), std::max(a, b));
    }
  for (const auto& [a, b] : edges)
    o << "  <link id=\"" << link_name(a, b) << "\" bandwidth=\"" << bw << "\" latency=\"" << lat
      << "\" sharing_policy=\"SPLITDUPLEX\"/>\n";
  o << "  <link id=\"loopback\" bandwidth=\"1e30Bps\" latency=\"0s\" sharing_policy=\"FATPIPE\"/>\n";
  for (NodeId s = 0; s < n; ++s) {
    o << "  <route src=\"" << host_name(s) << "\" dst=\"" << host_name(s) << "\"><link_ctn id=\"loopback\"/></route>\n";
    for (NodeId d = 0; d < n; ++d) {
      if (d == s) continue;
      o << "  <route src=\"" << host_name(s) << "\" dst=\"" << host_name(d) << "\" symmetrical=\"NO\">";
      for (NodeId cur = s; cur != d;) {
        const NodeId next = topo.neighbor(cur, topo.next_hop(cur, d));
        o << "<link_ctn id=\"" << link_name(cur, next) << "\" direction=\"" << (cur < next ? "UP" : "DOWN") << "\"/>";
        cur = next;
      }
      o << "</route>\n";
    }
  }
  o << "</zone>\n</platform>\n";
  return o.str();
}

std::vector<std::string> exact_flags() {
  return {"--cfg=network/model:CM02",     "--cfg=network/latency-factor:1", "--cfg=network/bandwidth-factor:1",
          "--cfg=network/crosstraffic:0", "--cfg=network/TCP-gamma:1e18",   "--cfg=surf/precision:1e-13"};
}

}  // namespace cubesim::sgplat
