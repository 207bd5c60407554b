// The run engine: moves a bundle along a stored route. Longer than the house's 600 lines
// because the three exchange modes and the single-copy path below all work on the per-peer
// transfer tables (Side, Peer, Msg) built here and private to this file.
//
// Per run, for the MPI peers, each side (send, receive) has a list of transfers ("ops"): parts
// of packed messages in the side's buffer (ESM_PACK_PET, ESM_PACK_XP), contiguous runs of the
// fields themselves (ESM_PACK_NONE) or derived datatypes over the fields (ESM_PACK_DATATYPE).
// ESM_COMM_ASYNC posts every receive, then packs and sends peer by peer in ring order, and
// unpacks messages as they complete; ESM_COMM_PERSISTENT does the same with requests made once;
// ESM_COMM_SYNC walks the ring distances in order, pairing the i-th transfer to the peer at
// distance s with the i-th transfer from the peer at distance -s in one MPI_Sendrecv (every
// rank handles distance s in the same round, so the pairs always match).
//
// Single-copy peers (same node) exchange no data messages: the sender announces, per run, how
// its fields can be reached ("ready"): in node-shared memory from esm_shared_alloc (the receiver
// copies with memcpy from the sender's segment, mapped in its own address space), else by
// address (the receiver reads them with process_vm_readv, cross-memory attach), else - where
// neither works - as one packed MPI message. The receiver copies its elements straight from the
// sender's fields into its own, then says "done"; the sender's run ends when all its readers are
// done, so it may then modify its fields again.
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <atomic>
#include <cstring>

#include <sys/uio.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "route.hpp"

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

namespace esm {

constexpr size_t chunk_bytes = size_t(1) << 30;  // largest single MPI message (counts are int)
constexpr size_t waitsome_limit = 256;           // beyond: complete transfers in posting order
constexpr size_t stream_threshold = size_t(8) << 20;  // direct copies per run beyond which stores stream

// Copies with non-temporal stores: for copies larger than the caches the destination lines are
// written without being read first (memcpy does the same for one large block, but not for the
// many rows of a redistribution), a third less memory traffic. Finished by stream_fence().
static inline void stream_copy(char *to, const char *from, size_t n) {
#if defined(__SSE2__)
    size_t head = (16 - ((uintptr_t)to & 15)) & 15;
    if (n < head + 64) {
        std::memcpy(to, from, n);
        return;
    }
    std::memcpy(to, from, head);
    to += head, from += head, n -= head;
    for (; n >= 64; n -= 64, to += 64, from += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)from), b = _mm_loadu_si128((const __m128i *)(from + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(from + 32)), d = _mm_loadu_si128((const __m128i *)(from + 48));
        _mm_stream_si128((__m128i *)to, a);
        _mm_stream_si128((__m128i *)(to + 16), b);
        _mm_stream_si128((__m128i *)(to + 32), c);
        _mm_stream_si128((__m128i *)(to + 48), d);
    }
    std::memcpy(to, from, n);
#else
    std::memcpy(to, from, n);
#endif
}

