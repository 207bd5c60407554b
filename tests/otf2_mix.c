/* A known mix for tests/test_export_otf2.py (4 ranks): a ring of MPI_Isend/MPI_Irecv on
 * MPI_COMM_WORLD (tag 7, 16 doubles) inside the region "ring"; MPI_Comm_split into even and odd
 * ranks, ordered backwards (key -rank: world rank 3 is rank 0 of the odd communicator, 1 its
 * rank 1), where rank 0 sends 5 ints to rank 1 with MPI_Send (tag 3), then an MPI_Allreduce on
 * that communicator and an MPI_Bcast from world rank 2. */
#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, size, half_rank;
    double out[16] = {0}, in[16];
    int ints[5] = {1, 2, 3, 4, 5}, sum = 1, total;
    MPI_Comm half;
    MPI_Request req[2];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Pcontrol(1, "ring");
    MPI_Irecv(in, 16, MPI_DOUBLE, (rank + size - 1) % size, 7, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(out, 16, MPI_DOUBLE, (rank + 1) % size, 7, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    MPI_Pcontrol(-1, "ring");
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    MPI_Comm_rank(half, &half_rank);
    if (half_rank == 0)
        MPI_Send(ints, 5, MPI_INT, 1, 3, half);
    else if (half_rank == 1)
        MPI_Recv(ints, 5, MPI_INT, 0, 3, half, MPI_STATUS_IGNORE);
    MPI_Allreduce(&sum, &total, 1, MPI_INT, MPI_SUM, half);
    MPI_Bcast(out, 2, MPI_DOUBLE, 2, MPI_COMM_WORLD);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return 0;
}
