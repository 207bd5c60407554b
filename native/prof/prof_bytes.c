/* Bytes moved by a call, from its arguments. Only arguments the standard makes significant on
 * this rank are read (an ignored datatype may be garbage, e.g. sendtype with MPI_IN_PLACE). */
#include <string.h>

#include "esmprof.h"
#include "esm_rank_state.h"
#include "prof_trace.h"

/* Type sizes, cached per thread (MPI_Type_size costs as much as the rest of a wrapper). A freed
 * handle may come back as another type, so MPI_Type_free empties every cache. */
#define TYPE_CACHE 32
typedef struct {
    volatile unsigned type_generation;
} types_state;
ESM_RANK_STATE(types_state, types)
typedef struct {
    struct {
        MPI_Datatype type;
        unsigned generation;
        int size, valid;
    } type_cache[TYPE_CACHE];
} types_thread_state;
ESM_THREAD_STATE(types_thread_state, types_thread)

void esm_types_changed(void)
{
    __atomic_add_fetch(&types()->type_generation, 1, __ATOMIC_RELAXED);
}

static int type_size(MPI_Datatype type)
{
    uint64_t key = 0;
    memcpy(&key, &type, sizeof type < sizeof key ? sizeof type : sizeof key);
    unsigned slot = (unsigned)((key * 0x9e3779b97f4a7c15ull) >> 59) % TYPE_CACHE;
    unsigned generation = types()->type_generation;
    __typeof__(types_thread()->type_cache[0]) *c = &types_thread()->type_cache[slot];
    if (c->valid && c->type == type && c->generation == generation)
        return c->size;
    int size = 0;
    PMPI_Type_size(type, &size);
    c->type = type;
    c->generation = generation;
    c->size = size;
    c->valid = 1;
    return size;
}

uint64_t esm_bytes(MPI_Count count, MPI_Datatype type)
{
    if (count <= 0 || type == MPI_DATATYPE_NULL)
        return 0;
    int size = type_size(type);
    return (uint64_t)count * (uint64_t)(size > 0 ? size : 0);
}

int esm_comm_size(MPI_Comm comm)
{
    int inter = 0, size = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter)
        PMPI_Comm_remote_size(comm, &size);
    else
        PMPI_Comm_size(comm, &size);
    return size;
}

int esm_comm_rank(MPI_Comm comm)
{
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    return rank;
}

static int is_root(int root, MPI_Comm comm)
{
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter)
        return root == MPI_ROOT;
    return root == esm_comm_rank(comm);
}

static int is_leaf(int root, MPI_Comm comm)
{
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter)
        return root >= 0;               /* receiving group names the remote root */
    return root != esm_comm_rank(comm);
}

uint64_t esm_root_bytes(int root, MPI_Comm comm, MPI_Count count, MPI_Datatype type)
{
    return is_root(root, comm) ? esm_bytes(count, type) : 0;
}

uint64_t esm_nonroot_bytes(int root, MPI_Comm comm, MPI_Count count, MPI_Datatype type)
{
    return is_leaf(root, comm) ? esm_bytes(count, type) : 0;
}

uint64_t esm_inplace_or(const void *buf, MPI_Count count, MPI_Datatype type, MPI_Count ipcount,
                        MPI_Datatype iptype)
{
    return buf == MPI_IN_PLACE ? esm_bytes(ipcount, iptype) : esm_bytes(count, type);
}

uint64_t esm_gather_recv(MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm)
{
    return is_root(root, comm) ? (uint64_t)esm_comm_size(comm) * esm_bytes(count, type) : 0;
}

uint64_t esm_all_bytes(MPI_Comm comm, MPI_Count count, MPI_Datatype type)
{
    return (uint64_t)esm_comm_size(comm) * esm_bytes(count, type);
}

MPI_Count esm_inplace_count(const void *sendbuf, MPI_Count sendcount, MPI_Count recvcount)
{
    return sendbuf == MPI_IN_PLACE ? recvcount : sendcount;
}

MPI_Datatype esm_inplace_type(const void *sendbuf, MPI_Datatype sendtype, MPI_Datatype recvtype)
{
    return sendbuf == MPI_IN_PLACE ? recvtype : sendtype;
}

/* The array helpers exist for int counts (MPI-3.1 calls) and MPI_Count counts (the MPI-4 `_c`
 * calls); esmprof.h picks one by the argument's type, so mpi.spec writes each expression once. */