static inline void stream_fence() {
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

// A direct copy of one run: streamed when this route's direct copies per run exceed the caches.
static inline void copy_run(const esm_route &r, char *to, const char *from, size_t n) {
    if (r.stream) stream_copy(to, from, n);
    else std::memcpy(to, from, n);
}

static bool packed(const esm_route &r) { return r.options.pack == ESM_PACK_PET || r.options.pack == ESM_PACK_XP; }

static void setup_side(esm_route &r, Side &side, bool sending) {
    const int nf = r.fields.count;
    std::sort(side.peers.begin(), side.peers.end(), [](const Peer &a, const Peer &b) { return a.rank < b.rank; });
    side.order.resize(side.peers.size());
    for (size_t i = 0; i < side.peers.size(); i++) side.order[i] = (int)i;
    auto distance = [&](int i) {
        int d = sending ? side.peers[i].rank - r.rank : r.rank - side.peers[i].rank;
        return (d + r.nranks) % r.nranks;
    };
    std::sort(side.order.begin(), side.order.end(), [&](int a, int b) { return distance(a) < distance(b); });
    side.elements = 0;
    for (const Peer &p : side.peers) side.elements += p.elements;
    if (!packed(r)) return;
    size_t offset = 0;
    for (size_t i = 0; i < side.peers.size(); i++) {
        const Peer &p = side.peers[i];
        side.first_msg.push_back(side.msgs.size());
        int nseg = (int)p.segs.size();
        auto add = [&](int f0, int f1, int s0, int s1) {
            int64_t n = 0;
            for (int s = s0; s < s1; s++) n += p.segs[s].elements();
            size_t bytes = (size_t)n * (f1 - f0) * r.esz;
            side.msgs.push_back({(int)i, f0, f1, s0, s1, offset, bytes});
            offset += bytes;
        };
        if (r.options.pack == ESM_PACK_PET) {
            if (r.options.bundle) add(0, nf, 0, nseg);
            else for (int f = 0; f < nf; f++) add(f, f + 1, 0, nseg);
        } else if (r.options.bundle) {
            for (int s = 0; s < nseg; s++) add(0, nf, s, s + 1);
        } else {
            for (int f = 0; f < nf; f++)
                for (int s = 0; s < nseg; s++) add(f, f + 1, s, s + 1);
        }
    }
    side.first_msg.push_back(side.msgs.size());
    side.buffer_bytes = offset;
    side.pending.assign(side.msgs.size(), 0);
}

esm_route *build_route(Plan &&plan, const esm_distgrid &src, esm_fields fields, const esm_route_options &options,
                       std::shared_ptr<Comm> comm, int rank, int nranks, int tag) {
    auto r = std::make_unique<esm_route>();
    r->comm = comm;
    r->mpi = comm ? comm->comm : MPI_COMM_NULL;
    r->rank = rank, r->nranks = nranks, r->tag = tag;
    r->fields = fields;
    r->esz = type_size(fields.type);
    r->base = mpi_type(fields.type);
    r->options = options;
    r->src_count = src.local_count;
    const NodeInfo *node = comm ? comm->node.get() : nullptr;
    auto single_copy = [&](int peer) { return options.single_copy && node && node->pid_of(peer) >= 0; };
    for (Peer &p : plan.sends) {
        r->segments += (int64_t)p.segs.size();
        p.single_copy = single_copy(p.rank);
        if (p.single_copy) {
            r->copy_send_pids.push_back(node->pid_of(p.rank));
            r->copy_send.push_back(std::move(p));
        } else {
            r->send.peers.push_back(std::move(p));
        }
    }
    for (Peer &p : plan.recvs) {
        r->segments += (int64_t)(p.segs.size() + p.remote.size());
        p.single_copy = single_copy(p.rank);
        if (p.single_copy) {
            r->copy_recv_pids.push_back(node->pid_of(p.rank));
            r->copy_recv.push_back(std::move(p));
        } else {
            p.remote.clear();
            r->recv.peers.push_back(std::move(p));
        }
    }
    {  // node peers read in ring order (nearest source first), so they do not all start at one source
        std::vector<size_t> order(r->copy_recv.size());
        for (size_t i = 0; i < order.size(); i++) order[i] = i;
        auto distance = [&](size_t i) { return (rank - r->copy_recv[i].rank + nranks) % nranks; };
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return distance(a) < distance(b); });
        std::vector<Peer> peers;
        std::vector<int> pids;
        for (size_t i : order) peers.push_back(std::move(r->copy_recv[i])), pids.push_back(r->copy_recv_pids[i]);
        r->copy_recv = std::move(peers);
        r->copy_recv_pids = std::move(pids);
    }
    for (const Segment &s : plan.self_src) r->local_elements += s.elements();
    r->segments += (int64_t)(plan.self_src.size() + plan.self_dst.size());
    if (options.local_direct || r->local_elements == 0) {
        r->self_src = std::move(plan.self_src);
        r->self_dst = std::move(plan.self_dst);
    } else {  // this rank's own overlap goes through MPI like any peer's
        Peer out, in;
        out.rank = in.rank = rank;
        out.elements = in.elements = r->local_elements;
        out.segs = std::move(plan.self_src);
        in.segs = std::move(plan.self_dst);
        r->send.peers.push_back(std::move(out));
        r->recv.peers.push_back(std::move(in));
    }
    setup_side(*r, r->send, true);
    setup_side(*r, r->recv, false);
    int64_t direct = r->local_elements + r->send.elements + r->recv.elements;  // copied by this rank each run
    for (const Peer &p : r->copy_recv) direct += p.elements;  // (packed and unpacked, or from node peers)
    const char *env = std::getenv("ESM_REDIST_STREAM");  // 0: never, 1: always, else by size
    r->stream = env && *env == '0' ? false
                : env && *env == '1' ? true
                                     : (size_t)direct * fields.count * r->esz >= stream_threshold;
    return r.release();
}

