/* esm_group.h: processor sets, so that one program runs several models side by side (CESM's
 * components each on their own set of processors, the coupler on another or the same).
 *
 * A group is a contiguous range of world ranks. Between esm_group_enter and esm_group_leave,
 * everything the core does works on the group's communicator: esm_rank/esm_ranks are the
 * place in the group, decompositions are cut over its ranks, halo plans and exchanges,
 * reproducible sums, barriers and esm_fail are among its ranks. Compute code stays free of MPI:
 *
 *     esm_group *ocean = esm_group_create(first, count);  // collective over the current set
 *     if (esm_group_member(ocean)) {
 *         esm_group_enter(ocean);
 *         esm_decomp_create(&d, &params);   // cut over the ocean's ranks
 *         ... esm_halo_update, esm_global_sum, esm_barrier: among the ocean's ranks ...
 *         esm_group_leave();
 *     }
 *
 * Plans (halo, scatter, rearranger) belong to the communicator current when they were made:
 * run them inside the same group. Groups nest (enter inside enter) up to 8 deep. Bad input
 * should be found before entering a group: esm_fail inside a group ends that group's ranks only.
 *
 * Also here: the small broadcast a coupled model's driver sends each coupling interval (the
 * clock and shared "infodata"), counted, on the current communicator. */
#ifndef ESM_GROUP_H
#define ESM_GROUP_H
#include <stdbool.h>

typedef struct esm_group esm_group;

/* The group of ranks [first, first + count) of the current communicator (collective over it:
 * one MPI_Comm_split). Ranks outside get a group they are not a member of. */
esm_group *esm_group_create(int first, int count);
bool esm_group_member(const esm_group *g);
int esm_group_size(const esm_group *g);
int esm_group_first(const esm_group *g); /* its first rank, in the communicator it was made in */
void esm_group_enter(const esm_group *g); /* members only */
void esm_group_leave(void);
void esm_group_free(esm_group *g);

/* `bytes` bytes from rank `root` of the current communicator to all its ranks (MPI_Bcast). */
void esm_broadcast(void *data, int bytes, int root);

/* MPI operations issued here (alongside esm_counts): broadcasts, communicator splits. */
typedef struct esm_group_counts {
    long bcast, comm_split;
} esm_group_counts;
esm_group_counts esm_group_counts_mine(void);
#endif
