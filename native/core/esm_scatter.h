/* esm_scatter.h: ghost updates the way PETSc's VecScatter did them (PETSc 3.1-era vpscat.c,
 * which PFLOTRAN ran on), and the plain global dot products of a Krylov solver.
 *
 * A scatter moves runs of doubles from a distributed vector `x` to a local ghost vector `y`,
 * as an esm_halo_spec (esm_halo.h) lists them: per peer rank, the runs of x to send and the
 * runs of y where that peer's data lands, in the same order on both sides (the halo engines
 * and this one share that description). When the plan is made, one persistent receive
 * (MPI_Recv_init) and one persistent send (MPI_Send_init) are set up per peer; then every
 * scatter
 *
 *   esm_scatter_begin   MPI_Startall on all the receives, then for each peer in turn: pack
 *                       its buffer and MPI_Start its send;
 *   esm_scatter_end     MPI_Waitany over the receives, unpacking each message as it lands,
 *                       then one MPI_Waitall on the sends.
 *
 * Work that needs no ghost (the local part of a matrix-vector product) goes between the two,
 * as PETSc's MatMult_MPIBAIJ does. No MPI call is made on a rank without peers.
 *
 *     esm_halo_spec *s = esm_halo_spec_new();
 *     esm_halo_spec_send(s, east, 4 * cell, 4);         // a cell's 4 unknowns the peer needs
 *     esm_halo_spec_recv(s, east, 4 * slot, 4);         // where the peer's cell lands in y
 *     esm_scatter *sc = esm_scatter_create(s);          // collective
 *     esm_scatter_begin(sc, x); ... local work ...; esm_scatter_end(sc, ghosts);
 *
 * The core's counts (esm_counts) gain send_init/recv_init at creation, and per scatter one
 * startall, one waitall, halo_updates and bytes_sent; MPI_Start and MPI_Waitany calls, which
 * esm_counts has no field for, are counted by esm_scatter_counts. */
#ifndef ESM_SCATTER_H
#define ESM_SCATTER_H
#include "esm_halo.h"

typedef struct esm_scatter esm_scatter;

/* The plan from `spec` (collective: every rank makes its plans in the same order); frees the
 * spec. A peer listed with sends but no receives (or the reverse) is allowed; local copies
 * and zero runs are not (they belong to a halo plan). */
esm_scatter *esm_scatter_create(esm_halo_spec *spec);

/* Start the receives, pack and start each send. `x` must not change until esm_scatter_end. */
void esm_scatter_begin(esm_scatter *sc, const double *x);
/* Unpack each message into `y` as MPI_Waitany hands it over, then complete the sends. */
void esm_scatter_end(esm_scatter *sc, double *y);
/* Both at once. */
void esm_scatter_update(esm_scatter *sc, const double *x, double *y);

int esm_scatter_peers(const esm_scatter *sc);   /* ranks this rank sends to */
long esm_scatter_bytes(const esm_scatter *sc);  /* bytes sent per scatter */
long esm_scatter_largest(const esm_scatter *sc); /* largest message sent, bytes */
void esm_scatter_free(esm_scatter *sc);

/* MPI calls issued by every scatter of this rank so far (alongside esm_counts). */
typedef struct esm_scatter_counts {
    long start, waitany;
} esm_scatter_counts;
esm_scatter_counts esm_scatter_counts_mine(void);

/* values[k] = the sum over ranks of values[k], k < n, in double: one MPI_Allreduce (what
 * PETSc's VecDot, VecMDot and VecNorm do). Not reproducible across rank counts; use
 * esm_sum.h where bits matter. Collective. */
void esm_global_dots(double *values, int n);
#endif