int64_t data_messages(const esm_route &r) {
    const int nf = r.fields.count;
    int64_t n = 0;
    switch (r.options.pack) {
    case ESM_PACK_PET:
    case ESM_PACK_XP:
        for (const Msg &m : r.send.msgs) n += (int64_t)((m.bytes + chunk_bytes - 1) / chunk_bytes);
        break;
    case ESM_PACK_NONE:
        for (const Peer &p : r.send.peers)
            for (const Segment &s : p.segs)
                n += s.rows() * nf * (int64_t)((s.len * r.esz + chunk_bytes - 1) / chunk_bytes);
        break;
    case ESM_PACK_DATATYPE:
        n = (int64_t)r.send.peers.size() * (r.options.bundle ? 1 : nf);
        break;
    }
    return n;
}

// ---- data movement on this rank -------------------------------------------------------------

// Fields [f0, f1) of segments [s0, s1) of a peer, field after field, into `out` / from `in`.
static void pack_fields(const esm_route &r, const Peer &p, int f0, int f1, int s0, int s1, char *out) {
    const size_t esz = r.esz;
    for (int f = f0; f < f1; f++) {
        const char *base = static_cast<const char *>(r.src[f]);
        for (int s = s0; s < s1; s++)
            for_each_run(p.segs[s], true, [&](int64_t offset, int64_t len) {
                copy_run(r, out, base + offset * esz, len * esz);
                out += len * esz;
            });
    }
    if (r.stream) stream_fence();  // the buffer complete before MPI reads it
}

static void unpack_fields(const esm_route &r, const Peer &p, int f0, int f1, int s0, int s1, const char *in) {
    const size_t esz = r.esz;
    for (int f = f0; f < f1; f++) {
        char *base = static_cast<char *>(r.dst[f]);
        for (int s = s0; s < s1; s++)
            for_each_run(p.segs[s], true, [&](int64_t offset, int64_t len) {
                copy_run(r, base + offset * esz, in, len * esz);
                in += len * esz;
            });
    }
}

static void pack(const esm_route &r, const Side &side, const Msg &m) {
    pack_fields(r, side.peers[m.peer], m.f0, m.f1, m.s0, m.s1, side.buffer + m.offset);
}

static void unpack(const esm_route &r, const Side &side, const Msg &m) {
    unpack_fields(r, side.peers[m.peer], m.f0, m.f1, m.s0, m.s1, side.buffer + m.offset);
}

static void copy_local(const esm_route &r) {
    if (r.self_src.empty()) return;
    const size_t esz = r.esz;
    for (int f = 0; f < r.fields.count; f++) {
        const char *from = static_cast<const char *>(r.src[f]);
        char *to = static_cast<char *>(r.dst[f]);
        zip_runs(r.self_src, r.self_dst, [&](int64_t a, int64_t b, int64_t n) {
            copy_run(r, to + b * esz, from + a * esz, n * esz);
        });
    }
}

// ---- transfers --------------------------------------------------------------------------------

static MPI_Datatype layout_type(const esm_route &r, const std::vector<Segment> &segs) {
    const MPI_Aint esz = (MPI_Aint)r.esz;
    bool simple = segs.size() <= (size_t)INT_MAX;
    for (const Segment &s : segs) simple = simple && s.rows() == 1 && s.len <= INT_MAX;
    MPI_Datatype out;
    if (simple) {
        std::vector<int> lens(segs.size());
        std::vector<MPI_Aint> displs(segs.size());
        for (size_t i = 0; i < segs.size(); i++) lens[i] = (int)segs[i].len, displs[i] = segs[i].offset * esz;
        check_mpi(MPI_Type_create_hindexed((int)segs.size(), lens.data(), displs.data(), r.base, &out),
                  "MPI_Type_create_hindexed");
    } else {
        std::vector<MPI_Datatype> types(segs.size());
        std::vector<int> ones(segs.size(), 1);
        std::vector<MPI_Aint> displs(segs.size());
        for (size_t i = 0; i < segs.size(); i++) {
            const Segment &s = segs[i];
            if (s.len > INT_MAX || s.count[0] > INT_MAX || s.count[1] > INT_MAX || s.count[2] > INT_MAX)
                fail(ESM_ERR_UNSUPPORTED, "a segment over 2^31 elements per dimension: use ESM_PACK_PET");
            MPI_Datatype t;
            check_mpi(MPI_Type_contiguous((int)s.len, r.base, &t), "MPI_Type_contiguous");
            for (int j = 0; j < 3; j++) {
                if (s.count[j] == 1) continue;
                MPI_Datatype v;
                check_mpi(MPI_Type_create_hvector((int)s.count[j], 1, s.stride[j] * esz, t, &v), "MPI_Type_create_hvector");
                MPI_Type_free(&t);
                t = v;
            }
            types[i] = t;
            displs[i] = s.offset * esz;
        }
        check_mpi(MPI_Type_create_struct((int)segs.size(), ones.data(), displs.data(), types.data(), &out),
                  "MPI_Type_create_struct");
        for (MPI_Datatype &t : types) MPI_Type_free(&t);
    }
    check_mpi(MPI_Type_commit(&out), "MPI_Type_commit");
    return out;
}

