/* Runs that never finish by themselves (but `done`), for the interrupted-run tests
 * (tests/test_profile_interrupted.py, benchmarks/interrupted_runs.py):
 *   loop      every rank calls MPI_Allreduce and MPI_Sendrecv in a ring until it is killed;
 *   wait N    N MPI_Allreduce calls and one MPI_Barrier, then every rank waits in MPI_Recv for a
 *             message no one sends, inside the region "timed" (MPI_Pcontrol);
 *   hang N    as `wait`, except that rank 0 goes on to MPI_Finalize (a rank that gave up in
 *             set-up, its peers left waiting for it);
 *   fail N    as `wait`, except that rank 0 exits with status 3 without MPI_Finalize;
 *   done N    as `wait` up to the wait, then MPI_Finalize: the run ends (its unprofiled
 *             repetitions in tests/test_study_interrupted.py).
 * Each rank prints "rank R ready" once it is past its counted calls. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, sum = 0, one = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "loop";
    int calls = argc > 2 ? atoi(argv[2]) : 3;
    if (strcmp(mode, "loop") == 0) {
        int right = (rank + 1) % size, left = (rank + size - 1) % size, out = rank, in = -1;
        for (long step = 0;; step++) {
            MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            MPI_Sendrecv(&out, 1, MPI_INT, right, 0, &in, 1, MPI_INT, left, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            if (step == 10) {
                printf("rank %d ready\n", rank);
                fflush(stdout);
            }
        }
    }
    for (int i = 0; i < calls; i++)
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d ready\n", rank);
    fflush(stdout);
    if (strcmp(mode, "done") == 0 || (strcmp(mode, "hang") == 0 && rank == 0)) {
        MPI_Finalize();
        return 0;
    }
    if (strcmp(mode, "fail") == 0 && rank == 0)
        exit(3);
    if (strcmp(mode, "wait") == 0)
        MPI_Pcontrol(1, "timed");
    int never;
    MPI_Recv(&never, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
