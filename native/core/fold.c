/* Folded simulation and the node model (esm_fold.h). Everything SimGrid-specific is here,
 * behind ESM_SMPI (set by CMake for the smpi stack); other builds get the pass-through. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "esm_fold.h"
#include "esm_internal.h"
#include "esm_rank_state.h"
#include "esm_result.h"

#ifdef ESM_SMPI
#include <smpi/smpi.h>
#undef clock_gettime /* smpi_helpers.h makes it the simulated clock: kernels need the real one */
#endif

struct esm_kernel_model {
    long samples;          /* calls timed so far, over every rank */
    double seconds, points; /* their measured time and work */
    /* every call of every rank, run or charged (ESM_KERNEL_REPORT=1) */
    const char *name;
    double calls, work, flops, bytes;
    struct esm_kernel_model *next; /* the models in the order their kernels first ran */
};

/* How this run treats kernels, read once from the environment. */
typedef enum { KERNELS_RUN, KERNELS_ACCOUNTED } kernel_mode;

/* What a rank keeps of a kernel (its declaration, esm_kernel, is read-only and every rank's). */
typedef struct kernel_state {
    const esm_kernel *kernel; /* the key */
    struct esm_kernel_model *model;
    double points, bytes, call_flops, started; /* of the call running */
    long calls;                                /* this rank's calls so far */
    bool warming_up; /* this call is the rank's first: run, charged, not sampled */
} kernel_state;

/* How this run treats kernels (read once from the environment) and what folding did on this
 * rank. */
typedef struct {
    bool ready, folded;
    enum { COST_MEASURED, COST_MODEL, COST_OFF } cost;
    kernel_mode mode;
    int node_ranks;        /* ranks on this rank's node */
    double node_bandwidth; /* bytes/s of a node, 0: no memory term */
    double core_speed;     /* relative to this machine */
    double core_flops;     /* a core's peak flops/s at its clock, 0: no in-core term */
    double file_system;    /* bytes/s one rank reads from the shared file system, 0: none */
    long samples;          /* calls timed per kernel before it is charged unrun */
    long fields;           /* this rank's esm_field_alloc calls so far */
    bool shared_owned;
    bool kernel_report; /* ESM_KERNEL_REPORT=1: each kernel's totals in the result line */
    esm_fold_counts counts;
    /* this rank's kernels by their declaration's address (open addressing, at most half full) */
    kernel_state **kernels;
    size_t kernel_slots, kernel_count;
} fold_state;
ESM_RANK_STATE(fold_state, fold)

static double env_real(const char *name, double fallback, double low)
{
    const char *text = getenv(name);
    if (!text || !*text)
        return fallback;
    char *end;
    double value = strtod(text, &end);
    if (*end || !(value >= low))
        esm_fail("%s=%s: expected a number >= %g (set by esmperf's smpi knobs)", name, text, low);
    return value;
}

/* This rank's folding state, read from the environment at its first use. */
static fold_state *setup(void)
{
    fold_state *f = fold();
    if (f->ready)
        return f;
    f->ready = true;
    f->folded = env_real("ESM_FOLD", 0, 0) != 0;
    double per_node = env_real("ESM_NODE_RANKS", 0, 0);
    f->node_bandwidth = env_real("ESM_NODE_BANDWIDTH", 0, 0);
    f->core_speed = env_real("ESM_CORE_SPEED", 1, 1e-6);
    f->core_flops = env_real("ESM_CORE_FLOPS", 0, 0);
    f->file_system = env_real("ESM_FILE_SYSTEM_BANDWIDTH", 0, 0);
    f->samples = (long)env_real("ESM_KERNEL_SAMPLES", 3, 1);
    f->kernel_report = env_real("ESM_KERNEL_REPORT", 0, 0) != 0;
    const char *cost = getenv("ESM_KERNEL_COST");
    if (cost && *cost && strcmp(cost, "measured") && strcmp(cost, "model") && strcmp(cost, "off"))
        esm_fail("ESM_KERNEL_COST=%s: expected measured, model or off", cost);
    f->cost = !cost || !*cost ? COST_MEASURED : !strcmp(cost, "model") ? COST_MODEL : COST_OFF;
#ifndef ESM_SMPI
    if (f->folded)
        esm_fail("folding (ESM_FOLD=1) needs the simulator: run on the smpi stack "
                 "(esmperf simulate ... --fold on)");
    f->folded = false;
    f->mode = KERNELS_RUN;
#else
    bool node_model = per_node > 0 || f->node_bandwidth > 0 || f->core_speed != 1 ||
                      f->core_flops > 0 || f->cost == COST_MODEL;
    f->mode = f->folded || node_model ? KERNELS_ACCOUNTED : KERNELS_RUN;
#endif
    int rank, ranks;
    MPI_Comm_rank(esm_comm_world(), &rank);
    MPI_Comm_size(esm_comm_world(), &ranks);
    int rpn = per_node > 0 ? (int)per_node : ranks;
    int node = rank / rpn;
    f->node_ranks = ranks - node * rpn < rpn ? ranks - node * rpn : rpn;
    return f;
}

