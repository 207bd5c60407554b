// Node-shared memory for fields (esm_shared_alloc). Each rank's block is a POSIX shared-memory
// object that every rank of its node maps (read-only) at allocation time; the name is unlinked
// as soon as all have mapped it, so nothing outlives the processes. A route then copies a node
// peer's elements from where they lie with memcpy: one copy, in user space, no MPI data message,
// no system call per run. (MPI-3 shared windows would do too, but some MPI libraries take tens
// of milliseconds per window and print warnings where their RMA transport is missing.)
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <unordered_map>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "esm_rank_state.h"
#include "internal.hpp"

using namespace esm;

namespace {

// Every block of this rank (one state per simulated rank under SMPI), by base address and by
// id, made at first use; and how many blocks it made (node rank 0 numbers them). The tables are
// never destroyed (the process's exit unmaps the blocks; their names are unlinked once mapped):
// SimGrid runs every simulated rank in one process, and a destructor of a global would run
// once per rank on one copy under its mmap privatization (a double free at exit, 32 ranks and
// more).
struct SharedState {
    std::map<uintptr_t, std::unique_ptr<SharedBlock>> *by_address;
    std::unordered_map<uint64_t, SharedBlock *> *by_id;
    uint64_t made;
};
ESM_RANK_STATE(SharedState, shared_state)

std::map<uintptr_t, std::unique_ptr<SharedBlock>> &blocks_by_address() {
    SharedState *s = shared_state();
    if (!s->by_address) s->by_address = new std::map<uintptr_t, std::unique_ptr<SharedBlock>>;
    return *s->by_address;
}
std::unordered_map<uint64_t, SharedBlock *> &blocks_by_id() {
    SharedState *s = shared_state();
    if (!s->by_id) s->by_id = new std::unordered_map<uint64_t, SharedBlock *>;
    return *s->by_id;
}

std::string object_name(uint64_t id, int node_rank) {
    return format("/esmredist-%016llx-%d", (unsigned long long)id, node_rank);
}

size_t page_rounded(size_t bytes) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (std::max<size_t>(bytes, 1) + page - 1) / page * page;
}

void unmap(SharedBlock &b) {
    for (size_t i = 0; i < b.bases.size(); i++)
        if (b.bases[i] && b.bases[i] != MAP_FAILED) munmap(b.bases[i], b.sizes[i]);
    b.bases.clear();
}

}  // namespace

namespace esm {

SharedBlock::~SharedBlock() { unmap(*this); }

const char *SharedBlock::base_of(int pid) const {
    for (size_t i = 0; i < pids.size(); i++)
        if (pids[i] == pid) return bases[i];
    return nullptr;
}

const SharedBlock *shared_block_containing(const void *p, uint64_t *offset) {
    auto &blocks = blocks_by_address();
    if (blocks.empty()) return nullptr;
    uintptr_t a = (uintptr_t)p;
    auto it = blocks.upper_bound(a);
    if (it == blocks.begin()) return nullptr;
    --it;
    const SharedBlock *b = it->second.get();
    if (a >= (uintptr_t)b->base + b->size) return nullptr;
    *offset = a - (uintptr_t)b->base;
    return b;
}

const SharedBlock *shared_block(uint64_t id) {
    auto it = blocks_by_id().find(id);
    return it == blocks_by_id().end() ? nullptr : it->second;
}

}  // namespace esm

