/* A known mix of MPI calls for the profiler tests (tests/test_profiler_counts.py holds the
 * expected counts and bytes). Needs exactly 4 ranks. Every phase is deterministic in what it
 * sends; receives are posted larger than the messages, so only real receive bytes pass. */
#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int rank, size;
static MPI_Comm thread_comm;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "prof_test_c: rank %d: %s\n", rank, what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void blocking(void)      /* ring: 100 doubles to the right */
{
    double out[100] = {0}, in[200];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    if (rank % 2 == 0) {
        MPI_Send(out, 100, MPI_DOUBLE, right, 1, MPI_COMM_WORLD);
        MPI_Recv(in, 200, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(in, 200, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(out, 100, MPI_DOUBLE, right, 1, MPI_COMM_WORLD);
    }
}

static void nonblocking(void)   /* 3 ints into a 1000-int ANY_SOURCE receive; Waitany of 2 more */
{
    int out[3] = {1, 2, 3}, in[1000], a[8], b[8], two[4] = {0}, index;
    MPI_Request req[2];
    int right = (rank + 1) % size;
    MPI_Irecv(in, 1000, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(out, 3, MPI_INT, right, 2, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    MPI_Irecv(a, 8, MPI_INT, rank ^ 1, 3, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(b, 8, MPI_INT, rank ^ 1, 4, MPI_COMM_WORLD, &req[1]);
    MPI_Send(two, 4, MPI_INT, rank ^ 1, 3, MPI_COMM_WORLD);
    MPI_Send(two, 4, MPI_INT, rank ^ 1, 4, MPI_COMM_WORLD);
    for (int i = 0; i < 2; i++)
        MPI_Waitany(2, req, &index, MPI_STATUS_IGNORE);
}

static void persistent(void)    /* 5 doubles to the right: 3 Startall rounds, 2 Start rounds */
{
    double out[5] = {0}, in[10];
    MPI_Request req[2];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Recv_init(in, 10, MPI_DOUBLE, left, 5, MPI_COMM_WORLD, &req[0]);
    MPI_Send_init(out, 5, MPI_DOUBLE, right, 5, MPI_COMM_WORLD, &req[1]);
    for (int it = 0; it < 3; it++) {
        MPI_Startall(2, req);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    }
    for (int it = 0; it < 2; it++) {
        MPI_Start(&req[0]);
        MPI_Start(&req[1]);
        MPI_Wait(&req[1], MPI_STATUS_IGNORE);
        MPI_Wait(&req[0], MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&req[0]);
    MPI_Request_free(&req[1]);
}

static void collectives(void)
{
    double v[10] = {0};
    int r[4] = {0}, g[8] = {0};
    char bytes[7] = {0};
    MPI_Allreduce(MPI_IN_PLACE, v, 10, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        MPI_Reduce(MPI_IN_PLACE, r, 4, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    else
        MPI_Reduce(r, NULL, 4, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) /* sendcount/sendtype are ignored at the root: counting them would be wrong */
        MPI_Gather(MPI_IN_PLACE, 123456, MPI_DOUBLE, g, 2, MPI_INT, 0, MPI_COMM_WORLD);
    else
        MPI_Gather(g, 2, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(bytes, 7, MPI_BYTE, 1, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void neighbours(void) /* periodic ring: 2 neighbours each */
{
    int dims[1] = {size}, periods[1] = {1}, one = rank, got[2];
    double three[6] = {0}, back[6];
    MPI_Comm ring;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    MPI_Neighbor_allgather(&one, 1, MPI_INT, got, 1, MPI_INT, ring);
    MPI_Neighbor_alltoall(three, 3, MPI_DOUBLE, back, 3, MPI_DOUBLE, ring);
    MPI_Comm_free(&ring);
}

static void split(void) /* even and odd halves; a 16-byte exchange inside each */
{
    MPI_Comm half;
    int one = 1, sum = 0, sub;
    char out[16] = {0}, in[32];
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Comm_set_name(half, "halves");
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, half);
    check(sum == 2, "split sum");
    MPI_Comm_rank(half, &sub);
    MPI_Sendrecv(out, 16, MPI_CHAR, 1 - sub, 6, in, 32, MPI_CHAR, 1 - sub, 6, half,
                 MPI_STATUS_IGNORE);
    MPI_Comm_free(&half);
}

static void probes(void) /* 24 bytes to the partner, received by Mprobe + Mrecv */
{
    char out[24] = {0}, in[64];
    MPI_Message msg;
    MPI_Status st;
    MPI_Request req;
    MPI_Isend(out, 24, MPI_CHAR, rank ^ 1, 9, MPI_COMM_WORLD, &req);
    MPI_Mprobe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &msg, &st);
    MPI_Mrecv(in, 64, MPI_CHAR, &msg, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
}

static void file_io(const char *dir) /* 100 ints written at my offset, the right's read back */
{
    char path[4096];
    int out[100] = {0}, in[100];
    MPI_File fh;
    snprintf(path, sizeof path, "%s/prof_test_c.mpiio", dir);
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_write_at_all(fh, (MPI_Offset)rank * sizeof out, out, 100, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_File_read_at(fh, (MPI_Offset)((rank + 1) % size) * sizeof in, in, 100, MPI_INT,
                     MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
}

static void one_sided(void) /* 10 doubles put to the right, 5 got from the left */
{
    double window[20] = {0}, out[10] = {0}, in[5];
    MPI_Win win;
    MPI_Win_create(window, sizeof window, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    MPI_Put(out, 10, MPI_DOUBLE, (rank + 1) % size, 0, 10, MPI_DOUBLE, win);
    MPI_Get(in, 5, MPI_DOUBLE, (rank + size - 1) % size, 10, 5, MPI_DOUBLE, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
}

static void *thread_body(void *arg) /* 10 x 8 bytes to and from the partner per thread */
{
    int tag = 100 + (int)(long)arg;
    double out = 1.0, in = 0.0;
    for (int i = 0; i < 10; i++)
        MPI_Sendrecv(&out, 1, MPI_DOUBLE, rank ^ 1, tag, &in, 1, MPI_DOUBLE, rank ^ 1, tag,
                     thread_comm, MPI_STATUS_IGNORE);
    return NULL;
}

static void threads(void)
{
    pthread_t t[2];
    MPI_Comm_dup(MPI_COMM_WORLD, &thread_comm);
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, thread_body, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    MPI_Comm_free(&thread_comm);
}

static void disk(const char *dir) /* 1000 bytes written, then read back */
{
    char path[4096], buf[1000] = {0};
    snprintf(path, sizeof path, "%s/prof_test_c.%d.dat", dir, rank);
    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
    check(fd >= 0, "open scratch file");
    check(write(fd, buf, sizeof buf) == (ssize_t)sizeof buf, "write");
    check(pread(fd, buf, sizeof buf, 0) == (ssize_t)sizeof buf, "pread");
    close(fd);
    unlink(path);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check(size == 4, "run with 4 ranks");
    check(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided");
    blocking();
    nonblocking();
    persistent();
    collectives();
    neighbours();
    split();
    probes();
    threads();
    disk(argc > 1 ? argv[1] : ".");
    file_io(argc > 1 ? argv[1] : ".");
    one_sided();
    MPI_Finalize();
    return 0;
}
