/* Communicators told apart by their members, and completion calls' time charged to the
 * communicator of the requests they complete (tests/test_profiler_comms.py). Run on 4 ranks,
 * as one program or as two (MPMD: `mpirun -np 2 prof_comms ocean : -np 2 prof_comms atmos`).
 *
 *   1. local: MPI_Comm_split of the world by MPI_APPNUM, as coupled models do (OASIS): two
 *      communicators {0,1} and {2,3} made by the same call when run as two programs. Region
 *      "local": N rounds of MPI_Irecv + MPI_Isend with the partner, MPI_Waitall of both; every
 *      request is local's, so all the Waitall time is local's.
 *   2. MPI_Cart_create 2 x 2 of the world (no reorder), MPI_Cart_sub into rows {0,1} {2,3} and
 *      columns {0,2} {1,3}: four communicators of size 2 made by the same call.
 *   3. Region "mixed": M rounds of MPI_Ibarrier on the column and MPI_Ibcast, MPI_Iallreduce,
 *      MPI_Ialltoall on the row, one MPI_Waitall of the four requests: the column gets 1/4 of its
 *      time, the row 3/4, each counts the call once.
 * The communicators are not freed: MPI_Comm_free would count on them too. */
#include <mpi.h>
#include <stdio.h>

#define N 10
#define M 10

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, *appnum = NULL, flag = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4) {
        fprintf(stderr, "prof_comms: run on 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    MPI_Comm local;
    MPI_Comm_split(MPI_COMM_WORLD, flag && appnum ? *appnum : 0, rank, &local);
    int me, out = rank, in = -1;
    MPI_Pcontrol(1, "local"); /* every call in the region is on local */
    MPI_Comm_rank(local, &me);
    int partner = me ^ 1;
    for (int i = 0; i < N; i++) {
        MPI_Request reqs[2];
        MPI_Irecv(&in, 1, MPI_INT, partner, 7, local, &reqs[0]);
        MPI_Isend(&out, 1, MPI_INT, partner, 7, local, &reqs[1]);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    }
    MPI_Pcontrol(-1, "local");

    int dims[2] = {2, 2}, periods[2] = {0, 0}, keep_row[2] = {0, 1}, keep_column[2] = {1, 0};
    MPI_Comm cart, row, column;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Cart_sub(cart, keep_row, &row);
    MPI_Cart_sub(cart, keep_column, &column);
    MPI_Pcontrol(1, "mixed");
    for (int i = 0; i < M; i++) {
        int value = rank, sum = 0, to[2] = {rank, rank}, from[2];
        MPI_Request reqs[4];
        MPI_Ibarrier(column, &reqs[0]);
        MPI_Ibcast(&value, 1, MPI_INT, 0, row, &reqs[1]);
        MPI_Iallreduce(&out, &sum, 1, MPI_INT, MPI_SUM, row, &reqs[2]);
        MPI_Ialltoall(to, 1, MPI_INT, from, 1, MPI_INT, row, &reqs[3]);
        MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
    }
    MPI_Pcontrol(-1, "mixed");
    MPI_Finalize();
    return in == -1;
}