void esm_fold_setup(void)
{
    setup();
}

bool esm_folded(void)
{
    return setup()->folded;
}

bool esm_file_system_modelled(void)
{
#ifdef ESM_SMPI
    return setup()->file_system > 0;
#else
    return false;
#endif
}

void esm_file_system_read(double bytes)
{
    fold_state *f = setup();
    if (!esm_file_system_modelled())
        esm_fail("a read from the simulated file system needs one: the smpi knob file_system "
                 "(esmperf simulate ... --file-system nfs-low)");
#ifdef ESM_SMPI
    double seconds = bytes / f->file_system;
    smpi_bench_end();
    f->counts.file_system_seconds += seconds;
    f->counts.file_system_bytes += bytes;
    if (seconds > 0)
        smpi_execute(seconds);
    smpi_bench_begin();
#else
    (void)f, (void)bytes;
#endif
}

bool esm_kernel_cost_modelled(void)
{
    fold_state *f = setup();
    return f->mode == KERNELS_ACCOUNTED && f->cost == COST_MODEL && f->core_flops > 0 &&
           f->node_bandwidth > 0;
}

const esm_fold_counts *esm_fold_counts_mine(void)
{
    return &fold()->counts;
}

static void *shared_get(const char *name, const char *key);
static void shared_set(const char *name, const char *key, void *value);

/* The kernels' models, shared by every rank (each rank's own list would see only the kernels
 * it ran first): a list head made once. */
static struct esm_kernel_model **kernel_models(void)
{
    struct esm_kernel_model **head = shared_get("esm_kernel_list", "head");
    if (!head) {
        head = esm_calloc(1, sizeof *head);
        shared_set("esm_kernel_list", "head", head);
    }
    return head;
}

/* Each kernel's calls, work, flops and bytes over every rank (after the ranks' last kernel:
 * esm_fold_report's reductions have waited for them), at "fold.kernels.<name>". */
static void kernel_report(struct esm_result *r)
{
    if (esm_rank() != 0)
        return;
    const char *fields[] = {"calls", "work", "flops", "bytes"};
    for (struct esm_kernel_model *m = *kernel_models(); m; m = m->next) {
        double values[] = {m->calls, m->work, m->flops, m->bytes};
        for (int f = 0; f < 4; f++) {
            char path[256];
            snprintf(path, sizeof path, "fold.kernels.%s.%s", m->name, fields[f]);
            esm_result_real(r, path, values[f]);
        }
    }
}

