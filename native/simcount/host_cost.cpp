// The host's cost per message by where the message goes: loaded into SimGrid's smpimain with the
// message counter (message_count.cpp), it gives a message between two ranks of one host its own
// share of the host's per-message CPU time (LogGP o), where smpi/os, smpi/ois and smpi/or charge
// every message the same whatever its destination (docs/simulate.md, "The host's cost per
// message"). The `host_overhead` knob sets it at the low end of its band:
//
//     --cfg=esm/os:<piecewise> --cfg=esm/ois:<piecewise> --cfg=esm/or:<piecewise>
//     --cfg=esm/on-node-share:0
//
// and this file registers SMPI's cost callbacks (smpi_register_op_cost_callback: size, source
// host, destination host; SimGrid 3.32 and 4.1) that charge a message between hosts the esm/*
// figure and a message within a host on-node-share times it. Without esm/on-node-share set, no
// callback is registered and SimGrid charges smpi/os, ois and or as it always does.
//
// A piecewise figure is SimGrid's form "boundary:offset:per_byte;...", charged as SimGrid 3.32
// does (smpi_host.cpp): the piece with the largest boundary below the size, the first piece at
// or below its boundary (mpi/host_overhead.py `charged` is the same rule).
#include <algorithm>
#include <xbt/config.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <smpi/smpi.h>
#include <sstream>
#include <string>
#include <vector>
#include <xbt/log.h>

namespace
{
struct Piece {
    double boundary;
    double offset;
    double per_byte;
};
using Pieces = std::vector<Piece>;

simgrid::config::Flag<std::string> send_figure{"esm/os", "MPI_Send's cost per message (piecewise)",
                                               ""};
simgrid::config::Flag<std::string> isend_figure{"esm/ois",
                                                "MPI_Isend's cost per message (piecewise)", ""};
simgrid::config::Flag<std::string> recv_figure{"esm/or", "a receive's cost per message (piecewise)",
                                               ""};
simgrid::config::Flag<double> on_node_share{
    "esm/on-node-share", "share of esm/os, ois and or a message within one host costs", -1.0};

Pieces parse(const std::string &option)
{
    Pieces pieces;
    std::stringstream all(option);
    std::string piece;
    while (std::getline(all, piece, ';')) {
        Piece p{};
        char colon1 = 0;
        char colon2 = 0;
        std::stringstream one(piece);
        if (!(one >> p.boundary >> colon1 >> p.offset >> colon2 >> p.per_byte) || colon1 != ':' ||
            colon2 != ':')
            xbt_die("esm: bad piecewise figure '%s' (boundary:offset:per_byte;...)", option.c_str());
        pieces.push_back(p);
    }
    std::sort(pieces.begin(), pieces.end(),
              [](const Piece &a, const Piece &b) { return a.boundary < b.boundary; });
    return pieces;
}

double charged(const Pieces &pieces, size_t size)
{
    if (pieces.empty())
        return 0.0;
    double offset = pieces.front().offset;
    double per_byte = pieces.front().per_byte;
    for (const Piece &p : pieces) {
        if (static_cast<double>(size) <= p.boundary)
            break;
        offset = p.offset;
        per_byte = p.per_byte;
    }
    return offset + per_byte * static_cast<double>(size);
}

void register_callback(SmpiOperation op, const std::string &figure, double share)
{
    Pieces pieces = parse(figure);
    smpi_register_op_cost_callback(
        op, [pieces, share](size_t size, simgrid::s4u::Host *src, simgrid::s4u::Host *dst) {
            double cost = charged(pieces, size);
            return src == dst ? share * cost : cost;
        });
}

__attribute__((constructor)) void charge_by_destination()
{
    // after the command line's --cfg: the flags hold their values once the platform exists
    simgrid::s4u::Engine::on_platform_created_cb([] {
        double share = on_node_share.get();
        if (share < 0)
            return; // not asked for: SimGrid's own smpi/os, ois and or
        if (share > 1)
            xbt_die("esm/on-node-share is a share of the per-message figure: 0 to 1, not %g",
                    share);
        register_callback(SmpiOperation::SEND, send_figure.get(), share);
        register_callback(SmpiOperation::ISEND, isend_figure.get(), share);
        register_callback(SmpiOperation::RECV, recv_figure.get(), share);
    });
}
} // namespace