static void free_types(std::vector<MPI_Datatype> &types) {
    for (MPI_Datatype &t : types)
        if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
    types.clear();
}

static void free_persistent(Side &side) {
    for (MPI_Request &q : side.requests)
        if (q != MPI_REQUEST_NULL) MPI_Request_free(&q);
}

// This run's transfers of one side (rebuilt when they depend on the fields' addresses).
static void build_ops(esm_route &r, Side &side, bool sending) {
    const int nf = r.fields.count;
    const size_t esz = r.esz;
    side.ops.clear();
    side.first_op.clear();
    auto add_bytes = [&](char *addr, size_t bytes, int peer, int msg) {
        for (size_t done = 0; done < bytes; done += chunk_bytes)
            side.ops.push_back({addr + done, (int)std::min(chunk_bytes, bytes - done), MPI_BYTE, peer, msg});
    };
    auto field = [&](int f) -> char * {
        return sending ? const_cast<char *>(static_cast<const char *>(r.src[f])) : static_cast<char *>(r.dst[f]);
    };
    if (r.options.pack == ESM_PACK_DATATYPE) {
        if (side.layouts.empty())
            for (const Peer &p : side.peers) side.layouts.push_back(layout_type(r, p.segs));
        free_types(side.bundles);
    }
    for (size_t i = 0; i < side.peers.size(); i++) {
        const Peer &p = side.peers[i];
        side.first_op.push_back(side.ops.size());
        switch (r.options.pack) {
        case ESM_PACK_PET:
        case ESM_PACK_XP:
            for (size_t m = side.first_msg[i]; m < side.first_msg[i + 1]; m++)
                add_bytes(side.buffer + side.msgs[m].offset, side.msgs[m].bytes, (int)i, (int)m);
            break;
        case ESM_PACK_NONE:
            if (r.options.bundle) {
                for (const Segment &s : p.segs)
                    for_each_run(s, false, [&](int64_t offset, int64_t len) {
                        for (int f = 0; f < nf; f++) add_bytes(field(f) + offset * esz, len * esz, (int)i, -1);
                    });
            } else {
                for (int f = 0; f < nf; f++)
                    for (const Segment &s : p.segs)
                        for_each_run(s, false, [&](int64_t offset, int64_t len) {
                            add_bytes(field(f) + offset * esz, len * esz, (int)i, -1);
                        });
            }
            break;
        case ESM_PACK_DATATYPE:
            if (r.options.bundle) {
                std::vector<int> ones(nf, 1);
                std::vector<MPI_Aint> addresses(nf);
                std::vector<MPI_Datatype> types(nf, side.layouts[i]);
                for (int f = 0; f < nf; f++) MPI_Get_address(field(f), &addresses[f]);
                MPI_Datatype t;
                check_mpi(MPI_Type_create_struct(nf, ones.data(), addresses.data(), types.data(), &t),
                          "MPI_Type_create_struct");
                check_mpi(MPI_Type_commit(&t), "MPI_Type_commit");
                side.bundles.push_back(t);
                side.ops.push_back({MPI_BOTTOM, 1, t, (int)i, -1});
            } else {
                for (int f = 0; f < nf; f++) side.ops.push_back({field(f), 1, side.layouts[i], (int)i, -1});
            }
            break;
        }
    }
    side.first_op.push_back(side.ops.size());
    side.requests.assign(side.ops.size(), MPI_REQUEST_NULL);
}

static void make_persistent(esm_route &r, Side &side, bool sending) {
    for (size_t k = 0; k < side.ops.size(); k++) {
        const Op &op = side.ops[k];
        int peer = side.peers[op.peer].rank;
        if (sending)
            check_mpi(MPI_Send_init(op.addr, op.count, op.type, peer, r.tag, r.mpi, &side.requests[k]), "MPI_Send_init");
        else
            check_mpi(MPI_Recv_init(op.addr, op.count, op.type, peer, r.tag, r.mpi, &side.requests[k]), "MPI_Recv_init");
    }
}

