#pragma once
/// A resolved machine model: every parameter already rounded to picoseconds (DESIGN.md, "Cost
/// model"). Presets and overrides are turned into this by machines/machine_loader.
#include <cstdint>
#include <map>
#include <string>

#include "sim/time.hpp"

namespace cubesim {

enum class PortKind { one, all, k };
enum class Switching { store_and_forward, pipelined };
/// What a machine's numbers are: `formula`, each a paper's statement or a modelling choice, so that
/// the papers' formulas hold on it as the algorithms promise; `calibrated`, software overheads
/// fitted to measured statements, so that times no longer match the formulas exactly.
enum class ModelKind { formula, calibrated };

struct PortModel {
  PortKind kind = PortKind::one;
  int k = 1;  ///< concurrent sends (and receives) per node when kind == k
  [[nodiscard]] std::string name() const;
};

struct Machine {
  std::string name;
  std::string description;
  Time tau;      ///< start-up per packet per hop
  Time tau_msg;  ///< extra start-up per message per hop (iPSC external packets)
  Time t_c;      ///< transfer time per element
  Time t_a;      ///< time per arithmetic operation
  Time t_copy;   ///< time per element copied in local memory
  /// Loop overhead of a local matrix product: per element of its result, per product (FOH eq.
  /// (16)'s M^2 term on the Mark II; 0 elsewhere). Charged by the mesh family (algorithms/mesh/).
  Time t_elem;
  /// One-off initialisation of a product's result, per element, once per multiplication (FOH
  /// §5.1: "the time taken to initialize the matrix C to zero"; 0 elsewhere). Mesh family.
  Time t_init;
  /// Node software (docs/model.md "Node software"): CPU time of each send call before its
  /// message enters the network, and of each receive after its message has arrived (LogP's o),
  /// and the call overhead of each arithmetic kernel (compute). 0 on every formula preset.
  Time o_send;
  Time o_recv;
  Time t_call;
  std::int64_t packet_elements = 1;  ///< B_m, the largest packet
  int element_bytes = 4;
  PortModel ports;
  Switching switching = Switching::store_and_forward;
  /// TR-572 §8.1: blocks shorter than this many elements are copied into one buffer and sent
  /// as one message (the iPSC's 64 floats); 0: never. The default of transpose.exchange's B_copy.
  std::int64_t b_copy = 0;
  /// Pipelined (bit-serial router) machines only: the fixed part of one dimension cycle (the
  /// router's address bit and set-up); a dimension cycle lasts t_hop + B t_c.
  Time t_hop;
  /// Pipelined machines only: messages a router can hold (0: unlimited).
  std::int64_t router_buffers = 0;
  /// The network model (sim/net/network.hpp) by name; empty: the default of `switching`
  /// (store_and_forward, bit_serial_router).
  std::string network;
  /// cm2_router only: processors sharing one router chip (a power of two; 16 on the CM-2).
  std::int64_t processors_per_router = 1;
  /// cm2_router only: messages a router chip takes from its processors in one dimension cycle
  /// (0: as many as its buffers hold).
  std::int64_t router_injections = 0;
  ModelKind kind = ModelKind::formula;
  std::map<std::string, std::string> sources;  ///< parameter -> where its value comes from
};

std::string switching_name(Switching s);

/// A message's time on one link of a store-and-forward machine: tau a packet, tau_msg once, t_c
/// an element -- its packets back to back, as the per-packet engine times them and a train
/// carries them in closed form (net::StoreAndForward::train_time). The lockstep simulators time
/// their messages with it too (sim/lockstep.cpp, sim/lockstep_one_port.cpp).
inline Time transmission_time(const Machine& m, std::int64_t packets, std::int64_t elements) {
  return m.tau * packets + m.tau_msg + m.t_c * elements;
}

}  // namespace cubesim
