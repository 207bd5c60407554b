/* A known mix for tests/test_profiler_traces.py (4 ranks): per step a ring exchange (Irecv from
 * the left, Isend to the right, Waitall) inside the region "halo", nested in "step"; an
 * Allreduce, a Bcast from rank 1, a blocking Send/Recv pair; a region left open at the end. */
#include <mpi.h>
#include <stdio.h>

#define STEPS 5

int main(int argc, char **argv)
{
    int rank, size;
    double out[256] = {0}, in[256], sum = 0, one = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int step = 0; step < STEPS; step++) {
        MPI_Request req[2];
        MPI_Pcontrol(1, "step");
        MPI_Pcontrol(1, "halo");
        MPI_Irecv(in, 256, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(out, 128 + step, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, &req[1]);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        MPI_Pcontrol(-1, "halo");
        for (volatile int i = 0; i < 200000; i++)
            sum += 1e-9 * i;
        MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Pcontrol(-1, "step");
    }
    MPI_Bcast(out, 10, MPI_DOUBLE, 1, MPI_COMM_WORLD);
    if (rank == 0)
        MPI_Send(out, 3, MPI_DOUBLE, 1, 9, MPI_COMM_WORLD);
    if (rank == 1)
        MPI_Recv(in, 256, MPI_DOUBLE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Pcontrol(1, "tail");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return sum < 0;
}
