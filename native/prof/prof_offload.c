/* Collectives offloaded to the network, on a simulated cluster (the `offload` knob of the smpi
 * stack, docs/simulate.md "Collective offload"). Under ESM_OFFLOAD_LEVEL_LATENCY the profiler's
 * wrappers of MPI_Barrier, MPI_Bcast, MPI_Reduce, MPI_Allreduce, MPI_Allgather and
 * MPI_Allgatherv (mpi.spec: `offload`) come here instead of SMPI's CPU algorithms:
 *
 *   each rank leaves a packed copy of its data in a table shared by the communicator's ranks,
 *   waits at a SimGrid barrier (no simulated time: it is released when the last rank arrives),
 *   takes the result from the table (a reduction is done once, by rank 0, in rank order: the
 *   same bits on every rank),
 *   waits at the barrier again (every rank has read), then sleeps the offload's latency:
 *   levels x ESM_OFFLOAD_LEVEL_LATENCY + the bytes it receives / ESM_OFFLOAD_BANDWIDTH.
 *
 * A sleep is not computation: once the last rank has arrived, the collective takes the same time
 * whatever the nodes' OS noise, and it charges no CPU time. The levels are the switch levels the
 * communicator's nodes span (ESM_OFFLOAD_LEAF_NODES nodes per leaf switch, 0 = one switch);
 * ranks of a communicator on one node, and data types that are not contiguous, use SMPI's own
 * algorithms. The ranks of a simulation share one address space (their globals are private):
 * the table of communicators is found through the process's environment. */
#ifdef ESM_SIMULATED
#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "esm_rank_state.h"
#include "esmprof.h"

typedef struct offload_group { /* one per communicator, shared by its ranks */
    uint64_t key;
    int size;
    sg_bar_t barrier;
    void **data; /* each rank's packed contribution of the call in progress */
    int *bytes;
    char *result; /* a reduction's result, computed once per call (by the barrier's serial rank) */
    size_t result_room;
    struct offload_group *next;
} offload_group;

typedef struct offload_comm { /* one per communicator and rank, cached as an attribute */
    offload_group *group; /* NULL: not offloaded (one node) */
    int rank, levels;
} offload_comm;

/* read from the environment: the same in every rank */
static struct {
    int read;
    double level_latency, bandwidth;
    int leaf_nodes, ranks_per_node;
} config ESM_RANK_INVARIANT;
typedef struct {
    int comm_keyval;
} offload_state;
ESM_RANK_STATE(offload_state, offload, .comm_keyval = MPI_KEYVAL_INVALID)
static const char registry_variable[] = "ESM_OFFLOAD_GROUPS"; /* set by the first rank */

static void need(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "esmprof: offloaded collectives: %s\n", what);
        abort();
    }
}

static int offload_on(void)
{
    if (!config.read) {
        config.read = 1;
        const char *latency = getenv("ESM_OFFLOAD_LEVEL_LATENCY");
        config.level_latency = latency ? atof(latency) : 0;
        const char *bandwidth = getenv("ESM_OFFLOAD_BANDWIDTH");
        config.bandwidth = bandwidth ? atof(bandwidth) : 0;
        const char *leaf = getenv("ESM_OFFLOAD_LEAF_NODES");
        config.leaf_nodes = leaf ? atoi(leaf) : 0;
        const char *per_node = getenv("ESM_OFFLOAD_RANKS_PER_NODE");
        config.ranks_per_node = per_node ? atoi(per_node) : 1;
        need(!latency ||
                 (config.level_latency > 0 && config.bandwidth > 0 && config.ranks_per_node > 0),
             "ESM_OFFLOAD_LEVEL_LATENCY, _BANDWIDTH and _RANKS_PER_NODE must be positive");
    }
    return config.level_latency > 0;
}

/* The shared group of the communicator whose world ranks hash to `key`, created by its first
 * rank. Simulated ranks take turns, but a SimGrid call may hand the turn to another rank: the
 * look-up and the insertion make none (the list's head is in the process's environment, which
 * SMPI does not privatize), and the barrier is made before. */
static offload_group *shared_group(uint64_t key, int size)
{
    sg_bar_t barrier = sg_barrier_init((unsigned)size);
    offload_group **head = NULL;
    const char *text = getenv(registry_variable);
    if (text)
        sscanf(text, "%p", (void **)&head);
    if (!head) {
        head = calloc(1, sizeof *head);
        char pointer[32];
        snprintf(pointer, sizeof pointer, "%p", (void *)head);
        need(head && setenv(registry_variable, pointer, 1) == 0, "cannot share the groups");
    }
    for (offload_group *g = *head; g; g = g->next)
        if (g->key == key && g->size == size) {
            sg_barrier_destroy(barrier);
            return g;
        }
    offload_group *g = calloc(1, sizeof *g);
    need(g != NULL, "out of memory");
    g->key = key;
    g->size = size;
    g->barrier = barrier;
    g->data = calloc((size_t)size, sizeof *g->data);
    g->bytes = calloc((size_t)size, sizeof *g->bytes);
    g->next = *head;
    *head = g;
    return g;
}

