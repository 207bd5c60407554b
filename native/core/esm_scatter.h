/* esm_scatter.h: ghost updates the way PETSc's VecScatter does them, in either of PETSc's two
 * eras, and the plain global dot products of a Krylov solver.
 *
 * A scatter moves runs of doubles from a distributed vector `x` to a local ghost vector `y`,
 * as an esm_halo_spec (esm_halo.h) lists them: per peer rank, the runs of x to send and the
 * runs of y where that peer's data lands, in the same order on both sides (the halo engines
 * and this one share that description). One persistent receive (MPI_Recv_init) and one
 * persistent send (MPI_Send_init) per peer; then every scatter, by era:
 *
 *   ESM_SCATTER_VPSCAT  PETSc <= 3.12 (vpscat.c, the 3.1 that PFLOTRAN ran on in 2011).
 *                       Requests made with the plan.
 *     esm_scatter_begin   MPI_Startall on all the receives, then for each peer in turn: pack
 *                         its buffer and MPI_Start its send;
 *     esm_scatter_end     MPI_Waitany over the receives, unpacking each message as it lands,
 *                         then one MPI_Waitall on the sends.
 *
 *   ESM_SCATTER_SF      PETSc 3.13+ (PetscSF "basic", read at v3.18.3: vscat.c,
 *                       sf/impls/basic/sfbasic.c, sfmpi.c, sfpack.c, sftype.c). Requests made
 *                       at the first scatter (PetscSFLinkGetMPIBuffersAndRequests).
 *     esm_scatter_begin   MPI_Comm_size (VecScatterBegin_Internal); the link lookup compares
 *                         the block unit with the link's duplicate of it (MPIPetsc_Type_compare:
 *                         one MPI_Type_free of the handle MPI_Type_get_contents returns, when
 *                         the unit is a block of more than one double); pack the sends, or, when
 *                         this rank's sends are one contiguous stretch of x (rootcontig), send
 *                         from x itself, freeing (MPI_Request_free) and re-making (MPI_Send_init)
 *                         the persistent sends whenever x is not the array they were made on;
 *                         one MPI_Startall for the receives, one for the sends (sfmpi.c).
 *     esm_scatter_end     MPI_Comm_size (VecScatterEnd_Internal); the lookup again (one more
 *                         MPI_Type_free, PetscSFLinkGetInUse); MPI_Waitall on the sends, then
 *                         on the receives; unpack.
 *     Calls made once (the link's MPI_Type_dup, PetscSFSetUp's rank exchange) are not
 *     mirrored.
 *
 * Work that needs no ghost (the local part of a matrix-vector product) goes between begin and
 * end, as PETSc's MatMult_MPIBAIJ does. On a rank without peers no MPI call is made, but for
 * a DM's scatter under sf (esm_scatter_kind: its bookkeeping and two MPI_Waitall on no
 * requests, as PETSc 3.18's DMGlobalToLocal on one rank).
 *
 *     esm_halo_spec *s = esm_halo_spec_new();
 *     esm_halo_spec_send(s, east, 4 * cell, 4);         // a cell's 4 unknowns the peer needs
 *     esm_halo_spec_recv(s, east, 4 * slot, 4);         // where the peer's cell lands in y
 *     esm_scatter *sc = esm_scatter_create(s, (esm_scatter_kind){ESM_SCATTER_VPSCAT, 4});
 *     esm_scatter_begin(sc, x); ... local work ...; esm_scatter_end(sc, ghosts);
 *
 * The core's counts (esm_counts) gain send_init/recv_init as requests are made, and per
 * scatter halo_updates, messages and bytes_sent, and each MPI_Startall and MPI_Waitall;
 * the calls esm_counts has no field for are counted by esm_scatter_counts. */
#ifndef ESM_SCATTER_H
#define ESM_SCATTER_H
#include "esm_halo.h"

typedef struct esm_scatter esm_scatter;

/* Which PETSc's ghost updates and reductions (above; esm_global_dots). */
typedef enum { ESM_SCATTER_VPSCAT, ESM_SCATTER_SF } esm_scatter_era;

/* What PETSc object a scatter stands for. */
typedef struct esm_scatter_kind {
    esm_scatter_era era;
    int block;       /* doubles per entry: PETSc's block size (a DMDA's dof); > 1 makes sf's
                        unit a derived type, whose compares free a handle */
    bool local_part; /* a DM's global-to-local scatter, which also copies within the rank: it
                        exists on a rank without peers (one rank), where under sf it still
                        makes its bookkeeping calls and MPI_Waitall on no requests; a matrix's
                        (false) does not exist there (a sequential matrix has none) */
} esm_scatter_kind;

/* The plan from `spec` (collective: every rank makes its plans in the same order); frees the
 * spec. A peer listed with sends but no receives (or the reverse) is allowed; local copies
 * and zero runs are not (they belong to a halo plan; a DM's local copy is the caller's). */
esm_scatter *esm_scatter_create(esm_halo_spec *spec, esm_scatter_kind kind);

/* Start the receives, pack and start each send. `x` must not change until esm_scatter_end. */
void esm_scatter_begin(esm_scatter *sc, const double *x);
/* Complete the receives and sends (by era), unpacking into `y`. */
void esm_scatter_end(esm_scatter *sc, double *y);
/* Both at once. */
void esm_scatter_update(esm_scatter *sc, const double *x, double *y);

int esm_scatter_peers(const esm_scatter *sc);   /* ranks this rank sends to */
long esm_scatter_bytes(const esm_scatter *sc);  /* bytes sent per scatter */
long esm_scatter_largest(const esm_scatter *sc); /* largest message sent, bytes */
void esm_scatter_free(esm_scatter *sc);

/* MPI calls issued by every scatter of this rank so far (alongside esm_counts). */
typedef struct esm_scatter_counts {
    long start, waitany;                  /* vpscat */
    long comm_size, type_free, request_free; /* sf: bookkeeping (scatters and dot products),
                                                stale direct sends freed */
} esm_scatter_counts;
esm_scatter_counts esm_scatter_counts_mine(void);

/* values[k] = the sum over ranks of values[k], k < n, in double: one MPI_Allreduce (what
 * PETSc's VecDot_MPI, VecMDot_MPI and VecNorm_MPI do). Under ESM_SCATTER_SF it is preceded by
 * MPI_Comm_size (PETSc 3.18's logging build wraps MPI_Allreduce in a macro, petsclog.h, that
 * asks PetscMPIParallelComm for the size; counted in esm_scatter_counts.comm_size), and a run
 * on one rank makes no call (PETSc's vectors on one rank are sequential: VecDot_Seq); under
 * ESM_SCATTER_VPSCAT it always makes the one call (the proxy's behaviour since the seed). Not
 * reproducible across rank counts; use esm_sum.h where bits matter. Collective. */
void esm_global_dots(double *values, int n, esm_scatter_era era);
#endif
