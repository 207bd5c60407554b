/* TCP over Ethernet for SimGrid's flow model (CM02): a plugin preloaded into smpirun
 * (LD_PRELOAD) by the smpi stack's `tcp_kernel` and `network_model = cm02-tcp` knobs
 * (src/esmperf/mpi/tcp_model.py, docs/simulate.md "TCP on the flow model"). It does nothing
 * unless their variables are set. Two parts, both installed when SimGrid has built the platform:
 *
 * - the kernel's CPU cost per byte (ESM_TCP_KERNEL_RATE, bytes/s one core's TCP stack moves
 *   at each end): the kernel copies and checksums while the wire carries, a pipeline, so a
 *   transfer between two hosts (two nodes; a message inside a node is shared memory, no
 *   kernel TCP) runs at min(that rate, its route's bandwidth): SimGrid 3.32's bandwidth factor
 *   callback caps the flow at factor x route bandwidth.
 * - incast (ESM_TCP_INCAST_BUFFER_PACKETS, _INITIAL_WINDOW, _MSS, _FRAME, _RTO,
 *   _RECOVERY_WINDOW): SimGrid 3.32's latency factor callback, called as each transfer starts,
 *   keeps a fluid account of the bytes heading into each host's switch port. Flows that start
 *   while the port still drains an earlier one belong to one burst. A flow of the burst loses
 *   packets it cannot recover without the retransmission timeout (RTO) when
 *   (1) the burst's first windows (min(initial window, the flow's segments) each) overflow
 *       the port: arriving over M sender links at M x its rate, it stores (M - 1) / M of
 *       them, more than its buffer (a lost packet of a 3-segment window leaves too few
 *       duplicate acknowledgements for a fast retransmit); or
 *   (2) the burst's flows, sharing the port's buffer and the packets in flight on the route
 *       (its bandwidth x round trip), each get fewer than RECOVERY_WINDOW packets, and the
 *       flow is long enough to reach its share in slow start (2 x share segments), with 2 or more
 *       sender links (from one, the sender's own link is the bottleneck, and a host queues
 *       rather than drops): its window overflows too small to recover.
 *   The first such flow of a burst waits the RTO (its latency is multiplied to latency +
 *   RTO) and the others go on: in ns-3 most of a burst's bytes arrive before the timeout, and
 *   the flows that lose packets retransmit together when it fires. The form and the
 *   one fitted constant (RECOVERY_WINDOW) come from ns-3 runs of native/bench/incast.c
 *   (benchmarks/incast_sweep.py, docs/simulate.md), never from a seed's claim.
 */
#include <simgrid/s4u.hpp>
#include <simgrid/version.h> // after s4u.hpp: 3.32's needs xbt/base.h first
// SimGrid 3.32 sets the factor callbacks on the network model's interface; from 3.34 (4.1:
// `make setup-simgrid`) on the netzone, which passes them to the same model.
#if SIMGRID_VERSION < 33400
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#define ESM_FACTORS_ON_MODEL 1
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>
#include <unordered_set>

