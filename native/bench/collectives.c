/* Mean time of the collectives the `offload` knob takes into the network (docs/simulate.md,
 * "Collective offload"), each checked against its known answer: MPI_Barrier, and 8 bytes per
 * rank of MPI_Bcast, MPI_Reduce, MPI_Allreduce, MPI_Allgather and MPI_Allgatherv. One
 * synchronising barrier, then ITERS calls of each; prints one JSON line with the mean time per
 * call (us), the mean time from the last rank's arrival to rank 0's return (us, "after_last")
 * and whether every answer was right. Under SimGrid each call can follow COMPUTE_US of
 * computation charged to the rank (smpi_execute: what OS noise delays).
 *
 *     collectives [ITERS [COMPUTE_US]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef ESM_SMPI
#include <smpi/smpi.h>
#endif

enum { OPS = 6 };
static const char *const names[OPS] = {"barrier",   "bcast",     "reduce",
                                       "allreduce", "allgather", "allgatherv"};

/* One call of collective `op`; 1 if its answer is right. */
static int collective(int op, int rank, int size, double *all, int *counts, int *displs)
{
    double value = rank + 1, result = 0;
    switch (op) {
    case 0:
        return MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS;
    case 1:
        result = rank == 0 ? 42 : 0;
        MPI_Bcast(&result, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        return result == 42;
    case 2:
        MPI_Reduce(&value, &result, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        return rank != 0 || result == size * (size + 1) / 2.0;
    case 3:
        MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        return result == size * (size + 1) / 2.0;
    case 4:
        MPI_Allgather(&value, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, MPI_COMM_WORLD);
        break;
    default:
        MPI_Allgatherv(&value, 1, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
        break;
    }
    int right = 1;
    for (int r = 0; r < size; r++)
        right &= all[op == 4 ? r : displs[r]] == r + 1;
    return right;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 100;
    double compute_s = argc > 2 ? atof(argv[2]) * 1e-6 : 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double *all = calloc(2 * (size_t)size, sizeof *all);
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; r++) { /* allgatherv: each rank's value in a gap of one */
        counts[r] = 1;
        displs[r] = 2 * r;
    }
    double mean_us[OPS], after_last_us[OPS];
    double *enter = calloc((size_t)iters + 1, sizeof *enter),
           *leave = calloc((size_t)iters + 1, sizeof *leave);
    int right = iters > 0;
    for (int op = 0; op < OPS; op++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
#ifdef ESM_SMPI
            if (compute_s > 0)
                smpi_execute(compute_s);
#endif
            enter[i] = MPI_Wtime();
            right &= collective(op, rank, size, all, counts, displs);
            leave[i] = MPI_Wtime();
        }
        mean_us[op] = (MPI_Wtime() - t) / (iters > 0 ? iters : 1) * 1e6;
        MPI_Allreduce(MPI_IN_PLACE, enter, iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        double after_last = 0;
        for (int i = 0; i < iters; i++)
            after_last += leave[i] - enter[i];
        after_last_us[op] = after_last / (iters > 0 ? iters : 1) * 1e6;
    }
    int all_right;
    MPI_Allreduce(&right, &all_right, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("{\"ranks\": %d, \"iters\": %d, \"right\": %s, \"us\": {", size, iters,
               all_right ? "true" : "false");
        for (int op = 0; op < OPS; op++)
            printf("%s\"%s\": %.9g", op ? ", " : "", names[op], mean_us[op]);
        printf("}, \"after_last_us\": {");
        for (int op = 0; op < OPS; op++)
            printf("%s\"%s\": %.9g", op ? ", " : "", names[op], after_last_us[op]);
        printf("}}\n");
    }
    free(enter);
    free(leave);
    free(all);
    free(counts);
    free(displs);
    MPI_Finalize();
    return 0;
}
