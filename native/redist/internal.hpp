// libesmredist internals: what the decomposition, store, exchange and run parts share.
#ifndef ESM_REDIST_INTERNAL_HPP
#define ESM_REDIST_INTERNAL_HPP

#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "esm_redist.h"

namespace esm {

constexpr int max_dims = ESM_MAX_DIMS;

// An error on its way to the C API boundary, where it becomes a status and a message.
struct Error {
    esm_status code;
    std::string message;
};

[[noreturn]] void fail(esm_status code, const char *format, ...) __attribute__((format(printf, 2, 3)));
std::string format(const char *format, ...) __attribute__((format(printf, 1, 2)));
void check_mpi(int rc, const char *what);  // throws ESM_ERR_MPI naming `what`
void set_error(esm_status code, const std::string &message);

// Runs the body of a C entry point: errors become a status and a message (esm_error_message).
template <class F> int guarded(F &&body) {
    try {
        body();
        set_error(ESM_OK, "");
        return ESM_OK;
    } catch (const Error &e) {
        set_error(e.code, e.message);
        return e.code;
    } catch (const std::bad_alloc &) {
        set_error(ESM_ERR_MEMORY, "out of memory");
        return ESM_ERR_MEMORY;
    }
}

// One rank's outcome of a step of a collective call: OK, or an error with its message.
struct Outcome {
    esm_status code = ESM_OK;
    std::string message;
    void set(const Error &e) {
        if (code == ESM_OK) { code = e.code; message = e.message; }
    }
};

// Collective agreement: every rank passes its outcome and a hash of the arguments that must
// agree across ranks (`what` names them for the message). One allreduce of three int64 on
// success; on any failure the lowest failing rank's message is broadcast and every rank throws
// the same Error.
void agree(MPI_Comm comm, const Outcome &outcome, uint64_t hash, const char *what);

// FNV-1a over raw bytes, chained.
uint64_t hash_bytes(uint64_t h, const void *data, size_t n);
template <class T> uint64_t hash_value(uint64_t h, const T &v) { return hash_bytes(h, &v, sizeof v); }
constexpr uint64_t hash_seed = 1469598103934665603ull;

// A strided block of elements of one field: for c2 < count[2], c1 < count[1], c0 < count[0]:
// `len` contiguous elements at offset + c0 * stride[0] + c1 * stride[1] + c2 * stride[2].
// The two sides of a peer pair hold segments of identical shape (len, counts) in the same
// global order, so each row is contiguous on both sides.
struct Segment {
    int64_t offset = 0;
    int64_t len = 0;
    int64_t count[3] = {1, 1, 1};
    int64_t stride[3] = {0, 0, 0};
    int64_t rows() const { return count[0] * count[1] * count[2]; }
    int64_t elements() const { return len * rows(); }
};

// The loops of a segment with rows adjacent in memory merged into longer rows (merge = true),
// or as stored (merge = false: one run per row, as ESM_PACK_NONE needs).
struct Loops {
    int64_t len, count[3], stride[3];
    Loops(const Segment &s, bool merge) : len(s.len) {
        for (int j = 0; j < 3; j++) count[j] = s.count[j], stride[j] = s.stride[j];
        if (!merge) return;
        for (int pass = 0; pass < 3; pass++) {
            if (count[0] > 1 && stride[0] == len) {  // rows touch: one longer row
                len *= count[0];
                count[0] = 1;
            }
            if (count[0] == 1) {  // drop a loop of one
                count[0] = count[1], stride[0] = stride[1];
                count[1] = count[2], stride[1] = stride[2];
                count[2] = 1, stride[2] = 0;
            }
        }
    }
};

// Calls f(offset, length) for each contiguous run of the segment, in order.
template <class F> inline void for_each_run(const Segment &s, bool merge, F &&f) {
    Loops l(s, merge);
    for (int64_t i2 = 0; i2 < l.count[2]; i2++)
        for (int64_t i1 = 0; i1 < l.count[1]; i1++) {
            int64_t base = s.offset + i2 * l.stride[2] + i1 * l.stride[1];
            for (int64_t i0 = 0; i0 < l.count[0]; i0++) f(base + i0 * l.stride[0], l.len);
        }
}

// The runs of a list of segments one at a time (merged), for walking two lists side by side.
class RunCursor {
  public:
    explicit RunCursor(const std::vector<Segment> &segs) : segs_(segs) {}
    // The next run; false at the end.
    bool next(int64_t &offset, int64_t &len) {
        while (!active_) {
            if (si_ >= segs_.size()) return false;
            loops_ = Loops(segs_[si_], true);
            i_[0] = i_[1] = i_[2] = 0;
            active_ = loops_.len > 0 && loops_.count[0] > 0 && loops_.count[1] > 0 && loops_.count[2] > 0;
            if (!active_) si_++;
        }
        offset = segs_[si_].offset + i_[2] * loops_.stride[2] + i_[1] * loops_.stride[1] + i_[0] * loops_.stride[0];
        len = loops_.len;
        if (++i_[0] == loops_.count[0]) {
            i_[0] = 0;
            if (++i_[1] == loops_.count[1]) {
                i_[1] = 0;
                if (++i_[2] == loops_.count[2]) active_ = false, si_++;
            }
        }
        return true;
    }

