// Decompositions: blocks, boxes, index lists; the communicator they share with their routes.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include <sys/uio.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "internal.hpp"

using namespace esm;

namespace esm {

Comm::~Comm() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (node_comm != MPI_COMM_NULL) MPI_Comm_free(&node_comm);
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
}

int NodeInfo::pid_of(int rank) const {
    auto it = std::lower_bound(ranks.begin(), ranks.end(), rank);
    return it != ranks.end() && *it == rank ? pids[it - ranks.begin()] : -1;
}

// Can this rank read the memory of the next rank on its node (cross-memory attach)? Each rank
// offers a known word; the node agrees (all or none) so both sides of every pair decide alike.
static bool probe_node_cma(MPI_Comm node_comm, int node_rank, int node_size,
                                   const std::vector<int> &pids) {
    const char *env = std::getenv("ESM_REDIST_CMA");  // 0: never use cross-memory attach
    bool wanted = !(env && std::strcmp(env, "0") == 0);
#ifdef __linux__
    if (wanted) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);  // Yama ptrace_scope 1
#endif
    // on this rank's stack (a static word is every rank's under SMPI without privatization),
    // which lives until the node's reduction below, after every peer's read
    volatile uint64_t probe_word = 0x65736d7265646973ull ^ (uint64_t)node_rank;
    uint64_t address = (uint64_t)(uintptr_t)&probe_word;
    std::vector<uint64_t> addresses(node_size);
    check_mpi(MPI_Allgather(&address, 1, MPI_UINT64_T, addresses.data(), 1, MPI_UINT64_T, node_comm),
              "MPI_Allgather (single-copy probe)");
    int ok = wanted ? 1 : 0;
    if (ok) {
        int peer = (node_rank + 1) % node_size;
        uint64_t value = 0;
        struct iovec local = {&value, sizeof value};
        struct iovec remote = {(void *)(uintptr_t)addresses[peer], sizeof value};
        ssize_t got = process_vm_readv(pids[peer], &local, 1, &remote, 1, 0);
        ok = got == (ssize_t)sizeof value && value == (0x65736d7265646973ull ^ (uint64_t)peer);
    }
    int all = 0;
    check_mpi(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, node_comm), "MPI_Allreduce (single-copy probe)");
    return all == 1;
}

static std::shared_ptr<Comm> duplicate(MPI_Comm user) {
    auto c = std::make_shared<Comm>();
    check_mpi(MPI_Comm_dup(user, &c->comm), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->size);
    auto node = std::make_shared<NodeInfo>();
    MPI_Comm node_comm;
    check_mpi(MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node_comm),
              "MPI_Comm_split_type");
    int node_rank = 0, node_size = 1;
    MPI_Comm_rank(node_comm, &node_rank);
    MPI_Comm_size(node_comm, &node_size);
    std::vector<int> node_ranks(node_size), in_comm(node_size), pids(node_size);
    for (int i = 0; i < node_size; i++) node_ranks[i] = i;
    MPI_Group node_group, comm_group;
    MPI_Comm_group(node_comm, &node_group);
    MPI_Comm_group(c->comm, &comm_group);
    MPI_Group_translate_ranks(node_group, node_size, node_ranks.data(), comm_group, in_comm.data());
    MPI_Group_free(&node_group);
    MPI_Group_free(&comm_group);
    int pid = (int)getpid();
    check_mpi(MPI_Allgather(&pid, 1, MPI_INT, pids.data(), 1, MPI_INT, node_comm), "MPI_Allgather (pids)");
    node->cma = node_size > 1 && probe_node_cma(node_comm, node_rank, node_size, pids);
    MPI_Comm_set_errhandler(node_comm, MPI_ERRORS_RETURN);
    c->node_comm = node_comm;
    // sorted by communicator rank (split_type keeps the key order, but be sure)
    std::vector<std::pair<int, int>> pairs(node_size);
    for (int i = 0; i < node_size; i++) pairs[i] = {in_comm[i], pids[i]};
    std::sort(pairs.begin(), pairs.end());
    for (auto &[r, p] : pairs) node->ranks.push_back(r), node->pids.push_back(p);
    c->node = node;
    return c;
}

}  // namespace esm