static int forget_comm(MPI_Comm comm, int keyval, void *value, void *extra)
{
    free(value);
    return MPI_SUCCESS;
}

/* Every PMPI call of SMPI ends with smpi_bench_begin: stop the clock of the program's
 * computation again, the offload's own work is none of it. */
#define LOCAL(call) (call, smpi_bench_end())

/* This rank's view of `comm`: its shared group and the switch levels its nodes span. */
static offload_comm *comm_view(MPI_Comm comm)
{
    int found = 0;
    offload_comm *view = NULL;
    if (offload()->comm_keyval == MPI_KEYVAL_INVALID)
        LOCAL(PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, forget_comm, &offload()->comm_keyval,
                                      NULL));
    LOCAL(PMPI_Comm_get_attr(comm, offload()->comm_keyval, &view, &found));
    if (found)
        return view;
    view = calloc(1, sizeof *view);
    int size, inter;
    LOCAL(PMPI_Comm_test_inter(comm, &inter));
    LOCAL(PMPI_Comm_size(comm, &size));
    LOCAL(PMPI_Comm_rank(comm, &view->rank));
    int *ranks = malloc(2 * sizeof(int) * (size_t)size);
    MPI_Group group, world;
    LOCAL(PMPI_Comm_group(comm, &group));
    LOCAL(PMPI_Comm_group(MPI_COMM_WORLD, &world));
    for (int r = 0; r < size; r++)
        ranks[r] = r;
    LOCAL(PMPI_Group_translate_ranks(group, size, ranks, world, ranks + size));
    LOCAL(PMPI_Group_free(&group));
    LOCAL(PMPI_Group_free(&world));
    uint64_t key = 1469598103934665603ull; /* FNV-1a over the world ranks */
    int first_node = ranks[size] / config.ranks_per_node, nodes_differ = 0, leaves_differ = 0;
    for (int r = 0; r < size; r++) {
        int node = ranks[size + r] / config.ranks_per_node;
        nodes_differ |= node != first_node;
        if (config.leaf_nodes > 0)
            leaves_differ |= node / config.leaf_nodes != first_node / config.leaf_nodes;
        key = (key ^ (uint64_t)(unsigned)ranks[size + r]) * 1099511628211ull;
    }
    free(ranks);
    view->levels = nodes_differ ? 1 + leaves_differ : 0;
    if (view->levels > 0 && !inter)
        view->group = shared_group(key, size);
    LOCAL(PMPI_Comm_set_attr(comm, offload()->comm_keyval, view));
    return view;
}

/* The communicator's offload, or NULL to run SMPI's algorithm; stops the computation clock. */
static offload_comm *begin(MPI_Comm comm)
{
    if (!offload_on())
        return NULL;
    smpi_bench_end();
    offload_comm *view = comm_view(comm);
    if (view->group)
        return view;
    smpi_bench_begin();
    return NULL;
}

static int contiguous(MPI_Datatype type)
{
    int size;
    MPI_Aint lb, extent;
    LOCAL(PMPI_Type_size(type, &size));
    LOCAL(PMPI_Type_get_extent(type, &lb, &extent));
    return lb == 0 && extent == size;
}

static MPI_Aint extent_of(MPI_Datatype type)
{
    MPI_Aint lb, extent;
    LOCAL(PMPI_Type_get_extent(type, &lb, &extent));
    return extent;
}

/* Leave a packed copy of count x type at buffer (NULL: nothing), wait for every rank. */
static void arrive(offload_comm *view, const void *buffer, int count, MPI_Datatype type)
{
    offload_group *g = view->group;
    g->data[view->rank] = NULL;
    g->bytes[view->rank] = 0;
    if (buffer && count > 0) {
        int bytes, position = 0;
        LOCAL(PMPI_Pack_size(count, type, MPI_COMM_SELF, &bytes));
        g->data[view->rank] = malloc((size_t)bytes);
        LOCAL(PMPI_Pack(buffer, count, type, g->data[view->rank], bytes, &position, MPI_COMM_SELF));
        g->bytes[view->rank] = position;
    }
    sg_barrier_wait(g->barrier);
}

static void unpack(offload_comm *view, int from, void *buffer, int count, MPI_Datatype type)
{
    int position = 0;
    offload_group *g = view->group;
    LOCAL(
        PMPI_Unpack(g->data[from], g->bytes[from], &position, buffer, count, type, MPI_COMM_SELF));
}

/* Every rank has read: free this rank's data, then the offload's latency for `bytes` received. */
static int depart(offload_comm *view, double bytes)
{
    offload_group *g = view->group;
    sg_barrier_wait(g->barrier);
    free(g->data[view->rank]);
    g->data[view->rank] = NULL;
    sg_actor_sleep_for(view->levels * config.level_latency + bytes / config.bandwidth);
    smpi_bench_begin();
    return MPI_SUCCESS;
}