  private:
    const std::vector<Segment> &segs_;
    size_t si_ = 0;
    bool active_ = false;
    Loops loops_{Segment{}, false};
    int64_t i_[3] = {0, 0, 0};
};

// Walks two run lists holding the same number of elements side by side: f(a_offset,
// b_offset, n) for each stretch contiguous in both.
template <class F> inline void zip_runs(const std::vector<Segment> &a, const std::vector<Segment> &b, F &&f) {
    RunCursor ca(a), cb(b);
    int64_t ao = 0, al = 0, bo = 0, bl = 0;
    for (;;) {
        if (al == 0 && !ca.next(ao, al)) return;
        if (bl == 0 && !cb.next(bo, bl)) return;
        int64_t n = al < bl ? al : bl;
        f(ao, bo, n);
        ao += n, al -= n, bo += n, bl -= n;
    }
}

enum class Kind { blocks, boxes, indices };

// A run of an index decomposition: `len` elements stored from `local` on, global from `global` on.
struct IndexRun {
    int64_t local, global, len;
};

// The ranks of a communicator that share this rank's node, and whether cross-memory attach
// (process_vm_readv) between them works (probed once when a decomposition is created).
struct NodeInfo {
    std::vector<int> ranks;  // sorted communicator ranks on this node (this rank included)
    std::vector<int> pids;   // process id of each of `ranks`
    bool cma = false;
    int pid_of(int rank) const;  // -1 when `rank` is not on this node
};

// A duplicate of the user's communicator (errors returned, not fatal), shared by the
// decompositions and routes made on it; freed with the last of them.
struct Comm {
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm node_comm = MPI_COMM_NULL;  // the ranks of `comm` on this node, in rank order
    int rank = 0, size = 1;
    std::shared_ptr<NodeInfo> node;
    uint32_t routes = 0;  // routes stored on it so far (all ranks alike): gives each its tags
    ~Comm();
};

}  // namespace esm

struct esm_distgrid {
    esm::Kind kind;
    std::shared_ptr<esm::Comm> comm;  // null for a layout-only decomposition
    int rank = 0, nranks = 1;
    int ndims = 1;
    int64_t dims[esm::max_dims] = {};
    int64_t total = 0;  // elements of the global index space
    // blocks
    int parts[esm::max_dims] = {};
    std::vector<int64_t> cuts[esm::max_dims];
    // boxes: lower then upper corner of every rank, 2 * ndims values each
    std::vector<int64_t> boxes;
    // this rank's box (blocks, boxes)
    int64_t lower[esm::max_dims] = {}, upper[esm::max_dims] = {};
    // indices: runs of level 0, in local order; levels repeat them
    std::vector<esm::IndexRun> runs;
    int64_t points = 0, levels = 1, count = 0;
    int64_t local_count = 0;
    uint64_t hash = 0;  // of what all ranks agreed on

    bool layout_only() const { return !comm; }
    void box_of(int r, int64_t lo[], int64_t hi[]) const;  // blocks and boxes
    // The ranks whose box meets [lo, hi), with the intersection: f(rank, ilo, ihi).
    template <class F> void for_each_overlap(const int64_t lo[], const int64_t hi[], F &&f) const;
    // This rank's elements as runs of consecutive global indices, in local order.
    std::vector<esm::IndexRun> global_runs() const;
};

namespace esm {

// One partner of a route: the segments of my side, in global order; for a single-copy
// receive also the sender's segments in its source arrays.
struct Peer {
    int rank = -1;
    int64_t elements = 0;  // of one field
    std::vector<Segment> segs;
    std::vector<Segment> remote;
    bool single_copy = false;
};

// The route computation's result, before the run engine sets itself up.
struct Plan {
    std::vector<Peer> sends, recvs;               // other ranks, sorted by rank
    std::vector<Segment> self_src, self_dst;      // this rank's own overlap (same shapes)
};

// `wants_remote(rank)`: also keep the sender's segments of that receive peer (single copy).
Plan plan_box_route(const esm_distgrid &src, const esm_distgrid &dst, int rank,
                    const std::function<bool(int)> &wants_remote);
Plan plan_directory_route(const esm_distgrid &src, const esm_distgrid &dst, MPI_Comm comm, int tag,
                          const std::function<bool(int)> &wants_remote);

// Segments of the intersection box [lo, hi) inside the local box [blo, bhi) (dense, first
// dimension fastest); more than one only beyond four dimensions.
void box_segments(int ndims, const int64_t blo[], const int64_t bhi[], const int64_t lo[],
                  const int64_t hi[], std::vector<Segment> &out);

// Sparse data exchange (NBX, Hoefler et al. 2010): sends each (rank, records) with a
// synchronous send, receives whatever arrives until a non-blocking barrier completes. Nobody
// needs to know who sends to it. Returns (source, records) pairs.
using Records = std::vector<int64_t>;
std::vector<std::pair<int, Records>> sparse_exchange(MPI_Comm comm, int tag,
                                                     std::vector<std::pair<int, Records>> &&out);

// Memory from esm_shared_alloc: one POSIX shared-memory object per rank of a node, every
// member's mapped here (read-only, but for this rank's own).
struct SharedBlock {
    uint64_t id = 0;  // the same on every rank of the node
    char *base = nullptr;
    size_t size = 0;
    std::vector<int> pids;      // node members
    std::vector<char *> bases;  // their blocks, in this process's address space
    std::vector<size_t> sizes;  // mapped bytes of each
    const char *base_of(int pid) const;  // nullptr when `pid` is not a member
    ~SharedBlock();
};
// The block holding `p` (and p's offset in it), nullptr for private memory.
const SharedBlock *shared_block_containing(const void *p, uint64_t *offset);
const SharedBlock *shared_block(uint64_t id);

size_t type_size(esm_type t);
MPI_Datatype mpi_type(esm_type t);
const char *type_name(esm_type t);

}  // namespace esm

#endif