namespace
{

struct IncastModel {
    double buffer_packets = 0; // the switch port's buffer, in full frames
    double initial_window = 0; // segments a new flow sends before its first acknowledgement
    double mss = 0;            // bytes per segment
    double frame_bytes = 0;    // bytes a full segment takes in the switch's buffer
    double rto = 0;            // seconds a flow that lost packets it cannot recover waits
    double recovery_window = 0; // packets a flow's share must reach to recover a loss
};

// One switch port (the receiving host's): the bytes still to drain, when last updated, and
// the flows of the current burst and their first windows' packets.
struct Port {
    double backlog_bytes = 0;
    double updated = 0;
    double burst_flows = 0;
    double burst_packets = 0;
    bool burst_timed_out = false; // a flow of this burst already waits the RTO
    std::unordered_set<const simgrid::s4u::Host *> burst_sources;
};

double kernel_rate = 0; // bytes/s of one core's TCP stack; 0: not modelled
IncastModel incast;
std::unordered_map<const simgrid::s4u::Host *, Port> ports;

double variable(const char *name)
{
    const char *text = std::getenv(name);
    return text ? std::atof(text) : 0;
}

double kernel_bandwidth_factor(double, const simgrid::s4u::Host *source,
                               const simgrid::s4u::Host *destination,
                               const std::vector<simgrid::s4u::Link *> &links,
                               const std::unordered_set<simgrid::s4u::NetZone *> &)
{
    if (source == destination || links.empty())
        return 1;
    double route_bandwidth = links.front()->get_bandwidth();
    for (const auto *link : links)
        route_bandwidth = std::min(route_bandwidth, link->get_bandwidth());
    return std::min(1.0, kernel_rate / route_bandwidth);
}

double incast_latency_factor(double size, const simgrid::s4u::Host *source,
                             const simgrid::s4u::Host *destination,
                             const std::vector<simgrid::s4u::Link *> &links,
                             const std::unordered_set<simgrid::s4u::NetZone *> &)
{
    if (source == destination || links.empty())
        return 1;
    const double now = simgrid::s4u::Engine::get_clock();
    const double port_rate = links.back()->get_bandwidth();
    Port &port = ports[destination];
    port.backlog_bytes = std::max(0.0, port.backlog_bytes - port_rate * (now - port.updated));
    port.updated = now;
    if (port.backlog_bytes <= 0) { // the port was idle: a new burst
        port.burst_flows = 0;
        port.burst_packets = 0;
        port.burst_sources.clear();
        port.burst_timed_out = false;
    }
    port.backlog_bytes += size;
    const double segments = std::max(1.0, std::ceil(size / incast.mss));
    const double window = std::min(incast.initial_window, segments);
    port.burst_flows += 1;
    port.burst_packets += window;
    port.burst_sources.insert(source);
    // packets from M sender links arrive at M x the port's rate: it stores (M - 1) / M of them
    const double sources = static_cast<double>(port.burst_sources.size());
    const double stored = port.burst_packets * (sources - 1) / sources;
    double latency = 0;
    for (const auto *link : links)
        latency += link->get_latency();
    const bool first_windows_overflow = stored > incast.buffer_packets;
    const double in_flight = port_rate * 2 * latency / incast.frame_bytes;
    const double share = (incast.buffer_packets + in_flight) / port.burst_flows;
    const bool share_too_small =
        sources > 1 && share < incast.recovery_window && segments >= 2 * share;
    if (!(first_windows_overflow || share_too_small) || port.burst_timed_out || latency <= 0)
        return 1;
    port.burst_timed_out = true;
    return (latency + incast.rto) / latency;
}

void install()
{
#ifdef ESM_FACTORS_ON_MODEL
    auto *model = simgrid::s4u::Engine::get_instance()->get_netzone_root()->get_network_model();
    if (kernel_rate > 0)
        model->set_bw_factor_cb(kernel_bandwidth_factor);
    if (incast.buffer_packets > 0)
        model->set_lat_factor_cb(incast_latency_factor);
#else
    const auto *zone = simgrid::s4u::Engine::get_instance()->get_netzone_root();
    if (kernel_rate > 0)
        zone->set_bandwidth_factor_cb(kernel_bandwidth_factor);
    if (incast.buffer_packets > 0)
        zone->set_latency_factor_cb(incast_latency_factor);
#endif
}

__attribute__((constructor)) void read_model()
{
    kernel_rate = variable("ESM_TCP_KERNEL_RATE");
    incast.buffer_packets = variable("ESM_TCP_INCAST_BUFFER_PACKETS");
    incast.initial_window = variable("ESM_TCP_INCAST_INITIAL_WINDOW");
    incast.mss = variable("ESM_TCP_INCAST_MSS");
    incast.frame_bytes = variable("ESM_TCP_INCAST_FRAME");
    incast.recovery_window = variable("ESM_TCP_INCAST_RECOVERY_WINDOW");
    incast.rto = variable("ESM_TCP_INCAST_RTO");
    if (incast.buffer_packets > 0 &&
        (incast.initial_window <= 0 || incast.mss <= 0 || incast.frame_bytes <= 0)) {
        std::fprintf(stderr, "esm_tcp_model: ESM_TCP_INCAST_INITIAL_WINDOW, _MSS and _FRAME "
                             "must be set with the buffer\n");
        std::abort();
    }
    if (kernel_rate > 0 || incast.buffer_packets > 0)
        simgrid::s4u::Engine::on_platform_created_cb(install);
}

} // namespace
