#pragma once
/// What lies on a chain of activities: start-ups, element transfers, flops, copies and delays.
/// The engine carries one of these forward with every activity: an activity's chain is the
/// chain of whichever constraint made it start last (its data, or the resource it waited for),
/// plus itself. The chain of the activity that ends last is the critical path of the run; its
/// start-ups and element transfers are the columns of the papers' tables (TR-530 Tables 1-4).
#include <cstdint>

#include "sim/machine.hpp"
#include "sim/time.hpp"

namespace cubesim {

struct PathCounts {
  std::int64_t startups = 0;           ///< packet start-ups (tau each)
  std::int64_t msg_startups = 0;       ///< message start-ups (tau_msg each)
  std::int64_t element_transfers = 0;  ///< elements moved across links (t_c each)
  std::int64_t flops = 0;              ///< arithmetic operations (t_a each)
  std::int64_t copies = 0;             ///< elements copied (t_copy each)
  Time delays;                         ///< explicit delay(t) calls
  Time routing;                        ///< pipelined machines: from injection into the router to delivery
  Time overheads;                      ///< node software: o_send, o_recv and t_call (docs/model.md)

  /// The time this chain accounts for under machine m.
  [[nodiscard]] Time time(const Machine& m) const {
    return m.tau * startups + m.tau_msg * msg_startups + m.t_c * element_transfers + m.t_a * flops + m.t_copy * copies +
           delays + routing + overheads;
  }
  bool operator==(const PathCounts&) const = default;
};

}  // namespace cubesim