static void ensure_ops(esm_route &r, const void *const src[], void *const dst[]) {
    const int nf = r.fields.count;
    bool same_fields = r.ops_ready && std::equal(src, src + nf, r.src.begin()) && std::equal(dst, dst + nf, r.dst.begin());
    r.src.assign(src, src + nf);
    r.dst.assign(dst, dst + nf);
    if (r.ops_ready && (packed(r) || same_fields)) return;  // packed ops depend on the buffers only
    for (Side *side : {&r.send, &r.recv}) {
        if (packed(r) && !side->buffer && side->buffer_bytes) {
            void *p = nullptr;
            if (posix_memalign(&p, 64, side->buffer_bytes)) throw std::bad_alloc();
            side->buffer = static_cast<char *>(p);
        }
        if (r.persistent_made) free_persistent(*side);
    }
    build_ops(r, r.send, true);
    build_ops(r, r.recv, false);
    if (r.options.comm == ESM_COMM_PERSISTENT) {
        make_persistent(r, r.send, true);
        make_persistent(r, r.recv, false);
        r.persistent_made = true;
    }
    r.ops_ready = true;
}

static void post(esm_route &r, Side &side, int peer, bool sending) {
    size_t a = side.first_op[peer], b = side.first_op[peer + 1];
    if (a == b) return;
    if (r.options.comm == ESM_COMM_PERSISTENT) {
        check_mpi(MPI_Startall((int)(b - a), &side.requests[a]), "MPI_Startall");
        return;
    }
    int rank = side.peers[peer].rank;
    for (size_t k = a; k < b; k++) {
        const Op &op = side.ops[k];
        if (sending)
            check_mpi(MPI_Isend(op.addr, op.count, op.type, rank, r.tag, r.mpi, &side.requests[k]), "MPI_Isend");
        else
            check_mpi(MPI_Irecv(op.addr, op.count, op.type, rank, r.tag, r.mpi, &side.requests[k]), "MPI_Irecv");
    }
}

static void pack_peer(esm_route &r, int peer) {
    if (!packed(r)) return;
    for (size_t m = r.send.first_msg[peer]; m < r.send.first_msg[peer + 1]; m++) pack(r, r.send, r.send.msgs[m]);
}

static void unpack_peer(esm_route &r, int peer) {
    if (!packed(r)) return;
    for (size_t m = r.recv.first_msg[peer]; m < r.recv.first_msg[peer + 1]; m++) unpack(r, r.recv, r.recv.msgs[m]);
}

// ---- single copy (node peers) -----------------------------------------------------------------

enum : uint64_t { via_mpi = 0, via_cma = 1, via_shared = 2 };

static size_t ready_words(const esm_route &r) { return 1 + 2 * (size_t)r.fields.count; }

static char *node_buffer(std::vector<char *> &buffers, size_t i, size_t bytes) {
    if (!buffers[i]) {
        void *p = nullptr;
        if (posix_memalign(&p, 64, bytes ? bytes : 64)) throw std::bad_alloc();
        buffers[i] = static_cast<char *>(p);
    }
    return buffers[i];
}

