// A stored route and its run engine's state.
#ifndef ESM_REDIST_ROUTE_HPP
#define ESM_REDIST_ROUTE_HPP

#include <sys/uio.h>

#include "internal.hpp"

namespace esm {

// One MPI transfer: `count` items of `type` at `addr` to or from peers[peer]; `msg` is the
// packed message it carries a part of (-1: data goes straight to or from the fields).
struct Op {
    void *addr;
    int count;
    MPI_Datatype type;
    int peer;
    int msg;
};

// A packed message: fields [f0, f1) of segments [s0, s1) of peers[peer], field after field,
// at `offset` in the side's buffer.
struct Msg {
    int peer;
    int f0, f1, s0, s1;
    size_t offset, bytes;
};

// The MPI peers of one direction (sends or receives) and what runs them.
struct Side {
    std::vector<Peer> peers;             // sorted by rank
    std::vector<int> order;              // peers by distance from this rank (ring order)
    std::vector<Msg> msgs;               // packed modes, grouped by peer
    std::vector<size_t> first_msg;       // per peer, + end
    size_t buffer_bytes = 0;
    char *buffer = nullptr;              // allocated at the first run
    std::vector<MPI_Datatype> layouts;   // datatype mode: per peer, the elements of one field
    std::vector<MPI_Datatype> bundles;   // datatype mode with bundle: per peer, all fields at their addresses
    std::vector<Op> ops;                 // this run's transfers, grouped by peer
    std::vector<size_t> first_op;        // per peer, + end
    std::vector<MPI_Request> requests;   // one per op
    std::vector<int> pending;            // per msg: ops not yet complete
    int64_t elements = 0;                // of one field, all peers
};

}  // namespace esm

struct esm_route {
    std::shared_ptr<esm::Comm> comm;  // null for a layout-only route
    MPI_Comm mpi = MPI_COMM_NULL;
    int rank = 0, nranks = 1, tag = 0;
    esm_fields fields{};
    size_t esz = 8;
    MPI_Datatype base = MPI_DATATYPE_NULL;
    esm_route_options options{};
    esm::Side send, recv;                              // MPI peers
    std::vector<esm::Peer> copy_send, copy_recv;       // single-copy peers (same node)
    std::vector<int> copy_send_pids, copy_recv_pids;   // their process ids
    std::vector<esm::Segment> self_src, self_dst;      // copied directly (local_direct)
    int64_t local_elements = 0;
    int64_t src_count = 0;  // elements of one source field on this rank
    int64_t segments = 0;
    bool stream = false;  // direct copies with non-temporal stores (larger than the caches)

    // run state
    bool running = false;
    bool ops_ready = false;
    bool persistent_made = false;
    std::vector<const void *> src;
    std::vector<void *> dst;
    std::vector<uint64_t> ready_out;                   // per single-copy receiver: how to reach my fields
    std::vector<uint64_t> ready_in;                    // per single-copy sender: how to reach its fields
    std::vector<MPI_Request> ready_recv, ready_send, done_recv, done_send, data_recv, data_send;
    std::vector<char *> node_send_buffers, node_recv_buffers;  // node peers without shared memory or CMA
    std::vector<struct iovec> iov_local, iov_remote;

    ~esm_route();
};

namespace esm {
esm_route *build_route(Plan &&plan, const esm_distgrid &src, esm_fields fields, const esm_route_options &options,
                       std::shared_ptr<Comm> comm, int rank, int nranks, int tag);
void run_begin(esm_route &r, const void *const src[], void *const dst[]);
void run_end(esm_route &r);
int64_t data_messages(const esm_route &r);
}  // namespace esm

#endif
