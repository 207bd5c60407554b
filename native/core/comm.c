/* The communicator: MPI start/stop, clean exits, counted operations. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "esm_internal.h"
#include "esm_rank_state.h"

/* `world` is the whole run; `current` the communicator the core works on (the world, or a
 * processor set entered with esm_group_enter, group.c), with this rank's place in it. */
typedef struct {
    MPI_Comm world, current;
    int rank, ranks; /* in the world */
    int current_rank, current_ranks;
    const char *program;
    esm_counts counts;
} comm_state;
ESM_RANK_STATE(comm_state, comm, .program = "esm")

void esm_init(int *argc, char ***argv, const char *program)
{
    MPI_Init(argc, argv);
    comm_state *c = comm();
    MPI_Comm_dup(MPI_COMM_WORLD, &c->world);
    MPI_Comm_rank(c->world, &c->rank);
    MPI_Comm_size(c->world, &c->ranks);
    esm_comm_set_current(c->world, c->rank, c->ranks);
    c->program = program;
    esm_fold_setup();
}

int esm_rank(void)
{
    return comm()->current_rank;
}
int esm_ranks(void)
{
    return comm()->current_ranks;
}
const char *esm_program(void)
{
    return comm()->program;
}
MPI_Comm esm_comm_current(void)
{
    return comm()->current;
}
MPI_Comm esm_comm_world(void)
{
    return comm()->world;
}

void esm_comm_set_current(MPI_Comm c, int rank, int ranks)
{
    comm_state *s = comm();
    s->current = c;
    s->current_rank = rank;
    s->current_ranks = ranks;
}
esm_counts *esm_counts_writable(void)
{
    return &comm()->counts;
}
const esm_counts *esm_counts_mine(void)
{
    return &comm()->counts;
}

_Noreturn void esm_exit(int status)
{
    fflush(stdout);
    fflush(stderr);
    MPI_Finalize();
    exit(status);
}

static void print_error(const char *format, va_list args)
{
    fprintf(stderr, "%s: error: ", comm()->program);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
}

_Noreturn void esm_fail(const char *format, ...)
{
    if (comm()->current_rank == 0) {
        va_list args;
        va_start(args, format);
        print_error(format, args);
        va_end(args);
    }
    esm_exit(ESM_EXIT_BAD_INPUT);
}

void esm_fail_if_any(bool bad, const char *format, ...)
{
    comm_state *c = comm();
    int mine = bad ? c->current_rank : c->current_ranks, lowest;
    MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, c->current);
    c->counts.allreduce++;
    if (lowest == c->current_ranks)
        return;
    if (c->current_rank == lowest) {
        va_list args;
        va_start(args, format);
        print_error(format, args);
        va_end(args);
    }
    esm_exit(ESM_EXIT_BAD_INPUT);
}

void esm_say(const char *format, ...)
{
    if (comm()->rank != 0)
        return;
    va_list args;
    va_start(args, format);
    vprintf(format, args);
    va_end(args);
}

void esm_barrier(void)
{
    MPI_Barrier(comm()->current);
    comm()->counts.barrier++;
}

void esm_allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op)
{
    MPI_Allreduce(in, out, count, type, op, comm()->current);
    comm()->counts.allreduce++;
}

esm_counts esm_counts_total(void)
{
    esm_counts *c = &comm()->counts;
    c->allreduce++; /* this reduction itself */
    long mine[] = {c->isend,        c->irecv,    c->send_init, c->recv_init,
                   c->startall,     c->waitall,  c->allreduce, c->barrier,
                   c->halo_updates, c->messages, c->bytes_sent};
    long sum[11];
    MPI_Allreduce(mine, sum, 11, MPI_LONG, MPI_SUM, comm()->world);
    return (esm_counts){sum[0], sum[1], sum[2], sum[3], sum[4], sum[5],
                        sum[6], sum[7], sum[8], sum[9], sum[10]};
}

static _Noreturn void out_of_memory(size_t bytes)
{
    fprintf(stderr,
            "%s: error: rank %d cannot allocate %zu bytes: use a smaller --size or more "
            "ranks\n",
            comm()->program, comm()->rank, bytes);
    MPI_Abort(comm()->world ? comm()->world : MPI_COMM_WORLD, ESM_EXIT_BAD_INPUT);
    exit(ESM_EXIT_BAD_INPUT);
}

void *esm_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        out_of_memory(bytes);
    return p;
}

void *esm_calloc(size_t count, size_t size)
{
    size_t bytes = count * size;
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0)
        out_of_memory(bytes);
    memset(p, 0, bytes);
    return p;
}

void *esm_realloc(void *pointer, size_t bytes)
{
    void *p = realloc(pointer, bytes ? bytes : 1);
    if (!p)
        out_of_memory(bytes);
    return p;
}
