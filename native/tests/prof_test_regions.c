/* Regions with a known mix of MPI calls, nested and unbalanced (tests/test_profiler_regions.py):
 *
 *   outer                 Barrier
 *     outer/inner (x2)    3 Allreduce of 1 int, a ring Isend/Irecv of 2 ints and a Waitall;
 *                         then (second visit) a Bcast of 1 int from rank 0
 *   end of "nothing"      never begun: end_without_begin
 *   a / a/b               an Allreduce inside b; a ends while b is open: end_not_innermost
 *   Pcontrol(0), Pcontrol(1) with an unreadable and with a non-printable name: ignored levels
 *   left_open             a Barrier, still open at MPI_Finalize: open_at_end
 * Through esmprof_api.h, so the same calls are MPI_Pcontrol(+-1, name). */
#include <mpi.h>

#include "esmprof_api.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, one = 1, sum = 0, out[2] = {1, 2}, in[2];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    esmprof_region_begin("outer");
    MPI_Barrier(MPI_COMM_WORLD);
    esmprof_region_begin("inner");
    for (int i = 0; i < 3; i++)
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Request req[2];
    MPI_Irecv(in, 2, MPI_INT, (rank + size - 1) % size, 7, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(out, 2, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    esmprof_region_end("inner");
    esmprof_region_begin("inner");
    MPI_Bcast(&one, 1, MPI_INT, 0, MPI_COMM_WORLD);
    esmprof_region_end("inner");
    esmprof_region_end("outer");

    esmprof_region_end("nothing");
    esmprof_region_begin("a");
    esmprof_region_begin("b");
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    esmprof_region_end("a");

    MPI_Pcontrol(0);
    MPI_Pcontrol(1, (const char *)16);      /* no readable name */
    MPI_Pcontrol(1, "\001bad");             /* not printable */

    esmprof_region_begin("left_open");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