#define COUNT_ARRAY_HELPERS(SUFFIX, T)                                                             \
    uint64_t esm_vbytes##SUFFIX(const T *counts, int n, MPI_Datatype type)                         \
    {                                                                                              \
        uint64_t total = 0;                                                                        \
        for (int i = 0; i < n; i++)                                                                \
            total += counts[i] > 0 ? (uint64_t)counts[i] : 0;                                      \
        return total ? esm_bytes(1, type) * total : 0;                                             \
    }                                                                                              \
    uint64_t esm_wbytes##SUFFIX(const T *counts, const MPI_Datatype *types, int n)                 \
    {                                                                                              \
        uint64_t total = 0;                                                                        \
        for (int i = 0; i < n; i++)                                                                \
            total += esm_bytes(counts[i], types[i]);                                               \
        return total;                                                                              \
    }                                                                                              \
    uint64_t esm_wbytes_inplace##SUFFIX(const void *sendbuf, const T *sendcounts,                  \
                                        const MPI_Datatype *sendtypes, const T *recvcounts,        \
                                        const MPI_Datatype *recvtypes, int n)                      \
    {                                                                                              \
        if (sendbuf == MPI_IN_PLACE)                                                               \
            return esm_wbytes##SUFFIX(recvcounts, recvtypes, n);                                   \
        return esm_wbytes##SUFFIX(sendcounts, sendtypes, n);                                       \
    }                                                                                              \
    uint64_t esm_gatherv_recv##SUFFIX(const T *counts, MPI_Datatype type, int root, MPI_Comm comm) \
    {                                                                                              \
        return is_root(root, comm) ? esm_vbytes##SUFFIX(counts, esm_comm_size(comm), type) : 0;    \
    }                                                                                              \
    uint64_t esm_gatherv_send##SUFFIX(const void *sendbuf, MPI_Count sendcount,                    \
                                      MPI_Datatype sendtype, const T *ipcounts,                    \
                                      MPI_Datatype iptype, int root, MPI_Comm comm)                \
    {                                                                                              \
        (void)root;                                                                                \
        if (sendbuf == MPI_IN_PLACE)                                                               \
            return esm_bytes(ipcounts[esm_comm_rank(comm)], iptype);                               \
        return esm_bytes(sendcount, sendtype);                                                     \
    }                                                                                              \
    const T *esm_inplace_counts##SUFFIX(const void *sendbuf, const T *sendcounts,                  \
                                        const T *recvcounts)                                       \
    {                                                                                              \
        return sendbuf == MPI_IN_PLACE ? recvcounts : sendcounts;                                  \
    }                                                                                              \
    /* traces: an alltoallv's bytes to and from each peer (the replay's per-peer counts) */        \
    void esm_trace_alltoallv##SUFFIX(esm_call *c, const void *sendbuf, const T *sendcounts,        \
                                     MPI_Datatype sendtype, const T *recvcounts,                   \
                                     MPI_Datatype recvtype)                                        \
    {                                                                                              \
        const esm_comm *comm = c->comm;                                                            \
        if (sendbuf == MPI_IN_PLACE) {                                                             \
            sendcounts = recvcounts;                                                               \
            sendtype = recvtype;                                                                   \
        }                                                                                          \
        for (int i = 0; comm && !comm->inter && i < comm->size; i++)                               \
            esm_trace_peer_bytes(c, comm->world ? (i < comm->nworld ? comm->world[i] : -1) : i,    \
                                 esm_bytes(sendcounts[i], sendtype),                               \
                                 esm_bytes(recvcounts[i], recvtype));                              \
    }

COUNT_ARRAY_HELPERS(_int, int)
COUNT_ARRAY_HELPERS(_count, MPI_Count)

static void degrees(MPI_Comm comm, int *in, int *out)
{
    int topo = MPI_UNDEFINED, weighted = 0;
    *in = *out = 0;
    PMPI_Topo_test(comm, &topo);
    if (topo == MPI_CART) {
        int ndims = 0;
        PMPI_Cartdim_get(comm, &ndims);
        *in = *out = 2 * ndims;
    } else if (topo == MPI_GRAPH) {
        PMPI_Graph_neighbors_count(comm, esm_comm_rank(comm), in);
        *out = *in;
    } else if (topo == MPI_DIST_GRAPH) {
        PMPI_Dist_graph_neighbors_count(comm, in, out, &weighted);
    }
}

int esm_indegree(MPI_Comm comm)
{
    int in, out;
    degrees(comm, &in, &out);
    return in;
}

int esm_outdegree(MPI_Comm comm)
{
    int in, out;
    degrees(comm, &in, &out);
    return out;
}

uint64_t esm_out_bytes(MPI_Comm comm, MPI_Count count, MPI_Datatype type)
{
    return (uint64_t)esm_outdegree(comm) * esm_bytes(count, type);
}

uint64_t esm_in_bytes(MPI_Comm comm, MPI_Count count, MPI_Datatype type)
{
    return (uint64_t)esm_indegree(comm) * esm_bytes(count, type);
}
