// The route API: store (checks, agreement, planning), run, info, free.
#include <algorithm>
#include <cstring>

#include "route.hpp"

using namespace esm;

namespace {

esm_route_options checked_options(const char *fn, const esm_route_options *given) {
    esm_route_options o;
    esm_route_options_default(&o);
    if (given) o = *given;
    if ((unsigned)o.comm > ESM_COMM_PERSISTENT)
        fail(ESM_ERR_ARGUMENT, "%s: options.comm is %d: use ESM_COMM_ASYNC, ESM_COMM_SYNC or ESM_COMM_PERSISTENT", fn, (int)o.comm);
    if ((unsigned)o.pack > ESM_PACK_DATATYPE)
        fail(ESM_ERR_ARGUMENT, "%s: options.pack is %d: use ESM_PACK_PET, ESM_PACK_XP, ESM_PACK_NONE or ESM_PACK_DATATYPE", fn, (int)o.pack);
    if ((unsigned)o.bundle > 1 || (unsigned)o.local_direct > 1 || (unsigned)o.single_copy > 1)
        fail(ESM_ERR_ARGUMENT, "%s: options.bundle, local_direct and single_copy must be 0 or 1 (got %d, %d, %d)", fn,
             o.bundle, o.local_direct, o.single_copy);
    return o;
}

std::string extent_text(const esm_distgrid &d) {
    if (d.kind == Kind::indices) return format("%lld points x %lld levels", (long long)d.points, (long long)d.levels);
    std::string s;
    for (int k = 0; k < d.ndims; k++) s += (k ? "x" : "") + std::to_string(d.dims[k]);
    return s;
}

// What store and store_as check alike, on each rank.
void check_pair(const char *fn, const esm_distgrid &src, const esm_distgrid &dst, esm_fields sf, esm_fields df) {
    for (const esm_fields *f : {&sf, &df}) {
        const char *which = f == &sf ? "source" : "destination";
        if (f->count < 1) fail(ESM_ERR_ARGUMENT, "%s: the %s bundle has %d fields: it needs at least 1", fn, which, f->count);
        if ((unsigned)f->type > ESM_INT64)
            fail(ESM_ERR_ARGUMENT, "%s: the %s field type is %d: use ESM_DOUBLE, ESM_FLOAT, ESM_INT32 or ESM_INT64", fn, which, (int)f->type);
    }
    if (sf.count != df.count || sf.type != df.type)
        fail(ESM_ERR_MISMATCH, "%s: the source bundle has %d %s fields, the destination %d %s fields: a route moves like to like, make the field counts and types equal",
             fn, sf.count, type_name(sf.type), df.count, type_name(df.type));
    bool shaped = src.kind != Kind::indices && dst.kind != Kind::indices;
    bool same = src.total == dst.total;
    if (shaped) {
        same = same && src.ndims == dst.ndims;
        for (int k = 0; same && k < src.ndims; k++) same = src.dims[k] == dst.dims[k];
    }
    if (!same)
        fail(ESM_ERR_MISMATCH, "%s: the source index space is %s (%lld elements), the destination %s (%lld elements): both decompositions must describe the same index space",
             fn, extent_text(src).c_str(), (long long)src.total, extent_text(dst).c_str(), (long long)dst.total);
}

}  // namespace

extern "C" void esm_route_options_default(esm_route_options *options) {
    if (!options) return;
    options->comm = ESM_COMM_ASYNC;
    options->pack = ESM_PACK_PET;
    options->bundle = 1;
    options->local_direct = 1;
    options->single_copy = 1;
}