void esm_fold_report(struct esm_result *r)
{
    const fold_state *f = fold();
    if (f->mode == KERNELS_RUN)
        return;
    long mine[4] = {f->counts.kernel_calls_run, f->counts.kernel_calls_charged,
                    f->counts.field_bytes, f->counts.field_bytes_held},
         sum[4];
    double seconds[3] = {f->counts.kernel_seconds, -f->counts.kernel_seconds,
                         f->counts.skipped_seconds},
           extreme[3], flops;
    MPI_Reduce(mine, sum, 4, MPI_LONG, MPI_SUM, 0, esm_comm_world());
    MPI_Reduce(&f->counts.kernel_flops, &flops, 1, MPI_DOUBLE, MPI_SUM, 0, esm_comm_world());
    MPI_Reduce(seconds, extreme, 3, MPI_DOUBLE, MPI_MAX, 0, esm_comm_world());
    esm_result_bool(r, "fold.folded", f->folded);
    esm_result_int(r, "fold.kernel_calls_run", sum[0]);
    esm_result_int(r, "fold.kernel_calls_charged", sum[1]);
    esm_result_real(r, "fold.kernel_seconds_max", extreme[0]);
    esm_result_real(r, "fold.kernel_seconds_min", -extreme[1]);
    esm_result_int(r, "fold.field_bytes", sum[2]); /* over all ranks */
    esm_result_int(r, "fold.field_bytes_held", sum[3]);
    if (extreme[2] > 0)
        esm_result_real(r, "fold.skipped_seconds_max", extreme[2]);
    esm_result_int(r, "fold.node_ranks", f->node_ranks);
    esm_result_real(r, "fold.node_bandwidth", f->node_bandwidth);
    esm_result_real(r, "fold.core_speed", f->core_speed);
    esm_result_real(r, "fold.core_flops", f->core_flops);
    esm_result_real(r, "fold.kernel_flops", flops); /* over all ranks */
    const char *costs[] = {"measured", "model", "off"};
    esm_result_text(r, "fold.kernel_cost", costs[f->cost]);
    if (f->kernel_report)
        kernel_report(r);
}

const esm_fold_history *esm_fold_history_nearest(const esm_fold_history *histories, int n,
                                                 const char *deck, const char *options, int ranks)
{
    const esm_fold_history *best = NULL;
    double best_distance = 0;
    for (int k = 0; k < n; k++) {
        if (strcmp(histories[k].deck, deck) || strcmp(histories[k].options, options))
            continue;
        double distance = fabs(log((double)histories[k].ranks / ranks));
        if (!best || distance < best_distance - 1e-12 ||
            (distance < best_distance + 1e-12 && histories[k].ranks < best->ranks))
            best = &histories[k], best_distance = distance;
    }
    return best;
}

int esm_fold_history_step(const esm_fold_history *h, long step, int *counts, int max)
{
    const char *at = h->counts;
    for (long s = step < h->steps ? step : h->steps - 1; s > 0; s--) {
        at = strchr(at, '/');
        if (!at)
            esm_fail("the %s history at %d ranks has fewer steps than its %d: record it again "
                     "(scripts/fold_history.py)",
                     h->deck, h->ranks, h->steps);
        at++;
    }
    int k = 0;
    for (char *end; *at && *at != '/'; at = end) {
        long count = strtol(at, &end, 10);
        if (end == at || count < 1 || k == max)
            esm_fail("the %s history at %d ranks: bad counts near \"%.20s\": record it again "
                     "(scripts/fold_history.py)",
                     h->deck, h->ranks, at);
        counts[k++] = (int)count;
    }
    if (k == 0) /* a folded run told 0 iterations would test convergence */
        esm_fail("the %s history at %d ranks: step %ld has no counts: record it again "
                 "(scripts/fold_history.py)",
                 h->deck, h->ranks, step + 1);
    return k;
}

void esm_fold_history_append(char **text, const int *counts, int k)
{
    size_t used = *text ? strlen(*text) : 0;
    *text = realloc(*text, used + 12 * (size_t)k + 2);
    if (!*text)
        esm_fail("out of memory for the iteration history");
    if (used)
        (*text)[used++] = '/';
    (*text)[used] = '\0';
    for (int c = 0; c < k; c++)
        used += sprintf(*text + used, c ? " %d" : "%d", counts[c]);
}

#ifdef ESM_SMPI
/* A value shared by every simulated rank of this process under `name`/`key` (SMPI keeps the
 * table; the ranks run one at a time, so no lock). */