extern "C" int esm_shared_alloc(const esm_distgrid *decomp, size_t bytes, void **ptr) {
    const char *fn = "esm_shared_alloc";
    return guarded([&] {
        if (!ptr) fail(ESM_ERR_ARGUMENT, "%s: the result pointer is NULL", fn);
        *ptr = nullptr;
        if (!decomp) fail(ESM_ERR_ARGUMENT, "%s: the decomposition is NULL", fn);
        if (decomp->layout_only())
            fail(ESM_ERR_UNSUPPORTED, "%s: the decomposition is a layout only (made with MPI_COMM_NULL): it has no ranks to share with", fn);
        const Comm &c = *decomp->comm;
        MPI_Comm node = c.node_comm;
        int node_rank = 0, node_size = 1;
        MPI_Comm_rank(node, &node_rank);
        MPI_Comm_size(node, &node_size);
        // one id for the node: node rank 0's pid and its count of blocks
        uint64_t id = ((uint64_t)getpid() << 24) ^ ++shared_state()->made;
        check_mpi(MPI_Bcast(&id, 1, MPI_UINT64_T, 0, node), "MPI_Bcast (shared block id)");
        auto b = std::make_unique<SharedBlock>();
        b->id = id;
        b->size = bytes;
        b->pids = c.node->pids;  // node ranks are in communicator rank order, as NodeInfo
        b->bases.assign(node_size, nullptr);
        b->sizes.assign(node_size, 0);
        Outcome outcome;
        const std::string mine = object_name(id, node_rank);
        const size_t mapped = page_rounded(bytes);
        try {  // my block: created, its memory reserved now (not at first touch), mapped
            int fd = shm_open(mine.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
            int rc = fd < 0 ? errno : posix_fallocate(fd, 0, (off_t)mapped);
            void *base = rc == 0 ? mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
            if (rc == 0 && base == MAP_FAILED) rc = errno;
            if (fd >= 0) close(fd);
            if (rc) {
                if (fd >= 0) shm_unlink(mine.c_str());
                fail(ESM_ERR_MEMORY, "%s: %zu bytes of shared memory (%s) on rank %d: %s: make /dev/shm larger, or allocate the fields privately (malloc)",
                     fn, bytes, mine.c_str(), c.rank, std::strerror(rc));
            }
            b->base = b->bases[node_rank] = static_cast<char *>(base);
            b->sizes[node_rank] = mapped;
        } catch (const Error &e) {
            outcome.set(e);
        }
        try {
            agree(c.comm, outcome, 0, "");
        } catch (const Error &) {  // another rank failed: take mine back
            if (b->base) shm_unlink(mine.c_str());
            throw;
        }
        // everyone maps everyone else's block of the node (read-only), then the names go
        std::vector<uint64_t> sizes(node_size);
        uint64_t my_size = mapped;
        check_mpi(MPI_Allgather(&my_size, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, node), "MPI_Allgather (shared sizes)");
        try {
            for (int r = 0; r < node_size; r++) {
                if (r == node_rank) continue;
                std::string name = object_name(id, r);
                int fd = shm_open(name.c_str(), O_RDONLY, 0);
                void *base = fd < 0 ? MAP_FAILED : mmap(nullptr, sizes[r], PROT_READ, MAP_SHARED, fd, 0);
                int err = errno;
                if (fd >= 0) close(fd);
                if (base == MAP_FAILED)
                    fail(ESM_ERR_SYSTEM, "%s: rank %d cannot map its node peer's shared memory %s: %s", fn, c.rank, name.c_str(),
                         std::strerror(err));
                b->bases[r] = static_cast<char *>(base);
                b->sizes[r] = sizes[r];
            }
        } catch (const Error &e) {
            outcome.set(e);
        }
        check_mpi(MPI_Barrier(node), "MPI_Barrier (shared memory mapped)");
        shm_unlink(mine.c_str());
        agree(c.comm, outcome, 0, "");
        b->size = mapped;
        *ptr = b->base;
        blocks_by_id()[id] = b.get();
        blocks_by_address()[(uintptr_t)b->base] = std::move(b);
    });
}

extern "C" int esm_shared_free(void **ptr) {
    return guarded([&] {
        if (!ptr) fail(ESM_ERR_ARGUMENT, "esm_shared_free: NULL argument");
        if (!*ptr) return;
        auto &blocks = blocks_by_address();
        auto it = blocks.find((uintptr_t)*ptr);
        if (it == blocks.end())
            fail(ESM_ERR_ARGUMENT, "esm_shared_free: %p was not returned by esm_shared_alloc", *ptr);
        blocks_by_id().erase(it->second->id);
        blocks.erase(it);  // unmaps this rank's views; the memory goes with the last view
        *ptr = nullptr;
    });
}
