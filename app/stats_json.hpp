#pragma once
/// Engine statistics as JSON, field for field and exact (times in integer picoseconds): what a
/// forked SimGrid run sends back (app/runner.cpp) and what an interrupted run keeps for --resume
/// (app/resume.cpp). Not a report format: reports are app/report.cpp's.
#include <nlohmann/json.hpp>

#include "sim/engine.hpp"
#include "sim/simgrid/backend.hpp"

namespace cubesim {

template <class J>
void to_json(J& j, const Time& t) {
  j = t.count();
}
template <class J>
void from_json(const J& j, Time& t) {
  t = Time::ps(j.template get<std::int64_t>());
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PathCounts, startups, msg_startups, element_transfers, flops, copies, delays,
                                   routing, overheads)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RunStats, time, critical_path, messages, packets, packet_hops, element_hops, events,
                                   resumes, max_link_load, mean_link_load, busiest_link_node, busiest_link_port,
                                   max_node_comm_busy, mean_node_comm_busy_s, max_node_compute_busy,
                                   mean_node_compute_busy_s, unreceived_messages, slot_ties, queued_transmissions,
                                   routed_messages, largest_message, router_cycles, router_collisions, router_blocked,
                                   router_detours, router_peak_buffer, wall_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SimGridStats, time_s, messages, packets, activities, resumes, workers, inline_ops,
                                   unreceived_messages, platform_s, wall_s)

}  // namespace cubesim