extern "C" int esm_route_store(const esm_distgrid *src, const esm_distgrid *dst, esm_fields src_fields,
                               esm_fields dst_fields, const esm_route_options *options, esm_route **route) {
    const char *fn = "esm_route_store";
    return guarded([&] {
        if (!route) fail(ESM_ERR_ARGUMENT, "%s: the result pointer is NULL", fn);
        *route = nullptr;
        if (!src || !dst) fail(ESM_ERR_ARGUMENT, "%s: the %s decomposition is NULL", fn, src ? "destination" : "source");
        if (src->layout_only() || dst->layout_only())
            fail(ESM_ERR_UNSUPPORTED, "%s: the %s decomposition is a layout only (made with MPI_COMM_NULL): create it on a communicator, or use esm_route_store_as",
                 fn, src->layout_only() ? "source" : "destination");
        std::shared_ptr<Comm> comm = src->comm;
        MPI_Comm mpi = comm->comm;
        const int tag = 16 + (int)(comm->routes++ % 4000) * 8;  // data, ready, done, directory x2
        Outcome outcome;
        uint64_t hash = hash_seed;
        esm_route_options opts;
        esm_route_options_default(&opts);
        try {
            opts = checked_options(fn, options);
            int same = MPI_UNEQUAL;
            check_mpi(MPI_Comm_compare(mpi, dst->comm->comm, &same), "MPI_Comm_compare");
            if (same != MPI_IDENT && same != MPI_CONGRUENT)
                fail(ESM_ERR_MISMATCH, "%s: the source and destination decompositions were made on different groups of ranks: make both on the same communicator",
                     fn);
            check_pair(fn, *src, *dst, src_fields, dst_fields);
            hash = hash_value(hash, opts);
            hash = hash_value(hash, src_fields);
            hash = hash_value(hash, src->hash);
            hash = hash_value(hash, dst->hash);
        } catch (const Error &e) {
            outcome.set(e);
        }
        const NodeInfo *node = comm->node.get();
        auto wants_remote = [&](int peer) { return opts.single_copy && node->pid_of(peer) >= 0 && peer != comm->rank; };
        Plan plan;
        esm_route *made = nullptr;
        if (src->kind == Kind::indices || dst->kind == Kind::indices) {
            agree(mpi, outcome, hash, "fields or options to esm_route_store");
            plan = plan_directory_route(*src, *dst, mpi, tag + 3, wants_remote);
            try {
                made = build_route(std::move(plan), *src, src_fields, opts, comm, comm->rank, comm->size, tag);
            } catch (const Error &e) {
                outcome.set(e);
            } catch (const std::bad_alloc &) {
                outcome.set(Error{ESM_ERR_MEMORY, "esm_route_store: out of memory"});
            }
        } else {
            try {
                if (outcome.code == ESM_OK) {
                    plan = plan_box_route(*src, *dst, comm->rank, wants_remote);
                    made = build_route(std::move(plan), *src, src_fields, opts, comm, comm->rank, comm->size, tag);
                }
            } catch (const Error &e) {
                outcome.set(e);
            } catch (const std::bad_alloc &) {
                outcome.set(Error{ESM_ERR_MEMORY, "esm_route_store: out of memory"});
            }
        }
        std::unique_ptr<esm_route> keep(made);
        agree(mpi, outcome, hash, "fields or options to esm_route_store");
        *route = keep.release();
    });
}

extern "C" int esm_route_store_as(const esm_distgrid *src, const esm_distgrid *dst, int rank, esm_fields src_fields,
                                  esm_fields dst_fields, const esm_route_options *options, esm_route **route) {
    const char *fn = "esm_route_store_as";
    return guarded([&] {
        if (!route) fail(ESM_ERR_ARGUMENT, "%s: the result pointer is NULL", fn);
        *route = nullptr;
        if (!src || !dst) fail(ESM_ERR_ARGUMENT, "%s: the %s decomposition is NULL", fn, src ? "destination" : "source");
        if (!src->layout_only() || !dst->layout_only() || src->kind != Kind::blocks || dst->kind != Kind::blocks)
            fail(ESM_ERR_UNSUPPORTED, "%s: both decompositions must be block layouts made with MPI_COMM_NULL (layout only)", fn);
        if (src->nranks != dst->nranks)
            fail(ESM_ERR_MISMATCH, "%s: the source layout has %d blocks, the destination %d: both need one block per rank", fn,
                 src->nranks, dst->nranks);
        if (rank < 0 || rank >= src->nranks)
            fail(ESM_ERR_ARGUMENT, "%s: rank %d is outside [0, %d)", fn, rank, src->nranks);
        esm_route_options opts = checked_options(fn, options);
        check_pair(fn, *src, *dst, src_fields, dst_fields);
        Plan plan = plan_box_route(*src, *dst, rank, [](int) { return false; });
        *route = build_route(std::move(plan), *src, src_fields, opts, nullptr, rank, src->nranks, 0);
    });
}