void esm_distgrid::box_of(int r, int64_t lo[], int64_t hi[]) const {
    if (kind == Kind::boxes) {
        const int64_t *b = &boxes[(size_t)r * 2 * ndims];
        for (int d = 0; d < ndims; d++) lo[d] = b[d], hi[d] = b[ndims + d];
        return;
    }
    for (int d = 0; d < ndims; d++) {
        int c = r % parts[d];
        r /= parts[d];
        lo[d] = cuts[d][c], hi[d] = cuts[d][c + 1];
    }
}

std::vector<IndexRun> esm_distgrid::global_runs() const {
    std::vector<IndexRun> out;
    auto add = [&out](int64_t local, int64_t global, int64_t len) {
        if (len == 0) return;
        if (!out.empty()) {
            IndexRun &last = out.back();
            if (last.local + last.len == local && last.global + last.len == global) {
                last.len += len;
                return;
            }
        }
        out.push_back({local, global, len});
    };
    if (kind == Kind::indices) {
        for (int64_t k = 0; k < levels; k++)
            for (const IndexRun &r : runs) add(k * count + r.local, k * points + r.global, r.len);
        return out;
    }
    if (local_count == 0) return out;
    int64_t ext[max_dims], idx[max_dims] = {}, gstride[max_dims];
    for (int d = 0; d < ndims; d++) {
        ext[d] = upper[d] - lower[d];
        gstride[d] = d == 0 ? 1 : gstride[d - 1] * dims[d - 1];
    }
    int64_t local = 0;
    for (;;) {
        int64_t global = lower[0];
        for (int d = 1; d < ndims; d++) global += (lower[d] + idx[d]) * gstride[d];
        add(local, global, ext[0]);
        local += ext[0];
        int d = 1;
        while (d < ndims && ++idx[d] == ext[d]) idx[d++] = 0;
        if (d >= ndims) break;
    }
    return out;
}

namespace {

int64_t checked_product(const int64_t *v, int n, const char *what) {
    int64_t p = 1;
    for (int i = 0; i < n; i++) {
        if (v[i] != 0 && p > INT64_MAX / v[i]) fail(ESM_ERR_ARGUMENT, "%s: the index space is too large (over 2^63 elements)", what);
        p *= v[i];
    }
    return p;
}

std::string extent_text(int ndims, const int64_t v[]) {
    std::string s;
    for (int d = 0; d < ndims; d++) s += (d ? "x" : "") + std::to_string(v[d]);
    return s;
}

std::string box_text(int ndims, const int64_t lo[], const int64_t hi[]) {
    std::string s;
    for (int d = 0; d < ndims; d++) s += (d ? "x" : "") + format("[%lld,%lld)", (long long)lo[d], (long long)hi[d]);
    return s;
}

void check_shape(const char *fn, int ndims, const int64_t dims[]) {
    if (ndims < 1 || ndims > max_dims) fail(ESM_ERR_ARGUMENT, "%s: ndims is %d: it must be 1 to %d", fn, ndims, max_dims);
    if (!dims) fail(ESM_ERR_ARGUMENT, "%s: dims is NULL", fn);
    for (int d = 0; d < ndims; d++)
        if (dims[d] < 0) fail(ESM_ERR_ARGUMENT, "%s: dims[%d] is %lld: sizes must be >= 0", fn, d, (long long)dims[d]);
}

}  // namespace

