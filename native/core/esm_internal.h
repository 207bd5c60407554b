/* esm_internal.h: what the core's own files share; never included by workloads. */
#ifndef ESM_INTERNAL_H
#define ESM_INTERNAL_H
#include <mpi.h>
#include "esm_comm.h"
#include "esm_timer.h"

MPI_Comm esm_world(void);
esm_counts *esm_counts_writable(void);

/* One counted MPI_Allreduce on the world communicator. */
void esm_allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op);
#endif