static void *shared_get(const char *name, const char *key)
{
    return smpi_shared_known_call(name, key) ? smpi_shared_get_call(name, key) : NULL;
}
static void shared_set(const char *name, const char *key, void *value)
{
    smpi_shared_set_call(name, key, value);
}
#else
static void *shared_get(const char *name, const char *key)
{
    (void)name, (void)key;
    return NULL;
}
static void shared_set(const char *name, const char *key, void *value)
{
    (void)name, (void)key, (void)value;
}
#endif

void *esm_field_alloc(size_t bytes)
{
    fold_state *f = setup();
    f->counts.field_bytes += (long)bytes;
    if (!f->folded) {
        f->counts.field_bytes_held += (long)bytes;
        return esm_calloc(bytes, 1);
    }
    /* Ranks whose k-th fields are within a factor 2 share one: memory grows with the number
     * of distinct power-of-two sizes, not with the rank count or the spread of sizes. */
    size_t capacity = 64;
    while (capacity < bytes)
        capacity *= 2;
    char key[64];
    snprintf(key, sizeof key, "%ld:%zu", f->fields++, capacity);
    void *field = shared_get("esm_field", key);
    if (!field) {
        field = esm_calloc(capacity, 1);
        f->counts.field_bytes_held += (long)capacity;
        shared_set("esm_field", key, field);
    }
    return field;
}

void esm_field_free(void *field)
{
    if (!fold()->folded)
        free(field);
}

void *esm_shared(const char *key, void *(*build)(const void *context), const void *context)
{
    fold_state *f = setup();
    f->shared_owned = !f->folded;
    if (!f->folded)
        return build(context);
    void *value = shared_get("esm_shared", key);
    if (!value) {
        value = build(context);
        shared_set("esm_shared", key, value);
    }
    return value;
}

bool esm_shared_owned(void)
{
    return fold()->shared_owned;
}

#ifdef ESM_SMPI
/* A kernel's cost is the CPU time of the simulator's thread, as SMPI's own benchmarking of the
 * code between MPI calls takes it: a wall clock would charge the simulated rank for every
 * moment this machine gave its core to another process. */
static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The node model: what `measured` seconds of a kernel doing `flops` and moving `bytes` cost
 * on the simulated node (module comment of esm_fold.h): the in-core time overlaps the memory
 * traffic, as the ECM model has a core's arithmetic overlap its data transfers. */
static double simulated_seconds(fold_state *f, double measured, double flops, double bytes)
{
    f->counts.kernel_flops += flops;
    if (f->cost == COST_OFF)
        return 0;
    double in_core = f->cost == COST_MEASURED ? measured / f->core_speed
                     : f->core_flops > 0      ? flops / f->core_flops
                                              : 0;
    double memory = f->node_bandwidth > 0 ? bytes * f->node_ranks / f->node_bandwidth : 0;
    return in_core > memory ? in_core : memory;
}

static void charge(fold_state *f, double seconds)
{
    f->counts.kernel_seconds += seconds;
    if (seconds > 0)
        smpi_execute(seconds);
}

/* The slot of kernel k in this rank's table: where it is, or the empty one it goes to. */
static size_t kernel_slot(const fold_state *f, const esm_kernel *k)
{
    size_t mask = f->kernel_slots - 1;
    size_t i = (size_t)((uintptr_t)k * 0x9e3779b97f4a7c15u >> 32) & mask;
    while (f->kernels[i] && f->kernels[i]->kernel != k)
        i = (i + 1) & mask;
    return i;
}

/* This rank's state of kernel k, made at its first call. Kernels run millions of times in a
 * simulation: a hash table keyed by the declaration's address finds it in a probe or two. */
