/* A late sender, for the profiler's receive-wait figures (tests/test_efficiency.py).
 *
 * Rank 1 sleeps before each of its sends; rank 0 is already waiting:
 *   1. MPI_Recv            rank 0 blocks until rank 1 sends (after 50 ms)
 *   2. MPI_Irecv + MPI_Wait rank 0 posts, then blocks in MPI_Wait (after 50 ms)
 *   3. MPI_Isend + MPI_Wait rank 0 waits on a send only: not a receive wait
 * Then both ranks meet in one MPI_Barrier. Every other rank only takes part in the barrier.
 * So rank 0's receive wait is exactly 1 MPI_Recv and 1 MPI_Wait (of its 2 MPI_Wait calls), each
 * blocked for about the 50 ms rank 1 slept; rank 1's is its 1 MPI_Recv (of the reply to 3). */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    int rank, size, value = 0;
    MPI_Request request;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        fprintf(stderr, "prof_late_sender: needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0) {
        MPI_Recv(&value, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Irecv(&value, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        MPI_Isend(&value, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        sleep_ms(50);
        MPI_Send(&value, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        sleep_ms(50);
        MPI_Send(&value, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
        MPI_Recv(&value, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