extern "C" int esm_distgrid_create_blocks(MPI_Comm comm, int ndims, const int64_t dims[], const int parts[],
                                          const int64_t *const cuts[], esm_distgrid **out) {
    const char *fn = "esm_distgrid_create_blocks";
    return guarded([&] {
        if (!out) fail(ESM_ERR_ARGUMENT, "%s: the result pointer is NULL", fn);
        *out = nullptr;
        auto d = std::make_unique<esm_distgrid>();
        d->kind = Kind::blocks;
        Outcome outcome;
        uint64_t hash = hash_seed;
        int nranks = -1, rank = 0;
        if (comm != MPI_COMM_NULL) {
            check_mpi(MPI_Comm_size(comm, &nranks), "MPI_Comm_size");
            MPI_Comm_rank(comm, &rank);
        }
        try {
            check_shape(fn, ndims, dims);
            if (!parts) fail(ESM_ERR_ARGUMENT, "%s: parts is NULL", fn);
            d->ndims = ndims;
            int64_t blocks = 1;
            for (int k = 0; k < ndims; k++) {
                if (parts[k] < 1) fail(ESM_ERR_ARGUMENT, "%s: parts[%d] is %d: every dimension needs at least 1 part", fn, k, parts[k]);
                blocks *= parts[k];
                if (blocks > INT32_MAX) fail(ESM_ERR_ARGUMENT, "%s: more than 2^31 blocks", fn);
                d->dims[k] = dims[k];
                d->parts[k] = parts[k];
                std::vector<int64_t> &c = d->cuts[k];
                c.resize(parts[k] + 1);
                for (int p = 0; p <= parts[k]; p++)
                    c[p] = cuts && cuts[k] ? cuts[k][p] : (int64_t)((__int128)dims[k] * p / parts[k]);
                if (c[0] != 0 || c[parts[k]] != dims[k])
                    fail(ESM_ERR_TILING, "%s: the cuts of dimension %d run from %lld to %lld: they must run from 0 to %lld, or the blocks leave gaps or overlap the index space",
                         fn, k, (long long)c[0], (long long)c[parts[k]], (long long)dims[k]);
                for (int p = 0; p < parts[k]; p++)
                    if (c[p + 1] < c[p])
                        fail(ESM_ERR_TILING, "%s: the cuts of dimension %d decrease (%lld then %lld at part %d): blocks would overlap; cuts must not decrease",
                             fn, k, (long long)c[p], (long long)c[p + 1], p);
            }
            if (nranks < 0) nranks = (int)blocks;  // layout only: as many virtual ranks as blocks
            if (blocks != nranks) {
                std::string layout;
                for (int k = 0; k < ndims; k++) layout += (k ? "x" : "") + std::to_string(parts[k]);
                fail(ESM_ERR_ARGUMENT, "%s: the layout %s has %lld blocks but the communicator has %d ranks: one block per rank, choose parts whose product is %d",
                     fn, layout.c_str(), (long long)blocks, nranks, nranks);
            }
            d->total = checked_product(dims, ndims, fn);
            hash = hash_value(hash, (int)Kind::blocks);
            hash = hash_value(hash, ndims);
            for (int k = 0; k < ndims; k++) {
                hash = hash_value(hash, dims[k]);
                hash = hash_bytes(hash, d->cuts[k].data(), d->cuts[k].size() * sizeof(int64_t));
            }
        } catch (const Error &e) {
            outcome.set(e);
        }
        if (comm == MPI_COMM_NULL) {
            if (outcome.code != ESM_OK) throw Error{outcome.code, outcome.message};
        } else {
            agree(comm, outcome, hash, "block layouts to esm_distgrid_create_blocks");
            d->comm = duplicate(comm);
        }
        d->nranks = nranks;
        d->rank = rank;
        d->hash = hash;
        d->box_of(rank, d->lower, d->upper);
        d->local_count = 1;
        for (int k = 0; k < ndims; k++) d->local_count *= d->upper[k] - d->lower[k];
        *out = d.release();
    });
}

