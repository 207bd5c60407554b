/* Processor sets: sub-communicators the core can be told to work on, and the driver's broadcast. */
#include <stdio.h>
#include <stdlib.h>
#include "esm_internal.h"
#include "esm_group.h"
#include "esm_rank_state.h"

struct esm_group {
    MPI_Comm comm; /* MPI_COMM_NULL on ranks outside */
    int first, count;
    int rank; /* this rank in it */
};

enum { MAX_DEPTH = 8 };
typedef struct {
    struct {
        MPI_Comm comm;
        int rank, ranks;
    } entered[MAX_DEPTH]; /* to go back to */
    int depth;
    esm_group_counts counts;
} group_state;
ESM_RANK_STATE(group_state, groups)

esm_group *esm_group_create(int first, int count)
{
    if (first < 0 || count < 1 || first + count > esm_ranks())
        esm_fail("a processor set of ranks %d..%d does not fit in %d ranks: use more ranks", first,
                 first + count - 1, esm_ranks());
    esm_group *g = esm_calloc(1, sizeof *g);
    int rank = esm_rank();
    bool inside = rank >= first && rank < first + count;
    g->first = first;
    g->count = count;
    g->rank = rank - first;
    MPI_Comm_split(esm_comm_current(), inside ? 0 : MPI_UNDEFINED, rank, &g->comm);
    groups()->counts.comm_split++;
    return g;
}

bool esm_group_member(const esm_group *g)
{
    return g->comm != MPI_COMM_NULL;
}
int esm_group_size(const esm_group *g)
{
    return g->count;
}
int esm_group_first(const esm_group *g)
{
    return g->first;
}

void esm_group_enter(const esm_group *g)
{
    group_state *s = groups();
    if (g->comm == MPI_COMM_NULL || s->depth == MAX_DEPTH) {
        fprintf(stderr,
                "%s: internal error: esm_group_enter on a rank outside the group or "
                "nested deeper than %d\n",
                esm_program(), MAX_DEPTH);
        MPI_Abort(esm_comm_world(), 1);
    }
    s->entered[s->depth].comm = esm_comm_current();
    s->entered[s->depth].rank = esm_rank();
    s->entered[s->depth++].ranks = esm_ranks();
    esm_comm_set_current(g->comm, g->rank, g->count);
}

void esm_group_leave(void)
{
    group_state *s = groups();
    if (s->depth > 0) {
        s->depth--;
        esm_comm_set_current(s->entered[s->depth].comm, s->entered[s->depth].rank,
                             s->entered[s->depth].ranks);
    }
}

void esm_group_free(esm_group *g)
{
    if (g->comm != MPI_COMM_NULL)
        MPI_Comm_free(&g->comm);
    free(g);
}

void esm_broadcast(void *data, int bytes, int root)
{
    MPI_Bcast(data, bytes, MPI_BYTE, root, esm_comm_current());
    groups()->counts.bcast++;
}

esm_group_counts esm_group_counts_mine(void)
{
    return groups()->counts;
}
