/* Processor sets: sub-communicators the core can be told to work on, and the driver's broadcast. */
#include <stdio.h>
#include <stdlib.h>
#include "esm_internal.h"
#include "esm_group.h"

struct esm_group {
    MPI_Comm comm;        /* MPI_COMM_NULL on ranks outside */
    int first, count;
};

enum { MAX_DEPTH = 8 };
static MPI_Comm entered[MAX_DEPTH]; /* the communicators to go back to */
static int depth;
static esm_group_counts counts;

esm_group *esm_group_create(int first, int count)
{
    esm_group *g = esm_calloc(1, sizeof *g);
    int rank = esm_rank();
    bool inside = rank >= first && rank < first + count;
    g->first = first;
    g->count = count;
    MPI_Comm_split(esm_world(), inside ? 0 : MPI_UNDEFINED, rank, &g->comm);
    counts.comm_split++;
    return g;
}

bool esm_group_member(const esm_group *g) { return g->comm != MPI_COMM_NULL; }
int esm_group_size(const esm_group *g) { return g->count; }
int esm_group_first(const esm_group *g) { return g->first; }

void esm_group_enter(const esm_group *g)
{
    if (g->comm == MPI_COMM_NULL || depth == MAX_DEPTH) {
        fprintf(stderr, "%s: internal error: esm_group_enter on a rank outside the group or "
                "nested deeper than %d\n", esm_program(), MAX_DEPTH);
        MPI_Abort(esm_whole_world(), 1);
    }
    entered[depth++] = esm_world();
    esm_comm_set_current(g->comm);
}

void esm_group_leave(void)
{
    if (depth > 0)
        esm_comm_set_current(entered[--depth]);
}

void esm_group_free(esm_group *g)
{
    if (g->comm != MPI_COMM_NULL)
        MPI_Comm_free(&g->comm);
    free(g);
}

void esm_broadcast(void *data, int bytes, int root)
{
    MPI_Bcast(data, bytes, MPI_BYTE, root, esm_world());
    counts.bcast++;
}

esm_group_counts esm_group_counts_mine(void) { return counts; }
