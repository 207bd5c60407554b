/* A late receiver for tests/test_eager.py: rank 0 sends BYTES to rank 1 at once, rank 1 waits
 * DELAY_US (simulated, smpi_usleep) before posting its receive; the other ranks only start and
 * finish. Ranks 0 and 1 each print one JSON line with the simulated time their call completed.
 * With `isend`, rank 0 sends with MPI_Isend and MPI_Wait (tests/test_host_overhead.py).
 *
 *     late_receiver BYTES DELAY_US [isend] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int bytes = argc > 1 ? atoi(argv[1]) : 8;
    int delay_us = argc > 2 ? atoi(argv[2]) : 1000;
    char *buffer = calloc(bytes > 0 ? bytes : 1, 1);
    double start = MPI_Wtime();
    if (rank == 0 && argc > 3 && strcmp(argv[3], "isend") == 0) {
        MPI_Request request;
        MPI_Isend(buffer, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        printf("{\"rank\": 0, \"send_done_s\": %.17g}\n", MPI_Wtime() - start);
    } else if (rank == 0) {
        MPI_Send(buffer, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
        printf("{\"rank\": 0, \"send_done_s\": %.17g}\n", MPI_Wtime() - start);
    } else if (rank == 1) {
        usleep(delay_us);
        MPI_Recv(buffer, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("{\"rank\": 1, \"recv_done_s\": %.17g}\n", MPI_Wtime() - start);
    }
    free(buffer);
    MPI_Finalize();
    return 0;
}