static void single_copy_begin(esm_route &r) {
    const int nf = r.fields.count;
    const size_t words = ready_words(r);
    if (r.copy_send.empty() && r.copy_recv.empty()) return;
    r.ready_out.resize(r.copy_send.size() * words);
    r.ready_in.resize(r.copy_recv.size() * words);
    r.ready_recv.assign(r.copy_recv.size(), MPI_REQUEST_NULL);
    r.done_send.assign(r.copy_recv.size(), MPI_REQUEST_NULL);
    r.data_recv.assign(r.copy_recv.size(), MPI_REQUEST_NULL);
    r.ready_send.assign(r.copy_send.size(), MPI_REQUEST_NULL);
    r.done_recv.assign(r.copy_send.size(), MPI_REQUEST_NULL);
    r.data_send.assign(r.copy_send.size(), MPI_REQUEST_NULL);
    r.node_send_buffers.resize(r.copy_send.size(), nullptr);
    r.node_recv_buffers.resize(r.copy_recv.size(), nullptr);
    for (size_t i = 0; i < r.copy_recv.size(); i++)
        check_mpi(MPI_Irecv(&r.ready_in[i * words], (int)words, MPI_UINT64_T, r.copy_recv[i].rank, r.tag + 1, r.mpi,
                            &r.ready_recv[i]),
                  "MPI_Irecv (ready)");
    // where my source fields are: node-shared blocks (and offsets in them), or private memory
    std::vector<const SharedBlock *> blocks(nf);
    std::vector<uint64_t> offsets(nf);
    for (int f = 0; f < nf; f++) {  // (the whole field inside the block, or it is private memory)
        blocks[f] = shared_block_containing(r.src[f], &offsets[f]);
        if (blocks[f] && offsets[f] + (uint64_t)r.src_count * r.esz > blocks[f]->size) blocks[f] = nullptr;
    }
    std::atomic_thread_fence(std::memory_order_seq_cst);  // my writes to the fields before "ready"
    for (size_t i = 0; i < r.copy_send.size(); i++) {
        const Peer &p = r.copy_send[i];
        check_mpi(MPI_Irecv(nullptr, 0, MPI_BYTE, p.rank, r.tag + 2, r.mpi, &r.done_recv[i]), "MPI_Irecv (done)");
        bool shared = true;
        for (int f = 0; f < nf && shared; f++) shared = blocks[f] && blocks[f]->base_of(r.copy_send_pids[i]);
        uint64_t *msg = &r.ready_out[i * words];
        msg[0] = shared ? via_shared : r.comm->node->cma ? via_cma : via_mpi;
        for (int f = 0; f < nf; f++) {
            msg[1 + 2 * f] = shared ? blocks[f]->id : (uint64_t)(uintptr_t)r.src[f];
            msg[2 + 2 * f] = shared ? offsets[f] : 0;
        }
        check_mpi(MPI_Isend(msg, (int)words, MPI_UINT64_T, p.rank, r.tag + 1, r.mpi, &r.ready_send[i]), "MPI_Isend (ready)");
        if (msg[0] == via_mpi) {  // neither shared memory nor cross-memory attach: one packed message
            size_t bytes = (size_t)p.elements * nf * r.esz;
            if (bytes > (size_t)INT_MAX) fail(ESM_ERR_UNSUPPORTED, "a node peer's message over 2 GiB: set options.single_copy = 0");
            char *buffer = node_buffer(r.node_send_buffers, i, bytes);
            pack_fields(r, p, 0, nf, 0, (int)p.segs.size(), buffer);
            check_mpi(MPI_Isend(buffer, (int)bytes, MPI_BYTE, p.rank, r.tag + 5, r.mpi, &r.data_send[i]), "MPI_Isend (node)");
        }
    }
}

// Copies peer i's elements (all fields) from its source fields, mapped here, into mine.
static void shared_copy(esm_route &r, size_t i) {
    const Peer &p = r.copy_recv[i];
    const int nf = r.fields.count;
    const size_t esz = r.esz;
    const uint64_t *msg = &r.ready_in[i * ready_words(r)];
    std::atomic_thread_fence(std::memory_order_seq_cst);  // "ready" before the reads
    for (int f = 0; f < nf; f++) {
        const SharedBlock *b = shared_block(msg[1 + 2 * f]);
        const char *base = b ? b->base_of(r.copy_recv_pids[i]) : nullptr;
        if (!base) fail(ESM_ERR_SYSTEM, "rank %d's fields are in node-shared memory this rank does not map", p.rank);
        const char *from = base + msg[2 + 2 * f];
        char *to = static_cast<char *>(r.dst[f]);
        zip_runs(p.segs, p.remote, [&](int64_t lo, int64_t ro, int64_t n) {
            copy_run(r, to + lo * esz, from + ro * esz, n * esz);
        });
    }
    if (r.stream) stream_fence();
    std::atomic_thread_fence(std::memory_order_seq_cst);  // reads done before "done" goes out
}

