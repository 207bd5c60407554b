/* bench_driver.h: what redist-bench's driver files share: the run and store modes
 * (redist_bench.c), the store-scaling mode (bench_store_scaling.c), and the statistics, the
 * table and the result line (bench_output.c). The peers and fields share bench.h. */
#ifndef REDIST_BENCH_DRIVER_H
#define REDIST_BENCH_DRIVER_H
#include "bench.h"
#include "esm.h"

extern const char *const method_names[METHODS]; /* "ours", "copy", "alltoallw", "petsc", "mct" */

/* One method's figures over the repeats: store and run times (max over ranks), its check. */
typedef struct {
    int enabled, available, passed;
    char why[256];
    double store[MAX_REPEATS], run[MAX_REPEATS];
    double max_error;
} method_result;

/* What the route moves, summed (or the largest) over ranks. */
typedef struct {
    int64_t moved, messages, route_bytes_max, segments_max;
    int peers_max, single_copy;
} totals;

/* Min, median and max of n values. */
typedef struct {
    double min, median, max;
} spread;
spread spread_of(const double *v, int n);
/* "<path>.min", ".median", ".max", times scale. */
void put_spread(esm_result *r, const char *path, spread s, double scale);

/* Text rendered bit by bit (a JSON array, a list of objects) for esm_result_json. */
typedef struct {
    char *text;
    size_t length, size;
} text;
__attribute__((format(printf, 2, 3))) void text_add(text *t, const char *format, ...);

/* The machine's state: load, cores, ranks per node (oversubscribed when more than cores). */
typedef struct {
    double load;
    long cores;
    int node_ranks;
} machine;
machine machine_state(void); /* collective */

/* params.* (the command line), machine.*, a JSON array of values. */
void put_params(esm_result *r, const config *c);
void put_machine(esm_result *r, const machine *m);
void put_values(esm_result *r, const char *path, const double *v, int n);

/* A library call that failed: its message on stderr, then MPI_Abort. */
void bench_fatal(const char *what, int status);

/* Mode run or store: the table on rank 0's stdout and the result line; the exit status.
 * Collective. */
int report_run(const config *c, const machine *m, const method_result res[], const totals *all,
               int passed, double wall);
/* Mode store-scaling: rank 0 computes every rank's route of each layout; the exit status. */
int store_scaling(const config *c, const machine *m);
#endif