static kernel_state *kernel_state_of(fold_state *f, const esm_kernel *k)
{
    if (f->kernel_slots) {
        kernel_state *s = f->kernels[kernel_slot(f, k)];
        if (s)
            return s;
    }
    if (2 * (f->kernel_count + 1) > f->kernel_slots) { /* grow, at most half full */
        kernel_state **old = f->kernels;
        size_t slots = f->kernel_slots;
        f->kernel_slots = slots ? 2 * slots : 64;
        f->kernels = esm_calloc(f->kernel_slots, sizeof *f->kernels);
        for (size_t i = 0; i < slots; i++)
            if (old[i])
                f->kernels[kernel_slot(f, old[i]->kernel)] = old[i];
        free(old);
    }
    kernel_state *s = esm_calloc(1, sizeof *s);
    s->kernel = k;
    f->kernels[kernel_slot(f, k)] = s;
    f->kernel_count++;
    return s;
}

bool esm_kernel_begin(const esm_kernel *k, double points, double bytes)
{
    return esm_kernel_begin_flops(k, points, bytes, k->flops * points);
}

bool esm_kernel_begin_flops(const esm_kernel *kernel, double points, double bytes, double flops)
{
    fold_state *f = setup();
    if (f->mode == KERNELS_RUN)
        return true;
    smpi_bench_end(); /* SMPI charges the code before the kernel as usual */
    kernel_state *k = kernel_state_of(f, kernel);
    if (!k->model) {
        k->model = shared_get("esm_kernel", kernel->name);
        if (!k->model) {
            k->model = esm_calloc(1, sizeof *k->model);
            k->model->name = kernel->name;
            struct esm_kernel_model **last = kernel_models();
            while (*last)
                last = &(*last)->next;
            *last = k->model;
            shared_set("esm_kernel", kernel->name, k->model);
        }
    }
    k->points = points;
    k->bytes = bytes;
    k->call_flops = flops;
    struct esm_kernel_model *m = k->model;
    m->calls++, m->work += points, m->flops += flops, m->bytes += bytes;
    /* A rank's first call of a kernel is the first to touch that rank's own arrays (page
     * faults, cold caches and TLB): a full run pays it once in thousands of calls, but the
     * ranks take their turns, so the first samples over all ranks would all be first calls.
     * With the cost measured, each rank runs its first call unsampled (docs/simulate.md). */
    k->warming_up = f->folded && f->cost == COST_MEASURED && k->calls++ == 0;
    if (!f->folded || k->warming_up || m->samples < f->samples || m->points <= 0) {
        k->started = cpu_seconds();
        return true;
    }
    f->counts.kernel_calls_charged++;
    charge(f, simulated_seconds(f, m->seconds / m->points * points, flops, bytes));
    smpi_bench_begin();
    return false;
}

void esm_fold_skip(double seconds)
{
    fold_state *f = setup();
    if (!f->folded)
        esm_fail("skipping sampled iterations needs a folded run (esmperf's fold knob)");
    smpi_bench_end();
    f->counts.skipped_seconds += seconds;
    if (seconds > 0)
        smpi_execute(seconds);
    smpi_bench_begin();
}

void esm_kernel_end(const esm_kernel *kernel)
{
    fold_state *f = fold();
    if (f->mode == KERNELS_RUN)
        return;
    kernel_state *k = kernel_state_of(f, kernel);
    double measured = cpu_seconds() - k->started;
    struct esm_kernel_model *m = k->model;
    if (k->warming_up) { /* charged what it took, as a full run pays it, but no sample */
        k->warming_up = false;
    } else {
        m->samples++;
        m->seconds += measured;
        m->points += k->points;
    }
    f->counts.kernel_calls_run++;
    charge(f, simulated_seconds(f, measured, k->call_flops, k->bytes));
    smpi_bench_begin();
}
#else
bool esm_kernel_begin(const esm_kernel *k, double points, double bytes)
{
    (void)k, (void)points, (void)bytes;
    return true;
}
bool esm_kernel_begin_flops(const esm_kernel *k, double points, double bytes, double flops)
{
    (void)k, (void)points, (void)bytes, (void)flops;
    return true;
}
void esm_kernel_end(const esm_kernel *k)
{
    (void)k;
}
void esm_fold_skip(double seconds)
{
    (void)seconds;
    esm_fail("skipping sampled iterations needs a folded run (esmperf's fold knob)");
}
#endif
