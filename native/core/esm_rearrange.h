/* esm_rearrange.h: move a bundle of fields between two decompositions given as lists of global
 * indices, the way MCT's Rearranger moves attribute vectors between component and coupler
 * decompositions (CESM's cpl7), and gather the columns a sparse-matrix map needs.
 *
 * Each rank lists the global indices of the elements it holds on the source side (each index
 * held by exactly one rank) and of those it wants on the destination side (an index may be
 * wanted by several ranks, or several times: a gather with copies). Ranks outside a model pass
 * empty lists. The lists are allgathered once when the plan is made (MCT replicates its global
 * segment maps the same way), so every rank works out what it sends to and receives from whom,
 * with no further agreement. Per rearrangement, on this rank:
 *
 *   MPI_Irecv from every source peer, then for every destination peer: pack all fields of it
 *   into one message and MPI_Isend it; copy what stays on the rank; then complete the receives
 *   one by one with MPI_Wait, unpacking each as it is completed, and the sends with one
 *   MPI_Waitall. A rank with no peers makes no MPI call.
 *
 * A plan belongs to the communicator current when it was made (esm_group.h). The core's counts
 * (esm_counts) gain the irecv, isend and waitall calls; MPI_Wait, messages and bytes, which
 * esm_counts keeps for halos, are counted by esm_rearrange_counts. */
#ifndef ESM_REARRANGE_H
#define ESM_REARRANGE_H

typedef struct esm_rearranger esm_rearranger;

/* The plan for `nfields` fields over a global index space of `npoints` elements: this rank
 * holds src_global[q] at element q of each source field (nsrc elements) and wants
 * dst_global[q] at element q of each destination field (ndst elements). Collective over the
 * current communicator (one MPI_Allgather, two MPI_Allgatherv). An index out of range, held
 * twice or wanted but held by nobody ends the run with a message (every rank sees it). */
esm_rearranger *esm_rearranger_create(long npoints, long nsrc, const long *src_global, long ndst,
                                      const long *dst_global, int nfields);

/* Move: dst[f][q] = the source value of dst_global[q] in field f, for f < nfields. */
void esm_rearrange(esm_rearranger *r, const double *const src[], double *const dst[]);

int esm_rearranger_send_peers(const esm_rearranger *r); /* other ranks sent to */
int esm_rearranger_recv_peers(const esm_rearranger *r); /* other ranks received from */
long esm_rearranger_bytes(const esm_rearranger *r);    /* bytes sent to other ranks per move */
void esm_rearranger_free(esm_rearranger *r);

/* MPI operations and traffic of this rank's rearrangements so far. */
typedef struct esm_rearrange_counts {
    long rearranges, messages, bytes_sent, wait, allgather, allgatherv;
} esm_rearrange_counts;
esm_rearrange_counts esm_rearrange_counts_mine(void);
#endif