// Reads peer i's elements (all fields) from its source fields into mine with process_vm_readv,
// IOV_MAX runs at a time.
static void cma_read(esm_route &r, size_t i) {
    const Peer &p = r.copy_recv[i];
    const int nf = r.fields.count;
    const size_t esz = r.esz;
    const pid_t pid = r.copy_recv_pids[i];
    const uint64_t *msg = &r.ready_in[i * ready_words(r)];
    std::vector<struct iovec> &L = r.iov_local, &R = r.iov_remote;
    L.clear();
    R.clear();
    auto flush = [&] {
        if (L.empty()) return;
        size_t want = 0;
        for (const struct iovec &v : L) want += v.iov_len;
        ssize_t got = process_vm_readv(pid, L.data(), L.size(), R.data(), R.size(), 0);
        if (got != (ssize_t)want)
            fail(ESM_ERR_SYSTEM, "single-copy read of %zu bytes from rank %d (pid %d) failed: %s; set options.single_copy = 0 or ESM_REDIST_CMA=0",
                 want, p.rank, (int)pid, got < 0 ? std::strerror(errno) : "short read");
        L.clear();
        R.clear();
    };
    for (int f = 0; f < nf; f++) {
        char *local_base = static_cast<char *>(r.dst[f]);
        uint64_t remote_base = msg[1 + 2 * f];
        zip_runs(p.segs, p.remote, [&](int64_t lo, int64_t ro, int64_t n) {
            char *lp = local_base + lo * esz;
            char *rp = reinterpret_cast<char *>(remote_base + ro * esz);
            size_t bytes = n * esz;
            bool lext = !L.empty() && static_cast<char *>(L.back().iov_base) + L.back().iov_len == lp;
            bool rext = !R.empty() && static_cast<char *>(R.back().iov_base) + R.back().iov_len == rp;
            if ((!lext && L.size() == IOV_MAX) || (!rext && R.size() == IOV_MAX)) {
                flush();
                lext = rext = false;
            }
            if (lext) L.back().iov_len += bytes;
            else L.push_back({lp, bytes});
            if (rext) R.back().iov_len += bytes;
            else R.push_back({rp, bytes});
        });
    }
    flush();
}

// The receiving half: every node peer's elements, as each announces them.
static void single_copy_end(esm_route &r, Error &first) {
    const int nf = r.fields.count;
    std::vector<size_t> by_mpi;
    for (size_t n = 0; n < r.copy_recv.size(); n++) {
        int i = MPI_UNDEFINED;
        check_mpi(MPI_Waitany((int)r.ready_recv.size(), r.ready_recv.data(), &i, MPI_STATUS_IGNORE), "MPI_Waitany (ready)");
        const Peer &p = r.copy_recv[i];
        uint64_t mode = r.ready_in[i * ready_words(r)];
        if (mode == via_mpi) {
            size_t bytes = (size_t)p.elements * nf * r.esz;
            char *buffer = node_buffer(r.node_recv_buffers, i, bytes);
            check_mpi(MPI_Irecv(buffer, (int)bytes, MPI_BYTE, p.rank, r.tag + 5, r.mpi, &r.data_recv[i]), "MPI_Irecv (node)");
            by_mpi.push_back(i);
            continue;
        }
        try {  // a failed copy must still be reported as done, or the sender would wait forever
            if (mode == via_shared) shared_copy(r, i);
            else cma_read(r, i);
        } catch (const Error &e) {
            if (first.code == ESM_OK) first = e;
        }
        check_mpi(MPI_Isend(nullptr, 0, MPI_BYTE, p.rank, r.tag + 2, r.mpi, &r.done_send[i]), "MPI_Isend (done)");
    }
    for (size_t i : by_mpi) {
        const Peer &p = r.copy_recv[i];
        check_mpi(MPI_Wait(&r.data_recv[i], MPI_STATUS_IGNORE), "MPI_Wait (node)");
        unpack_fields(r, p, 0, nf, 0, (int)p.segs.size(), r.node_recv_buffers[i]);
        check_mpi(MPI_Isend(nullptr, 0, MPI_BYTE, p.rank, r.tag + 2, r.mpi, &r.done_send[i]), "MPI_Isend (done)");
    }
}

// ---- the run ----------------------------------------------------------------------------------