extern "C" int esm_distgrid_create_boxes(MPI_Comm comm, int ndims, const int64_t dims[], const int64_t lower[],
                                         const int64_t upper[], esm_distgrid **out) {
    const char *fn = "esm_distgrid_create_boxes";
    return guarded([&] {
        if (!out) fail(ESM_ERR_ARGUMENT, "%s: the result pointer is NULL", fn);
        *out = nullptr;
        if (comm == MPI_COMM_NULL) fail(ESM_ERR_ARGUMENT, "%s: the communicator is MPI_COMM_NULL: boxes need the ranks that hold them", fn);
        auto d = std::make_unique<esm_distgrid>();
        d->kind = Kind::boxes;
        Outcome outcome;
        uint64_t hash = hash_seed;
        MPI_Comm_size(comm, &d->nranks);
        MPI_Comm_rank(comm, &d->rank);
        try {
            check_shape(fn, ndims, dims);
            if (!lower || !upper) fail(ESM_ERR_ARGUMENT, "%s: lower or upper is NULL", fn);
            d->ndims = ndims;
            for (int k = 0; k < ndims; k++) {
                d->dims[k] = dims[k];
                if (lower[k] < 0 || upper[k] > dims[k] || lower[k] > upper[k])
                    fail(ESM_ERR_ARGUMENT, "%s: rank %d's box %s does not fit the index space %s (need 0 <= lower <= upper <= dims)",
                         fn, d->rank, box_text(ndims, lower, upper).c_str(), extent_text(ndims, dims).c_str());
                d->lower[k] = lower[k], d->upper[k] = upper[k];
            }
            d->total = checked_product(dims, ndims, fn);
            hash = hash_value(hash, (int)Kind::boxes);
            hash = hash_value(hash, ndims);
            hash = hash_bytes(hash, dims, ndims * sizeof(int64_t));
        } catch (const Error &e) {
            outcome.set(e);
        }
        agree(comm, outcome, hash, "index spaces (ndims, dims) to esm_distgrid_create_boxes");
        // every rank learns every box; each checks its own box against all others
        std::vector<int64_t> mine(2 * ndims);
        for (int k = 0; k < ndims; k++) mine[k] = d->lower[k], mine[ndims + k] = d->upper[k];
        d->boxes.resize((size_t)d->nranks * 2 * ndims);
        check_mpi(MPI_Allgather(mine.data(), 2 * ndims, MPI_INT64_T, d->boxes.data(), 2 * ndims, MPI_INT64_T, comm),
                  "MPI_Allgather (boxes)");
        try {
            __int128 volume = 0;
            for (int r = 0; r < d->nranks; r++) {
                int64_t lo[max_dims], hi[max_dims];
                d->box_of(r, lo, hi);
                __int128 v = 1;
                bool meets = r != d->rank;
                for (int k = 0; k < ndims; k++) {
                    v *= hi[k] - lo[k];
                    meets = meets && std::max(lo[k], d->lower[k]) < std::min(hi[k], d->upper[k]);
                }
                volume += v;
                if (meets)
                    fail(ESM_ERR_TILING, "%s: the boxes overlap: rank %d's box %s and rank %d's box %s share elements; boxes must tile the index space",
                         fn, d->rank, box_text(ndims, d->lower, d->upper).c_str(), r, box_text(ndims, lo, hi).c_str());
            }
            if (volume != d->total)
                fail(ESM_ERR_TILING, "%s: the boxes leave gaps: they hold %lld of the %lld elements of %s; boxes must tile the index space",
                     fn, (long long)volume, (long long)d->total, extent_text(ndims, dims).c_str());
        } catch (const Error &e) {
            outcome.set(e);
        }
        agree(comm, outcome, hash, "boxes");
        d->hash = hash;
        d->local_count = 1;
        for (int k = 0; k < ndims; k++) d->local_count *= d->upper[k] - d->lower[k];
        d->comm = duplicate(comm);
        *out = d.release();
    });
}

