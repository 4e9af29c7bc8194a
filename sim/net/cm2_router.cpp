// Network model `cm2_router`: the Connection Machine CM-2's router, 16 processors sharing one
// router chip on a 12-cube of chips (2^16 processors).
//
// Facts (machines/presets/cm2.json carries each with its source): "The processors were grouped 16
// to a chip, making a total of 4,096 chips. These chips were to be wired together in a network
// having the shape of a 12-dimensional hypercube" (T. Thiel, the CM's designer); a message
// carries a relative address, one bit per dimension (Hillis, US patent 4,598,400, claim 1), so a
// message between two processors of one chip crosses no wire of the cube. Everything else is the
// bit-serial router of sim/net/bit_serial_router.hpp, run on the chips' cube: synchronous
// dimension cycles, the oldest message first, a chip's few buffers shared by its 16 processors,
// desperation routing when they are full.
//
// What this model adds (docs/model.md "The CM-2"):
//  - routers of `processors_per_router` processors (a power of two; 16 on the CM-2): processor p
//    sends and receives through router p / 16, the cube of routers has n - 4 dimensions, and a
//    message to a processor of the same chip leaves the router at the end of the cycle that
//    took it in;
//  - arbitration among the chip's processors: a chip takes at most `router_injections` messages
//    a dimension cycle from its processors (0: as many as its buffers hold), oldest first, in the
//    order their start-ups ended (a modelling choice: no public figure was found).
#include <bit>
#include <memory>
#include <stdexcept>
#include <string>

#include "sim/net/bit_serial_router.hpp"

namespace cubesim::net {

namespace {

int group_bits(const Machine& m) {
  const std::int64_t p = m.processors_per_router;
  if (p < 1 || !std::has_single_bit(static_cast<std::uint64_t>(p)))
    throw std::invalid_argument("processors_per_router must be a power of two, got " + std::to_string(p));
  return std::countr_zero(static_cast<std::uint64_t>(p));
}

class Cm2Router final : public BitSerialRouter {
 public:
  explicit Cm2Router(Engine& k) : BitSerialRouter(k, group_bits(k.machine()), k.machine().router_injections) {}
};

const NetworkRegistration kRegistrationCm2Router{{
    .name = "cm2_router",
    .switching = Switching::pipelined,
    .summary = "the CM-2's router: processors_per_router processors share a router chip on a cube of chips, "
               "router_injections messages a chip takes in a dimension cycle",
    .make = [](Engine& k) -> std::unique_ptr<Network> { return std::make_unique<Cm2Router>(k); },
    .in_order = false,
}};

}  // namespace

}  // namespace cubesim::net