/* op over the ranks' data in rank order (data[0] op (data[1] op ...)) into the group's result,
 * by the communicator's rank 0 (SimGrid 3.32's sg_barrier_wait names no serial rank: it returns
 * 0 to all, measured); the others would compute the same bits, and a P-rank reduction costs the
 * simulator O(P), not O(P^2). */
static void reduce_once(offload_comm *view, int count, MPI_Datatype type, MPI_Op op)
{
    offload_group *g = view->group;
    size_t bytes = (size_t)g->bytes[g->size - 1];
    if (g->result_room < bytes) {
        free(g->result);
        g->result = malloc(bytes);
        need(g->result != NULL, "out of memory");
        g->result_room = bytes;
    }
    memcpy(g->result, g->data[g->size - 1], bytes);
    for (int r = g->size - 2; r >= 0; r--)
        LOCAL(PMPI_Reduce_local(g->data[r], g->result, count, type, op));
}

int esm_offload_MPI_Barrier(MPI_Comm comm)
{
    offload_comm *view = begin(comm);
    if (!view)
        return PMPI_Barrier(comm);
    arrive(view, NULL, 0, MPI_BYTE);
    return depart(view, 0);
}

int esm_offload_MPI_Bcast(void *buffer, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    offload_comm *view = begin(comm);
    if (!view)
        return PMPI_Bcast(buffer, count, type, root, comm);
    arrive(view, view->rank == root ? buffer : NULL, count, type);
    if (view->rank != root && count > 0)
        unpack(view, root, buffer, count, type);
    return depart(view, view->rank == root ? 0 : view->group->bytes[root]);
}

static int offload_reduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                          int root, offload_comm *view)
{
    int here = root < 0 || view->rank == root;
    offload_group *g = view->group;
    arrive(view, here && send == MPI_IN_PLACE ? recv : send, count, type);
    if (view->rank == 0 && count > 0)
        reduce_once(view, count, type, op);
    sg_barrier_wait(g->barrier); /* the result is there */
    if (here && count > 0)
        memcpy(recv, g->result, (size_t)g->bytes[view->rank]);
    return depart(view, here ? g->bytes[view->rank] : 0);
}

int esm_offload_MPI_Reduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                           int root, MPI_Comm comm)
{
    offload_comm *view = begin(comm);
    if (view && !contiguous(type)) {
        smpi_bench_begin();
        view = NULL;
    }
    if (!view)
        return PMPI_Reduce(send, recv, count, type, op, root, comm);
    return offload_reduce(send, recv, count, type, op, root, view);
}

int esm_offload_MPI_Allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm)
{
    offload_comm *view = begin(comm);
    if (view && !contiguous(type)) {
        smpi_bench_begin();
        view = NULL;
    }
    if (!view)
        return PMPI_Allreduce(send, recv, count, type, op, comm);
    return offload_reduce(send, recv, count, type, op, -1, view);
}

/* Allgather(v): block r (counts[r] x type at displs[r] x extent) from rank r. */
static int offload_gather(const void *send, int send_count, MPI_Datatype send_type, void *recv,
                          const int *counts, const int *displs, int block_count, MPI_Datatype type,
                          offload_comm *view)
{
    MPI_Aint extent = extent_of(type);
    int me = view->rank, n = view->group->size;
    int my_count = counts ? counts[me] : block_count;
    char *mine = (char *)recv + (displs ? displs[me] : (MPI_Aint)me * block_count) * extent;
    if (send == MPI_IN_PLACE)
        arrive(view, mine, my_count, type);
    else
        arrive(view, send, send_count, send_type);
    double bytes = 0;
    for (int r = 0; r < n; r++) {
        int count = counts ? counts[r] : block_count;
        bytes += r == me ? 0 : view->group->bytes[r];
        if (count > 0 && (r != me || send != MPI_IN_PLACE))
            unpack(view, r,
                   (char *)recv + (displs ? displs[r] : (MPI_Aint)r * block_count) * extent, count,
                   type);
    }
    return depart(view, bytes);
}

int esm_offload_MPI_Allgather(const void *send, int send_count, MPI_Datatype send_type, void *recv,
                              int recv_count, MPI_Datatype recv_type, MPI_Comm comm)
{
    offload_comm *view = begin(comm);
    if (!view)
        return PMPI_Allgather(send, send_count, send_type, recv, recv_count, recv_type, comm);
    return offload_gather(send, send_count, send_type, recv, NULL, NULL, recv_count, recv_type,
                          view);
}

int esm_offload_MPI_Allgatherv(const void *send, int send_count, MPI_Datatype send_type, void *recv,
                               const int counts[], const int displs[], MPI_Datatype recv_type,
                               MPI_Comm comm)
{
    offload_comm *view = begin(comm);
    if (!view)
        return PMPI_Allgatherv(send, send_count, send_type, recv, counts, displs, recv_type, comm);
    return offload_gather(send, send_count, send_type, recv, counts, displs, 0, recv_type, view);
}
#endif
