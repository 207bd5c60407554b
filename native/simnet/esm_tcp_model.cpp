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
 * - incast (ESM_TCP_INCAST_BUFFER_PACKETS, _INITIAL_WINDOW, _MSS, _RTO): SimGrid 3.32's latency
 *   factor callback, called as each transfer starts, keeps a fluid account of the bytes
 *   heading into each host's switch port. Flows that start while the port is still draining an
 *   earlier one belong to one burst; each flow's first window (min(initial window, its
 *   segments)) joins the burst's packets, and the switch port holds its buffer plus what it
 *   forwards while the window arrives. A flow whose first window finds the buffer full loses
 *   it and waits the retransmission timeout: its latency is multiplied to latency + RTO.
 *   The form and its constants come from ns-3 runs of native/bench/incast.c
 *   (benchmarks/incast_sweep.py), never from a seed's claim.
 */
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

namespace
{

struct IncastModel {
    double buffer_packets = 0; // the switch port's buffer, in full frames
    double initial_window = 0; // segments a new flow sends before its first acknowledgement
    double mss = 0;            // bytes per segment
    double rto = 0;            // seconds a flow that lost its first window waits
};

// One switch port (the receiving host's): the bytes still to drain, when last updated, and
// the first-window packets of the flows of the current burst.
struct Port {
    double backlog_bytes = 0;
    double updated = 0;
    double burst_packets = 0;
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
    if (port.backlog_bytes <= 0)
        port.burst_packets = 0; // the port was idle: a new burst
    port.backlog_bytes += size;
    const double segments = std::max(1.0, std::ceil(size / incast.mss));
    const double window = std::min(incast.initial_window, segments);
    port.burst_packets += window;
    // the port forwards one packet while each packet of a window arrives from its sender
    if (port.burst_packets <= incast.buffer_packets + window)
        return 1;
    double latency = 0;
    for (const auto *link : links)
        latency += link->get_latency();
    return latency > 0 ? (latency + incast.rto) / latency : 1;
}

void install()
{
    auto *model = simgrid::s4u::Engine::get_instance()->get_netzone_root()->get_network_model();
    if (kernel_rate > 0)
        model->set_bw_factor_cb(kernel_bandwidth_factor);
    if (incast.buffer_packets > 0)
        model->set_lat_factor_cb(incast_latency_factor);
}

__attribute__((constructor)) void read_model()
{
    kernel_rate = variable("ESM_TCP_KERNEL_RATE");
    incast.buffer_packets = variable("ESM_TCP_INCAST_BUFFER_PACKETS");
    incast.initial_window = variable("ESM_TCP_INCAST_INITIAL_WINDOW");
    incast.mss = variable("ESM_TCP_INCAST_MSS");
    incast.rto = variable("ESM_TCP_INCAST_RTO");
    if (incast.buffer_packets > 0 && (incast.initial_window <= 0 || incast.mss <= 0)) {
        std::fprintf(stderr, "esm_tcp_model: ESM_TCP_INCAST_INITIAL_WINDOW and "
                             "ESM_TCP_INCAST_MSS must be set with the buffer\n");
        std::abort();
    }
    if (kernel_rate > 0 || incast.buffer_packets > 0)
        simgrid::s4u::Engine::on_platform_created_cb(install);
}

} // namespace