namespace {

void check_run(const char *fn, const esm_route *route, const void *const src[], void *const dst[]) {
    if (!route) fail(ESM_ERR_ARGUMENT, "%s: the route is NULL", fn);
    if (!route->comm) fail(ESM_ERR_UNSUPPORTED, "%s: this route was stored with esm_route_store_as (layout only): it cannot run", fn);
    if (route->running) fail(ESM_ERR_STATE, "%s: a run of this route is in progress: call esm_route_run_end first", fn);
    if (!src || !dst) fail(ESM_ERR_ARGUMENT, "%s: the %s field array is NULL", fn, src ? "destination" : "source");
}

}  // namespace

extern "C" int esm_route_run_begin(esm_route *route, const void *const src[], void *const dst[]) {
    return guarded([&] {
        check_run("esm_route_run_begin", route, src, dst);
        run_begin(*route, src, dst);
    });
}

extern "C" int esm_route_run_end(esm_route *route) {
    return guarded([&] {
        if (!route) fail(ESM_ERR_ARGUMENT, "esm_route_run_end: the route is NULL");
        if (!route->running) fail(ESM_ERR_STATE, "esm_route_run_end: no run in progress: call esm_route_run_begin first");
        run_end(*route);
    });
}

extern "C" int esm_route_run(esm_route *route, const void *const src[], void *const dst[]) {
    return guarded([&] {
        check_run("esm_route_run", route, src, dst);
        run_begin(*route, src, dst);
        run_end(*route);
    });
}

extern "C" int esm_route_get_info(const esm_route *route, esm_route_info *info) {
    return guarded([&] {
        if (!route || !info) fail(ESM_ERR_ARGUMENT, "esm_route_get_info: NULL argument");
        const esm_route &r = *route;
        std::memset(info, 0, sizeof *info);
        auto count = [&](const std::vector<Peer> &peers, int &n, int64_t &elements) {
            for (const Peer &p : peers)
                if (p.rank != r.rank) n++, elements += p.elements;
        };
        count(r.send.peers, info->send_peers, info->send_elements);
        count(r.copy_send, info->send_peers, info->send_elements);
        count(r.recv.peers, info->recv_peers, info->recv_elements);
        count(r.copy_recv, info->recv_peers, info->recv_elements);
        info->single_copy_peers = (int)r.copy_recv.size();
        info->local_elements = r.local_elements;
        const int64_t per_element = (int64_t)r.esz * r.fields.count;
        info->send_bytes = info->send_elements * per_element;
        info->recv_bytes = info->recv_elements * per_element;
        info->local_bytes = info->local_elements * per_element;
        info->messages = data_messages(r);
        info->segments = r.segments;
        int64_t peers = (int64_t)(r.send.peers.size() + r.recv.peers.size() + r.copy_send.size() + r.copy_recv.size());
        info->route_bytes = (int64_t)(sizeof(esm_route) + r.segments * sizeof(Segment) + peers * sizeof(Peer) +
                                      (r.send.msgs.size() + r.recv.msgs.size()) * sizeof(Msg));
        info->options = r.options;
    });
}

extern "C" int esm_route_free(esm_route **route) {
    return guarded([&] {
        if (!route) fail(ESM_ERR_ARGUMENT, "esm_route_free: NULL argument");
        delete *route;
        *route = nullptr;
    });
}