extern "C" int esm_distgrid_create_indices(MPI_Comm comm, int64_t points, int64_t levels, int64_t count,
                                           const int64_t indices[], esm_distgrid **out) {
    const char *fn = "esm_distgrid_create_indices";
    return guarded([&] {
        if (!out) fail(ESM_ERR_ARGUMENT, "%s: the result pointer is NULL", fn);
        *out = nullptr;
        if (comm == MPI_COMM_NULL) fail(ESM_ERR_ARGUMENT, "%s: the communicator is MPI_COMM_NULL", fn);
        auto d = std::make_unique<esm_distgrid>();
        d->kind = Kind::indices;
        Outcome outcome;
        uint64_t hash = hash_seed;
        MPI_Comm_size(comm, &d->nranks);
        MPI_Comm_rank(comm, &d->rank);
        try {
            if (points < 0 || levels < 1 || count < 0)
                fail(ESM_ERR_ARGUMENT, "%s: points %lld, levels %lld, count %lld: need points >= 0, levels >= 1, count >= 0",
                     fn, (long long)points, (long long)levels, (long long)count);
            if (count > 0 && !indices) fail(ESM_ERR_ARGUMENT, "%s: indices is NULL", fn);
            int64_t pl[2] = {points, levels};
            d->total = checked_product(pl, 2, fn);
            d->points = points, d->levels = levels, d->count = count;
            d->dims[0] = d->total;
            d->ndims = 1;
            for (int64_t q = 0; q < count; q++) {
                int64_t g = indices[q];
                if (g < 0 || g >= points)
                    fail(ESM_ERR_ARGUMENT, "%s: rank %d's index %lld (entry %lld) is outside [0, %lld)", fn, d->rank,
                         (long long)g, (long long)q, (long long)points);
                if (!d->runs.empty() && d->runs.back().global + d->runs.back().len == g)
                    d->runs.back().len++;
                else
                    d->runs.push_back({q, g, 1});
            }
            std::vector<IndexRun> sorted = d->runs;
            std::sort(sorted.begin(), sorted.end(), [](const IndexRun &a, const IndexRun &b) { return a.global < b.global; });
            for (size_t i = 1; i < sorted.size(); i++)
                if (sorted[i].global < sorted[i - 1].global + sorted[i - 1].len)
                    fail(ESM_ERR_TILING, "%s: rank %d lists index %lld twice: every index must be held once", fn, d->rank,
                         (long long)sorted[i].global);
            hash = hash_value(hash, (int)Kind::indices);
            hash = hash_value(hash, points);
            hash = hash_value(hash, levels);
        } catch (const Error &e) {
            outcome.set(e);
        }
        agree(comm, outcome, hash, "points and levels to esm_distgrid_create_indices");
        d->hash = hash;
        d->local_count = count * levels;
        d->comm = duplicate(comm);
        *out = d.release();
    });
}

extern "C" int esm_distgrid_local_count(const esm_distgrid *decomp, int64_t *count) {
    return guarded([&] {
        if (!decomp || !count) fail(ESM_ERR_ARGUMENT, "esm_distgrid_local_count: NULL argument");
        *count = decomp->local_count;
    });
}

extern "C" int esm_distgrid_local_box(const esm_distgrid *decomp, int *ndims, int64_t lower[], int64_t upper[]) {
    return guarded([&] {
        if (!decomp || !ndims || !lower || !upper) fail(ESM_ERR_ARGUMENT, "esm_distgrid_local_box: NULL argument");
        if (decomp->kind == Kind::indices)
            fail(ESM_ERR_UNSUPPORTED, "esm_distgrid_local_box: an index-list decomposition has no box; use esm_distgrid_global_indices");
        *ndims = decomp->ndims;
        for (int d = 0; d < decomp->ndims; d++) lower[d] = decomp->lower[d], upper[d] = decomp->upper[d];
    });
}

extern "C" int esm_distgrid_global_indices(const esm_distgrid *decomp, int64_t global[]) {
    return guarded([&] {
        if (!decomp || (!global && decomp->local_count)) fail(ESM_ERR_ARGUMENT, "esm_distgrid_global_indices: NULL argument");
        for (const IndexRun &r : decomp->global_runs())
            for (int64_t i = 0; i < r.len; i++) global[r.local + i] = r.global + i;
    });
}

extern "C" int esm_distgrid_free(esm_distgrid **decomp) {
    return guarded([&] {
        if (!decomp) fail(ESM_ERR_ARGUMENT, "esm_distgrid_free: NULL argument");
        delete *decomp;
        *decomp = nullptr;
    });
}