static void run_sync(esm_route &r) {
    Side &S = r.send, &R = r.recv;
    size_t i = 0, j = 0;  // positions in the ring orders
    auto sdist = [&](size_t k) { return (S.peers[S.order[k]].rank - r.rank + r.nranks) % r.nranks; };
    auto rdist = [&](size_t k) { return (r.rank - R.peers[R.order[k]].rank + r.nranks) % r.nranks; };
    while (i < S.order.size() || j < R.order.size()) {
        int ds = i < S.order.size() ? sdist(i) : INT_MAX, dr = j < R.order.size() ? rdist(j) : INT_MAX;
        int step = std::min(ds, dr);
        int sp = ds == step ? S.order[i++] : -1, rp = dr == step ? R.order[j++] : -1;
        if (sp >= 0) pack_peer(r, sp);
        size_t a = sp >= 0 ? S.first_op[sp] : 0, na = sp >= 0 ? S.first_op[sp + 1] - a : 0;
        size_t b = rp >= 0 ? R.first_op[rp] : 0, nb = rp >= 0 ? R.first_op[rp + 1] - b : 0;
        for (size_t t = 0; t < std::max(na, nb); t++) {
            if (t < na && t < nb) {
                const Op &o = S.ops[a + t], &q = R.ops[b + t];
                check_mpi(MPI_Sendrecv(o.addr, o.count, o.type, S.peers[sp].rank, r.tag, q.addr, q.count, q.type,
                                       R.peers[rp].rank, r.tag, r.mpi, MPI_STATUS_IGNORE),
                          "MPI_Sendrecv");
            } else if (t < na) {
                const Op &o = S.ops[a + t];
                check_mpi(MPI_Send(o.addr, o.count, o.type, S.peers[sp].rank, r.tag, r.mpi), "MPI_Send");
            } else {
                const Op &q = R.ops[b + t];
                check_mpi(MPI_Recv(q.addr, q.count, q.type, R.peers[rp].rank, r.tag, r.mpi, MPI_STATUS_IGNORE), "MPI_Recv");
            }
        }
        if (rp >= 0) unpack_peer(r, rp);
    }
}

void run_begin(esm_route &r, const void *const src[], void *const dst[]) {
    ensure_ops(r, src, dst);
    single_copy_begin(r);
    if (r.options.comm == ESM_COMM_SYNC) {
        run_sync(r);
    } else {
        for (size_t m = 0; m < r.recv.msgs.size(); m++) r.recv.pending[m] = 0;
        for (const Op &op : r.recv.ops)
            if (op.msg >= 0) r.recv.pending[op.msg]++;
        for (int p : r.recv.order) post(r, r.recv, p, false);
        for (int p : r.send.order) {
            pack_peer(r, p);
            post(r, r.send, p, true);
        }
    }
    copy_local(r);
    if (r.stream) stream_fence();
    r.running = true;
}

static void complete_receives(esm_route &r) {
    Side &R = r.recv;
    if (R.requests.empty()) return;
    auto done = [&](int k) {
        int m = R.ops[k].msg;
        if (m >= 0 && --R.pending[m] == 0) unpack(r, R, R.msgs[m]);
    };
    if (!packed(r)) {
        check_mpi(MPI_Waitall((int)R.requests.size(), R.requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall (receives)");
        return;
    }
    if (R.requests.size() > waitsome_limit) {
        for (size_t k = 0; k < R.requests.size(); k++) {
            check_mpi(MPI_Wait(&R.requests[k], MPI_STATUS_IGNORE), "MPI_Wait (receive)");
            done((int)k);
        }
        return;
    }
    std::vector<int> indices(R.requests.size());
    for (;;) {
        int n = 0;
        check_mpi(MPI_Waitsome((int)R.requests.size(), R.requests.data(), &n, indices.data(), MPI_STATUSES_IGNORE),
                  "MPI_Waitsome (receives)");
        if (n == MPI_UNDEFINED) return;
        for (int t = 0; t < n; t++) done(indices[t]);
    }
}

void run_end(esm_route &r) {
    r.running = false;
    Error first{ESM_OK, ""};
    single_copy_end(r, first);
    if (r.options.comm != ESM_COMM_SYNC) complete_receives(r);
    check_mpi(MPI_Waitall((int)r.send.requests.size(), r.send.requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall (sends)");
    for (std::vector<MPI_Request> *q : {&r.ready_send, &r.data_send, &r.done_recv, &r.done_send})
        check_mpi(MPI_Waitall((int)q->size(), q->data(), MPI_STATUSES_IGNORE), "MPI_Waitall (single copy)");
    if (r.stream) stream_fence();
    std::atomic_thread_fence(std::memory_order_seq_cst);  // my readers are done before my next writes
    if (first.code != ESM_OK) throw first;
}

}  // namespace esm

esm_route::~esm_route() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && mpi != MPI_COMM_NULL) {
        if (running) {
            try {
                esm::run_end(*this);
            } catch (const esm::Error &) {
            }
        }
        if (persistent_made) {
            esm::free_persistent(send);
            esm::free_persistent(recv);
        }
        for (esm::Side *side : {&send, &recv}) {
            esm::free_types(side->bundles);
            esm::free_types(side->layouts);
        }
    }
    std::free(send.buffer);
    std::free(recv.buffer);
    for (char *b : node_send_buffers) std::free(b);
    for (char *b : node_recv_buffers) std::free(b);
}
