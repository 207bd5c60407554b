/* esm_internal.h: what the core's own files share; never included by workloads. */
#ifndef ESM_INTERNAL_H
#define ESM_INTERNAL_H
#include <mpi.h>
#include "esm_comm.h"
#include "esm_halo.h"
#include "esm_timer.h"

/* The communicator the core works on: the world, or the processor set entered (group.c). */
MPI_Comm esm_comm_current(void);
/* The whole run's communicator, whatever set is entered. */
MPI_Comm esm_comm_world(void);
/* Make `c` (this rank being `rank` of `ranks`) the communicator the core works on (group.c
 * enters and leaves sets with it, no MPI call). */
void esm_comm_set_current(MPI_Comm c, int rank, int ranks);
esm_counts *esm_counts_writable(void);

/* Set `path` of a result to an already rendered JSON value (result.c). */
struct esm_result;
void esm_result_json(struct esm_result *r, const char *path, const char *rendered);
/* Read the folding and node-model settings (fold.c; esm_init calls it, errors end the run),
 * and add "fold" to the result when they are on (collective, uncounted). */
void esm_fold_setup(void);
void esm_fold_report(struct esm_result *r);

/* One counted MPI_Allreduce on the current communicator. */
void esm_allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op);

/* What an exchange plan is made from (esm_halo_spec, spec.c), shared by the halo engines
 * (halo.c) and the VecScatter-style engine (scatter.c): per peer rank, the runs of doubles
 * to send and to receive, in the order listed; copies within the rank; runs to zero. */
typedef struct {
    long offset;
    int length;
} esm_run;
typedef struct {
    esm_run *at;
    int count, capacity;
    long doubles;
} esm_runs;
typedef struct {
    long from, to;
    int length;
} esm_copy;
typedef struct {
    esm_copy *at;
    int count, capacity;
} esm_copies;
typedef struct {
    int rank;
    esm_runs send, recv;
} esm_spec_peer;

struct esm_halo_spec {
    esm_spec_peer *peers; /* ascending rank */
    int npeers;
    esm_copies copies;
    esm_runs zero;
};

/* Append a run; esm_runs_add merges it with the last one when contiguous. */
void esm_runs_add(esm_runs *list, long offset, int length);
void esm_runs_add_unmerged(esm_runs *list, long offset, int length);
/* The runs of `field` one after another into `buffer`, and back. */
void esm_runs_pack(const esm_runs *list, double *buffer, const double *field);
void esm_runs_unpack(const esm_runs *list, const double *buffer, double *field);
/* Doubles sent to all peers per field: an exchange of n fields sends n times this. */
long esm_spec_send_doubles(const esm_halo_spec *s);
/* Free the lists a spec holds (not the spec itself). */
void esm_spec_free_lists(esm_halo_spec *s);
#endif
