/* redist-bench: the ESMF bundle-redistribution benchmark (P. Li, 2007; ../shared/seeds/003) on
 * libesmredist, with MPI_Alltoallw and PETSc VecScatter as peers in the same run.
 *
 * As the seed: a 3D grid (512x1024x16 by default) and a bundle of 8 double fields filled with
 * sums of sine waves of different frequencies and amplitudes; a source and a destination block
 * decomposition chosen to move as much as possible (Table 1: 4 ranks 4x1 -> 1x4, 8: 2x4 -> 4x2,
 * 16: 2x8 -> 8x2, ...). Timed: the route store (max over ranks), then 50 runs (each the max
 * over ranks, after a barrier; their mean is the run time), the whole repeated R times (default
 * 10): min and median over the repeats. Before each run the destination is poisoned (NaN);
 * after it every destination value is checked against the formula. The bytes moved between
 * different ranks must equal Table 1.
 * In the same run, timed the same way: the copy bound (every rank memcpy's its destination
 * bundle's bytes at once: the least memory traffic any redistribution needs) and the peers.
 *
 * Modes: run (default); store (store only, no fields); store-scaling (one process computes the
 * route of every rank of a layout of n ranks, n = 4 ... 65,536: block routes need no
 * communication). Command line and result: docs/workloads.md; figures: docs/redist.md. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

enum { MAX_REPEATS = 1000, MAX_STORE_RANKS = 64 };
enum { OURS, COPY, ALLTOALLW, PETSC, METHODS };
static const char *method_names[METHODS] = {"ours", "copy", "alltoallw", "petsc"};

/* ---- the command line ---------------------------------------------------------------------- */

typedef struct {
    const char *name;
    int64_t dims[3];
} deck;
static const deck decks[] = {{"M", {512, 1024, 16}}, {"S", {128, 256, 16}}, {"L", {2048, 4096, 8}}};

typedef struct {
    const char *size;
    int64_t dims[3];
    int steps, repeats, nfields;
    esm_type type;
    int src_parts[3], dst_parts[3], parts_given;
    esm_route_options options;
    int peers[METHODS]; /* which of alltoallw, petsc */
    const char *peers_text, *mode, *type_text;
    int verify_each, shared_memory;
    int64_t store_ranks[MAX_STORE_RANKS];
    int n_store_ranks;
} config;

static int rank, nranks;
static char error_text[512];

static int bad(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vsnprintf(error_text, sizeof error_text, fmt, args);
    va_end(args);
    return 1;
}

static const char *usage =
    "usage: redist-bench --size M|S|L [--steps 50] [--<option> <value> ...]\n"
    "  The ESMF bundle-redistribution benchmark on libesmredist (docs/redist.md).\n"
    "  --size M|S|L           grid 512x1024x16 (seed, default) | 128x256x16 | 2048x4096x8 (seed, 16 GB)\n"
    "  --steps N              runs timed per repeat (default 50)\n"
    "  --repeats R            repeats of store + runs (default 10)\n"
    "  --grid NXxNYxNZ        any grid instead of --size's\n"
    "  --fields N             fields in the bundle (default 8)\n"
    "  --type T               double (default) | float | int32 | int64\n"
    "  --src-parts AxB[xC]    source blocks per dimension (default: the seed's Table 1 by rank count)\n"
    "  --dst-parts AxB[xC]    destination blocks per dimension\n"
    "  --comm C               async (default) | sync | persistent\n"
    "  --pack P               pet (default) | xp | none | datatype\n"
    "  --bundle B             on (default) | off\n"
    "  --local L              direct (default) | mpi\n"
    "  --single-copy S        on (default) | off\n"
    "  --peers P              all (default) | none | alltoallw | petsc\n"
    "  --verify V             each (default: every run) | last\n"
    "  --memory M             shared (default: bundles from esm_shared_alloc) | private (malloc)\n"
    "  --mode M               run (default) | store | store-scaling\n"
    "  --store-ranks LIST     store-scaling: rank counts (default 4,8,...,65536)\n";

/* The seed's Table 1 (512x1024x16), by rank count; beyond 2048 the same alternation continues
 * (src 2^floor(m/2) x 2^ceil(m/2), dst twice as many along i); other counts: Px1 -> 1xP. */
static void seed_layout(int64_t n, int src[3], int dst[3])
{
    static const int table[][5] = {{4, 4, 1, 1, 4},      {8, 2, 4, 4, 2},       {16, 2, 8, 8, 2},
                                   {32, 4, 8, 16, 2},    {64, 4, 16, 16, 4},    {128, 8, 16, 32, 4},
                                   {256, 16, 16, 32, 8}, {512, 32, 16, 16, 32}, {1024, 32, 32, 64, 16},
                                   {2048, 32, 64, 64, 32}};
    src[2] = dst[2] = 1;
    for (size_t t = 0; t < sizeof table / sizeof *table; t++)
        if (table[t][0] == n) {
            src[0] = table[t][1], src[1] = table[t][2], dst[0] = table[t][3], dst[1] = table[t][4];
            return;
        }
    int m = 0;
    while (((int64_t)1 << m) < n) m++;
    if (n > 2048 && ((int64_t)1 << m) == n) {
        src[0] = 1 << (m / 2), src[1] = 1 << (m - m / 2);
        dst[0] = 1 << (m / 2 + 1), dst[1] = 1 << (m - m / 2 - 1);
        return;
    }
    src[0] = (int)n, src[1] = 1, dst[0] = 1, dst[1] = (int)n;
}

static int parse_long(const char *text, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi) return 1;
    *out = v;
    return 0;
}

static int parse_extents(const char *text, int64_t out[3], int *n)
{
    int64_t v[3] = {1, 1, 1};
    int k = 0;
    const char *p = text;
    while (k < 3) {
        char *end;
        errno = 0;
        long long x = strtoll(p, &end, 10);
        if (errno || end == p || x < 1) return 1;
        v[k++] = x;
        if (*end == '\0') break;
        if (*end != 'x') return 1;
        p = end + 1;
    }
    if (k == 3 && strchr(p, 'x')) return 1;
    memcpy(out, v, sizeof v);
    *n = k;
    return 0;
}

static int choice(const char *value, const char *choices, int *out)
{
    /* index of value in the comma-separated choices */
    int i = 0;
    size_t len = strlen(value);
    for (const char *c = choices; *c; i++) {
        const char *comma = strchr(c, ',');
        size_t n = comma ? (size_t)(comma - c) : strlen(c);
        if (n == len && !strncmp(c, value, n)) {
            *out = i;
            return 0;
        }
        if (!comma) break;
        c = comma + 1;
    }
    return 1;
}

/* Fills cfg from argv; 0 when fine, -1 for --help, 1 with error_text set. */
static int parse(int argc, char **argv, config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->size = "M";
    memcpy(cfg->dims, decks[0].dims, sizeof cfg->dims);
    cfg->steps = 50, cfg->repeats = 10, cfg->nfields = 8, cfg->type = ESM_DOUBLE, cfg->type_text = "double";
    esm_route_options_default(&cfg->options);
    cfg->peers[ALLTOALLW] = cfg->peers[PETSC] = 1;
    cfg->peers_text = "all", cfg->mode = "run", cfg->verify_each = 1, cfg->shared_memory = 1;
    for (int64_t n = 4; n <= 65536; n *= 2) cfg->store_ranks[cfg->n_store_ranks++] = n;
    int grid_given = 0, src_given = 0, dst_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *key = argv[i];
        if (!strcmp(key, "--help") || !strcmp(key, "-h")) return -1;
        if (strncmp(key, "--", 2)) return bad("unexpected argument %s: options are --key value", key);
        if (i + 1 >= argc) return bad("%s needs a value", key);
        const char *value = argv[++i];
        long v;
        int k, n;
        int64_t ext[3];
        if (!strcmp(key, "--size")) {
            size_t d = 0;
            while (d < sizeof decks / sizeof *decks && strcmp(decks[d].name, value)) d++;
            if (d == sizeof decks / sizeof *decks) return bad("unknown size %s: use M, S or L (or --grid NXxNYxNZ)", value);
            cfg->size = decks[d].name;
            if (!grid_given) memcpy(cfg->dims, decks[d].dims, sizeof cfg->dims);
        } else if (!strcmp(key, "--steps")) {
            if (parse_long(value, 1, 1000000, &v)) return bad("--steps %s: give a whole number from 1 to 1000000", value);
            cfg->steps = (int)v;
        } else if (!strcmp(key, "--repeats")) {
            if (parse_long(value, 1, MAX_REPEATS, &v)) return bad("--repeats %s: give a whole number from 1 to %d", value, MAX_REPEATS);
            cfg->repeats = (int)v;
        } else if (!strcmp(key, "--fields")) {
            if (parse_long(value, 1, 64, &v)) return bad("--fields %s: give a whole number from 1 to 64", value);
            cfg->nfields = (int)v;
        } else if (!strcmp(key, "--type")) {
            if (choice(value, "double,float,int32,int64", &k)) return bad("--type %s: use double, float, int32 or int64", value);
            cfg->type = (esm_type)k, cfg->type_text = value;
        } else if (!strcmp(key, "--grid")) {
            if (parse_extents(value, ext, &n) || n != 3) return bad("--grid %s: give three sizes, e.g. 512x1024x16", value);
            memcpy(cfg->dims, ext, sizeof ext);
            grid_given = 1;
            cfg->size = "custom";
        } else if (!strcmp(key, "--src-parts") || !strcmp(key, "--dst-parts")) {
            if (parse_extents(value, ext, &n) || ext[0] > 1 << 20 || ext[1] > 1 << 20 || ext[2] > 1 << 20)
                return bad("%s %s: give blocks per dimension, e.g. 4x1 or 4x1x1", key, value);
            int *parts = key[2] == 's' ? cfg->src_parts : cfg->dst_parts;
            for (int d = 0; d < 3; d++) parts[d] = (int)ext[d];
            *(key[2] == 's' ? &src_given : &dst_given) = 1;
        } else if (!strcmp(key, "--comm")) {
            if (choice(value, "async,sync,persistent", &k)) return bad("--comm %s: use async, sync or persistent", value);
            cfg->options.comm = (esm_comm_mode)k;
        } else if (!strcmp(key, "--pack")) {
            if (choice(value, "pet,xp,none,datatype", &k)) return bad("--pack %s: use pet, xp, none or datatype", value);
            cfg->options.pack = (esm_pack_mode)k;
        } else if (!strcmp(key, "--bundle")) {
            if (choice(value, "off,on", &k)) return bad("--bundle %s: use on or off", value);
            cfg->options.bundle = k;
        } else if (!strcmp(key, "--local")) {
            if (choice(value, "mpi,direct", &k)) return bad("--local %s: use direct or mpi", value);
            cfg->options.local_direct = k;
        } else if (!strcmp(key, "--single-copy")) {
            if (choice(value, "off,on", &k)) return bad("--single-copy %s: use on or off", value);
            cfg->options.single_copy = k;
        } else if (!strcmp(key, "--peers")) {
            if (choice(value, "all,none,alltoallw,petsc", &k)) return bad("--peers %s: use all, none, alltoallw or petsc", value);
            cfg->peers[ALLTOALLW] = k == 0 || k == 2;
            cfg->peers[PETSC] = k == 0 || k == 3;
            cfg->peers_text = value;
        } else if (!strcmp(key, "--verify")) {
            if (choice(value, "last,each", &k)) return bad("--verify %s: use each or last", value);
            cfg->verify_each = k;
        } else if (!strcmp(key, "--memory")) {
            if (choice(value, "private,shared", &k)) return bad("--memory %s: use shared or private", value);
            cfg->shared_memory = k;
        } else if (!strcmp(key, "--mode")) {
            if (choice(value, "run,store,store-scaling", &k)) return bad("--mode %s: use run, store or store-scaling", value);
            cfg->mode = k == 0 ? "run" : k == 1 ? "store" : "store-scaling";
        } else if (!strcmp(key, "--store-ranks")) {
            cfg->n_store_ranks = 0;
            char copy[512];
            snprintf(copy, sizeof copy, "%s", value);
            for (char *t = strtok(copy, ","); t; t = strtok(NULL, ",")) {
                if (parse_long(t, 1, 1 << 24, &v) || cfg->n_store_ranks == MAX_STORE_RANKS)
                    return bad("--store-ranks %s: give up to %d rank counts, e.g. 4,8,16", value, MAX_STORE_RANKS);
                cfg->store_ranks[cfg->n_store_ranks++] = v;
            }
        } else {
            return bad("unknown option %s (see --help)", key);
        }
    }
    if (src_given != dst_given) return bad("give both --src-parts and --dst-parts, or neither (the seed's Table 1)");
    cfg->parts_given = src_given;
    if (!cfg->parts_given) seed_layout(nranks, cfg->src_parts, cfg->dst_parts);
    if (strcmp(cfg->mode, "store-scaling")) {
        for (int s = 0; s < 2; s++) {
            const int *parts = s ? cfg->dst_parts : cfg->src_parts;
            int64_t blocks = (int64_t)parts[0] * parts[1] * parts[2];
            if (blocks != nranks)
                return bad("the %s layout %dx%dx%d has %" PRId64 " blocks for %d ranks: give --src-parts and --dst-parts whose products are %d",
                           s ? "destination" : "source", parts[0], parts[1], parts[2], blocks, nranks, nranks);
            for (int d = 0; d < 3; d++)
                if (parts[d] > cfg->dims[d])
                    return bad("the %s layout has %d blocks along dimension %d of only %" PRId64 " points: use fewer ranks or a larger grid",
                               s ? "destination" : "source", parts[d], d, cfg->dims[d]);
        }
    }
    return 0;
}

/* ---- blocks, fields, the formula ------------------------------------------------------------ */

block block_of(const bench *b, const int parts[3], int q)
{
    block k;
    for (int d = 0; d < 3; d++) {
        int p = q % parts[d];
        q /= parts[d];
        k.lo[d] = b->dims[d] * p / parts[d];
        k.hi[d] = b->dims[d] * (p + 1) / parts[d];
    }
    return k;
}

int64_t block_count(const block *k)
{
    return (k->hi[0] - k->lo[0]) * (k->hi[1] - k->lo[1]) * (k->hi[2] - k->lo[2]);
}

int intersect(const block *a, const block *b, block *out)
{
    for (int d = 0; d < 3; d++) {
        out->lo[d] = a->lo[d] > b->lo[d] ? a->lo[d] : b->lo[d];
        out->hi[d] = a->hi[d] < b->hi[d] ? a->hi[d] : b->hi[d];
        if (out->lo[d] >= out->hi[d]) return 0;
    }
    return 1;
}

/* Field f at grid point (i, j, k): one wave table per dimension, value t0[i] + (t1[j] + t2[k]),
 * each table a sum of two sine waves whose frequency, amplitude and phase depend on f. */
typedef struct {
    double *t[3];
} waves;

static waves make_waves(const bench *b)
{
    waves w;
    const double two_pi = 6.283185307179586;
    for (int d = 0; d < 3; d++) {
        int64_t n = b->dims[d];
        w.t[d] = malloc((size_t)b->nfields * n * sizeof(double));
        for (int f = 0; f < b->nfields; f++)
            for (int64_t x = 0; x < n; x++) {
                double u = (double)x / (double)n;
                w.t[d][f * n + x] = (1.0 + 0.25 * f) * sin(two_pi * (0.37 + 0.11 * f + 0.05 * d) * u + 0.3 * d) +
                                    0.5 / (1 + d) * sin(two_pi * (2.3 + 0.7 * f + 1.3 * d) * u + 0.1 * f);
            }
    }
    return w;
}

static void put_value(esm_type t, void *a, int64_t i, double v)
{
    switch (t) {
    case ESM_DOUBLE: ((double *)a)[i] = v; break;
    case ESM_FLOAT: ((float *)a)[i] = (float)v; break;
    case ESM_INT32: ((int32_t *)a)[i] = (int32_t)lrint(v * 1e6); break;
    case ESM_INT64: ((int64_t *)a)[i] = (int64_t)llrint(v * 1e12); break;
    }
}

/* |stored - expected| in the stored type's units; infinite for NaN (an element never written). */
static double value_error(esm_type t, const void *a, int64_t i, double v)
{
    double e;
    switch (t) {
    case ESM_DOUBLE: e = fabs(((const double *)a)[i] - v); break;
    case ESM_FLOAT: e = fabs((double)((const float *)a)[i] - (double)(float)v); break;
    case ESM_INT32: e = fabs((double)((const int32_t *)a)[i] - (double)(int32_t)lrint(v * 1e6)); break;
    default: e = fabs((double)((const int64_t *)a)[i] - (double)(int64_t)llrint(v * 1e12)); break;
    }
    return e == e ? e : INFINITY;
}

/* Calls the body for every element of field f of a block laid out densely (i fastest). */
#define FOR_BLOCK(b, w, k, f, idx, v, body)                                                        \
    do {                                                                                           \
        int64_t idx = (int64_t)(f) * block_count(k);                                               \
        const double *t0 = (w)->t[0] + (f) * (b)->dims[0], *t1 = (w)->t[1] + (f) * (b)->dims[1],  \
                     *t2 = (w)->t[2] + (f) * (b)->dims[2];                                         \
        for (int64_t gk = (k)->lo[2]; gk < (k)->hi[2]; gk++)                                       \
            for (int64_t gj = (k)->lo[1]; gj < (k)->hi[1]; gj++) {                                 \
                double base = t1[gj] + t2[gk];                                                     \
                for (int64_t gi = (k)->lo[0]; gi < (k)->hi[0]; gi++, idx++) {                      \
                    double v = t0[gi] + base;                                                      \
                    body;                                                                          \
                }                                                                                  \
            }                                                                                      \
    } while (0)

static void fill_source(const bench *b, const waves *w)
{
    for (int f = 0; f < b->nfields; f++) FOR_BLOCK(b, w, &b->src_block, f, idx, v, put_value(b->type, b->src, idx, v));
}

static double check_destination(const bench *b, const waves *w)
{
    double worst = 0;
    for (int f = 0; f < b->nfields; f++) {
        if (b->type == ESM_DOUBLE) {
            const double *d = b->dst;
            FOR_BLOCK(b, w, &b->dst_block, f, idx, v, {
                double e = fabs(d[idx] - v);
                if (!(e <= worst)) worst = e == e ? e : INFINITY;
            });
        } else {
            FOR_BLOCK(b, w, &b->dst_block, f, idx, v, {
                double e = value_error(b->type, b->dst, idx, v);
                if (e > worst) worst = e;
            });
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, b->comm);
    return worst;
}

/* A bundle's memory: node-shared (esm_shared_alloc, collective) or private (malloc). */
static void *alloc_bundle(const config *c, const esm_distgrid *d, size_t bytes)
{
    void *p = NULL;
    if (c->shared_memory) return esm_shared_alloc(d, bytes, &p) == ESM_OK ? p : NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 64)) return NULL;
    return p;
}

static void free_bundle(const config *c, void *p)
{
    if (c->shared_memory) esm_shared_free(&p);
    else free(p);
}

/* ---- statistics and output ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    double min, median, max;
} spread;

static spread spread_of(const double *v, int n)
{
    double *s = malloc(n * sizeof(double));
    memcpy(s, v, n * sizeof(double));
    qsort(s, n, sizeof(double), cmp_double);
    spread r = {s[0], n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]), s[n - 1]};
    free(s);
    return r;
}

static char json[1 << 16];
static size_t json_len;
static void out(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(json + json_len, sizeof json - json_len, fmt, args);
    va_end(args);
    if (n > 0) json_len += (size_t)n < sizeof json - json_len ? (size_t)n : sizeof json - json_len - 1;
}
static void out_spread(const char *key, spread s, double scale)
{
    out("\"%s\": {\"min\": %.9g, \"median\": %.9g, \"max\": %.9g}", key, s.min * scale, s.median * scale, s.max * scale);
}
static void out_values(const char *key, const double *v, int n)
{
    out("\"%s\": [", key);
    for (int i = 0; i < n; i++) out("%s%.9g", i ? ", " : "", v[i]);
    out("]");
}

static const char *comm_name(int c) { return c == 0 ? "async" : c == 1 ? "sync" : "persistent"; }
static const char *pack_name(int p) { return p == 0 ? "pet" : p == 1 ? "xp" : p == 2 ? "none" : "datatype"; }

static void out_params(const config *c)
{
    out("\"params\": {\"grid\": \"%" PRId64 "x%" PRId64 "x%" PRId64 "\", \"fields\": %d, \"type\": \"%s\", "
        "\"src_parts\": \"%dx%dx%d\", \"dst_parts\": \"%dx%dx%d\", \"comm\": \"%s\", \"pack\": \"%s\", "
        "\"bundle\": \"%s\", \"local\": \"%s\", \"single_copy\": \"%s\", \"repeats\": %d, \"peers\": \"%s\", "
        "\"verify\": \"%s\", \"memory\": \"%s\", \"mode\": \"%s\"}",
        c->dims[0], c->dims[1], c->dims[2], c->nfields, c->type_text, c->src_parts[0], c->src_parts[1],
        c->src_parts[2], c->dst_parts[0], c->dst_parts[1], c->dst_parts[2], comm_name(c->options.comm),
        pack_name(c->options.pack), c->options.bundle ? "on" : "off", c->options.local_direct ? "direct" : "mpi",
        c->options.single_copy ? "on" : "off", c->repeats, c->peers_text, c->verify_each ? "each" : "last",
        c->shared_memory ? "shared" : "private", c->mode);
}

/* The machine's state: load, cores, ranks per node (oversubscribed when more than cores). */
typedef struct {
    double load;
    long cores;
    int node_ranks;
} machine;

static machine machine_state(void)
{
    machine m = {0, sysconf(_SC_NPROCESSORS_ONLN), 1};
    double load[1] = {0};
    if (getloadavg(load, 1) == 1) m.load = load[0];
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &m.node_ranks);
    MPI_Comm_free(&node);
    MPI_Bcast(&m.load, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return m;
}

static void out_machine(const machine *m)
{
    out("\"machine\": {\"load_1min\": %.2f, \"cores\": %ld, \"ranks_per_node\": %d, \"oversubscribed\": %s}", m->load,
        m->cores, m->node_ranks, m->node_ranks > m->cores ? "true" : "false");
}

static void fatal(const char *what, int status)
{
    fprintf(stderr, "redist-bench: rank %d: %s: %s (%s)\n", rank, what, esm_error_message(), esm_status_name(status));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* ---- mode store-scaling: one process, every rank of a layout of n ranks in turn ------------- */

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int store_scaling(const config *c, const machine *m)
{
    if (rank != 0) return 0;
    esm_fields fields = {c->nfields, c->type};
    double wall = now_seconds(), fom = 0;
    printf("store scaling: %" PRId64 "x%" PRId64 "x%" PRId64 " grid, %d %s fields, one process computes every rank's route\n",
           c->dims[0], c->dims[1], c->dims[2], c->nfields, c->type_text);
    printf("per rank: the least of %d stores; median and max over ranks; spread: the median over ranks in each repeat\n",
           c->repeats);
    printf("%8s %10s %10s %16s %12s %12s %12s %6s %8s %10s\n", "ranks", "src", "dst", "bytes moved", "median us",
           "max us", "spread", "peers", "segments", "route B");
    out("{\"workload\": \"redist\", \"size\": \"%s\", \"ranks\": %d, \"steps\": 0, ", c->size, nranks);
    out("\"store_scaling\": [");
    int first = 1;
    for (int t = 0; t < c->n_store_ranks; t++) {
        int64_t n = c->store_ranks[t];
        int sp[3], dp[3];
        seed_layout(n, sp, dp);
        int fits = 1;
        for (int d = 0; d < 3; d++) fits = fits && sp[d] <= c->dims[d] && dp[d] <= c->dims[d];
        if (!fits) {
            printf("%8" PRId64 " skipped: the layout %dx%d -> %dx%d has more blocks than grid points along a dimension\n", n,
                   sp[0], sp[1], dp[0], dp[1]);
            continue;
        }
        esm_distgrid *src, *dst;
        int st;
        if ((st = esm_distgrid_create_blocks(MPI_COMM_NULL, 3, c->dims, sp, NULL, &src))) fatal("layout", st);
        if ((st = esm_distgrid_create_blocks(MPI_COMM_NULL, 3, c->dims, dp, NULL, &dst))) fatal("layout", st);
        /* each rank's store timed R times; its time is the least (the cost without the
         * machine's interruptions); then the median and the max over ranks */
        double *best = malloc(n * sizeof(double)), *times = malloc(n * sizeof(double)), medians[MAX_REPEATS];
        int64_t moved = 0, segments_max = 0, route_bytes_max = 0;
        int peers_max = 0;
        for (int r = 0; r < c->repeats; r++) {
            for (int64_t q = 0; q < n; q++) {
                esm_route *route;
                double t0 = now_seconds();
                st = esm_route_store_as(src, dst, (int)q, fields, fields, &c->options, &route);
                times[q] = now_seconds() - t0;
                if (st) fatal("esm_route_store_as", st);
                if (r == 0 || times[q] < best[q]) best[q] = times[q];
                if (r == 0) {
                    esm_route_info info;
                    esm_route_get_info(route, &info);
                    moved += info.send_bytes;
                    int peers = info.send_peers > info.recv_peers ? info.send_peers : info.recv_peers;
                    if (peers > peers_max) peers_max = peers;
                    if (info.segments > segments_max) segments_max = info.segments;
                    if (info.route_bytes > route_bytes_max) route_bytes_max = info.route_bytes;
                }
                esm_route_free(&route);
            }
            medians[r] = spread_of(times, (int)n).median;
        }
        spread per_rank = spread_of(best, (int)n), repeats = spread_of(medians, c->repeats);
        char sp_text[32], dp_text[32];
        snprintf(sp_text, sizeof sp_text, "%dx%d", sp[0], sp[1]);
        snprintf(dp_text, sizeof dp_text, "%dx%d", dp[0], dp[1]);
        printf("%8" PRId64 " %10s %10s %16" PRId64 " %12.3f %12.3f %5.3f-%-6.3f %6d %8" PRId64 " %10" PRId64 "\n", n,
               sp_text, dp_text, moved, per_rank.median * 1e6, per_rank.max * 1e6, repeats.min * 1e6, repeats.max * 1e6,
               peers_max, segments_max, route_bytes_max);
        out("%s{\"n\": %" PRId64 ", \"src_parts\": \"%dx%d\", \"dst_parts\": \"%dx%d\", \"bytes_moved\": %" PRId64 ", ",
            first ? "" : ", ", n, sp[0], sp[1], dp[0], dp[1], moved);
        out("\"store_us\": {\"median_rank\": %.6g, \"max_rank\": %.6g}, ", per_rank.median * 1e6, per_rank.max * 1e6);
        out_spread("store_us_median_rank_repeats", repeats, 1e6);
        out(", \"peers_max\": %d, \"segments_max\": %" PRId64 ", \"route_bytes_max\": %" PRId64 "}", peers_max, segments_max,
            route_bytes_max);
        first = 0;
        fom = per_rank.median * 1e6;
        free(times);
        free(best);
        esm_distgrid_free(&src);
        esm_distgrid_free(&dst);
    }
    out("], ");
    out("\"wall\": %.6f, \"fom\": {\"value\": %.6g, \"unit\": \"us per rank (store, largest n)\", \"higher_is_better\": false}, ",
        now_seconds() - wall, fom);
    out("\"verification\": {\"passed\": true, \"what\": \"store only: nothing moved\", \"norms\": {}}, ");
    out_params(c);
    out(", ");
    out_machine(m);
    out("}");
    printf("%s\n", json);
    return 0;
}

/* ---- modes run and store: the real thing on nranks ranks ------------------------------------ */

typedef struct {
    int enabled, available, passed;
    char why[256];
    double store[MAX_REPEATS], run[MAX_REPEATS];
    double max_error;
} method_result;

/* The timed runs are regions of the profile (MPI_Pcontrol, IPM's convention: 1 enters, -1
 * leaves); SimGrid SMPI aborts on MPI_Pcontrol and runs no profiler: nothing there. */
static void region(int level, const char *name)
{
#ifdef SMPI_H
    (void)level, (void)name;
#else
    MPI_Pcontrol(level, name);
#endif
}

static double max_over_ranks(double v)
{
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return v;
}

/* Times `steps` runs of method m (after one warm-up run), each the max over ranks after a
 * barrier, and returns their mean; checks the destination after every run (or the last). */
static double time_runs(const config *c, bench *b, int m, esm_route *route, const peer_ops *ops, peer *state,
                        const waves *w, double *worst)
{
    size_t dst_bytes = (size_t)b->dst_count * b->nfields * b->esz, src_bytes = (size_t)b->src_count * b->nfields * b->esz;
    double *times = malloc(c->steps * sizeof(double));
    void *const *srcs = NULL;
    void **dsts = NULL;
    if (m == OURS) {
        srcs = malloc(b->nfields * sizeof(void *));
        dsts = malloc(b->nfields * sizeof(void *));
        for (int f = 0; f < b->nfields; f++) {
            ((void **)srcs)[f] = (char *)b->src + (size_t)f * b->src_count * b->esz;
            dsts[f] = (char *)b->dst + (size_t)f * b->dst_count * b->esz;
        }
    }
    for (int s = -1; s < c->steps; s++) { /* s = -1: warm-up */
        int check = m != COPY && (c->verify_each || s == c->steps - 1 || s == -1);
        if (check || c->verify_each) /* NaN: an element never written fails; the copy bound gets the same */
            memset(b->dst, 0xff, dst_bytes);
        MPI_Barrier(b->comm);
        if (s >= 0) { /* the timed runs, per method */
            region(1, "timed");
            region(1, method_names[m]);
        }
        double t0 = MPI_Wtime();
        int rc = 0;
        if (m == OURS) rc = esm_route_run(route, (const void *const *)srcs, dsts);
        else if (m == COPY) {
            for (size_t done = 0; done < dst_bytes;) { /* the destination's bytes, from the source */
                size_t n = dst_bytes - done < src_bytes ? dst_bytes - done : src_bytes;
                if (n == 0) break;
                memcpy((char *)b->dst + done, b->src, n);
                done += n;
            }
        } else rc = ops->run(b, state);
        double t = MPI_Wtime() - t0;
        if (s >= 0) {
            region(-1, method_names[m]);
            region(-1, "timed");
        }
        if (rc) {
            fprintf(stderr, "redist-bench: rank %d: the %s run failed: %s\n", rank, method_names[m],
                    m == OURS ? esm_error_message() : "see above");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (s >= 0) times[s] = t;
        if (check) {
            double e = check_destination(b, w);
            if (!(e <= *worst)) *worst = e;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, times, c->steps, MPI_DOUBLE, MPI_MAX, b->comm);
    double mean = 0;
    for (int s = 0; s < c->steps; s++) mean += times[s] / c->steps;
    free(times);
    free((void *)srcs);
    free(dsts);
    return mean;
}

static int run_mode(const config *c, const machine *m)
{
    const int store_only = !strcmp(c->mode, "store");
    bench b;
    memset(&b, 0, sizeof b);
    b.comm = MPI_COMM_WORLD, b.rank = rank, b.nranks = nranks;
    memcpy(b.dims, c->dims, sizeof b.dims);
    memcpy(b.src_parts, c->src_parts, sizeof b.src_parts);
    memcpy(b.dst_parts, c->dst_parts, sizeof b.dst_parts);
    b.nfields = c->nfields, b.type = c->type;
    b.esz = c->type == ESM_DOUBLE || c->type == ESM_INT64 ? 8 : 4;
    b.src_block = block_of(&b, b.src_parts, rank);
    b.dst_block = block_of(&b, b.dst_parts, rank);
    b.src_count = block_count(&b.src_block), b.dst_count = block_count(&b.dst_block);
    esm_fields fields = {c->nfields, c->type};
    int st;
    esm_distgrid *src, *dst;
    if ((st = esm_distgrid_create_blocks(MPI_COMM_WORLD, 3, c->dims, c->src_parts, NULL, &src)) ||
        (st = esm_distgrid_create_blocks(MPI_COMM_WORLD, 3, c->dims, c->dst_parts, NULL, &dst))) {
        if (rank == 0) fprintf(stderr, "redist-bench: %s\n", esm_error_message());
        return 1;
    }
    waves w = {{NULL}};
    method_result res[METHODS];
    memset(res, 0, sizeof res);
    res[OURS].enabled = res[OURS].available = 1;
    res[COPY].enabled = res[COPY].available = !store_only;
    const peer_ops *ops[METHODS] = {NULL, NULL, &alltoallw_peer, &petsc_peer};
    for (int k = ALLTOALLW; k < METHODS; k++) {
        res[k].enabled = c->peers[k] && !store_only;
        const char *why = res[k].enabled ? ops[k]->unavailable(&b) : "not asked for (--peers)";
        res[k].available = res[k].enabled && !why;
        if (why) snprintf(res[k].why, sizeof res[k].why, "%s", why);
    }
    int petsc_started = res[PETSC].available;
    if (petsc_started) petsc_start();
    if (!store_only) {
        size_t src_bytes = (size_t)b.src_count * b.nfields * b.esz, dst_bytes = (size_t)b.dst_count * b.nfields * b.esz;
        b.src = alloc_bundle(c, src, src_bytes);
        b.dst = alloc_bundle(c, dst, dst_bytes);
        int ok = b.src && b.dst, all_ok;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!all_ok) {
            if (rank == 0)
                fprintf(stderr, "redist-bench: cannot allocate the bundles (%zu + %zu bytes per rank%s): use a smaller --size or more ranks%s\n",
                        src_bytes, dst_bytes, c->shared_memory ? ", node-shared" : "",
                        c->shared_memory ? ", or --memory private" : "");
            return 1;
        }
        w = make_waves(&b);
        fill_source(&b, &w);
    }
    esm_route_info info = {0};
    double wall = MPI_Wtime();
    for (int r = 0; r < c->repeats; r++) {
        for (int k = 0; k < METHODS; k++) {
            method_result *mr = &res[k];
            if (!mr->available) continue;
            esm_route *route = NULL;
            peer *state = NULL;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (k == OURS) {
                if ((st = esm_route_store(src, dst, fields, fields, &c->options, &route))) {
                    if (rank == 0) fprintf(stderr, "redist-bench: esm_route_store: %s\n", esm_error_message());
                    return 1;
                }
            } else if (k != COPY) {
                char why[256] = "";
                int failed = ops[k]->setup(&b, &state, why, sizeof why), any;
                MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
                if (any) { /* a peer that cannot set up is reported, not fatal */
                    snprintf(mr->why, sizeof mr->why, "set-up failed: %s", why[0] ? why : "on another rank");
                    mr->available = 0;
                    ops[k]->destroy(state);
                    continue;
                }
            }
            mr->store[r] = max_over_ranks(MPI_Wtime() - t0);
            if (k == OURS && r == 0) esm_route_get_info(route, &info);
            if (!store_only) mr->run[r] = time_runs(c, &b, k, route, ops[k], state, &w, &mr->max_error);
            if (route) esm_route_free(&route);
            if (state) ops[k]->destroy(state);
        }
    }
    wall = MPI_Wtime() - wall;
    if (petsc_started) petsc_stop();
    /* totals over ranks */
    int64_t moved = 0, messages = 0, route_bytes_max = 0, segments_max = 0;
    int peers_max = 0, single_copy = 0;
    MPI_Allreduce(&info.send_bytes, &moved, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&info.messages, &messages, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&info.route_bytes, &route_bytes_max, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&info.segments, &segments_max, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    int peers = info.send_peers > info.recv_peers ? info.send_peers : info.recv_peers;
    MPI_Allreduce(&peers, &peers_max, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&info.single_copy_peers, &single_copy, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int passed = 1;
    for (int k = 0; k < METHODS; k++) {
        res[k].passed = !res[k].available || k == COPY || store_only || res[k].max_error == 0;
        passed = passed && res[k].passed;
    }
    if (rank == 0) {
        const int R = c->repeats;
        spread ours = spread_of(res[OURS].run, R), store = spread_of(res[OURS].store, R);
        spread copy = store_only ? (spread){0, 0, 0} : spread_of(res[COPY].run, R);
        double bandwidth = store_only ? 0 : moved / ours.median / 1e9;
        printf("redist-bench: %" PRId64 "x%" PRId64 "x%" PRId64 " grid, %d %s fields, %d ranks (%s on %ld cores, load %.2f), %dx%dx%d -> %dx%dx%d\n",
               c->dims[0], c->dims[1], c->dims[2], c->nfields, c->type_text, nranks,
               m->node_ranks > m->cores ? "oversubscribed" : "not oversubscribed", m->cores, m->load, c->src_parts[0],
               c->src_parts[1], c->src_parts[2], c->dst_parts[0], c->dst_parts[1], c->dst_parts[2]);
        printf("bytes moved between ranks per run: %" PRId64 "; options: comm %s, pack %s, bundle %s, local %s, single copy %s\n",
               moved, comm_name(c->options.comm), pack_name(c->options.pack), c->options.bundle ? "on" : "off",
               c->options.local_direct ? "direct" : "mpi", c->options.single_copy ? "on" : "off");
        printf("%-10s %12s %36s %8s %9s %s\n", "method", "store ms", "run ms (min / median / max of repeats)", "GB/s",
               "vs ours", "check");
        for (int k = 0; k < METHODS; k++) {
            if (!res[k].enabled) continue;
            if (!res[k].available) {
                printf("%-10s unavailable: %s\n", method_names[k], res[k].why);
                continue;
            }
            spread s = spread_of(res[k].store, R), t = store_only ? (spread){0, 0, 0} : spread_of(res[k].run, R);
            printf("%-10s %12.3f %11.3f / %9.3f / %9.3f %8.2f %9.2f %s\n", method_names[k], s.median * 1e3, t.min * 1e3,
                   t.median * 1e3, t.max * 1e3, t.median > 0 ? moved / t.median / 1e9 : 0,
                   ours.median > 0 ? t.median / ours.median : 0,
                   k == COPY ? "-" : res[k].max_error == 0 ? "PASS" : "FAIL");
        }
        out("{\"workload\": \"redist\", \"size\": \"%s\", \"ranks\": %d, \"steps\": %d, \"wall\": %.6f, ", c->size, nranks,
            store_only ? 0 : c->steps, wall);
        if (store_only)
            out("\"fom\": {\"value\": %.6g, \"unit\": \"ms (store, median)\", \"higher_is_better\": false}, ", store.median * 1e3);
        else
            out("\"fom\": {\"value\": %.6g, \"unit\": \"GB/s\", \"higher_is_better\": true}, ", bandwidth);
        out("\"verification\": {\"passed\": %s, \"what\": \"%s\", \"norms\": {\"max_abs\": %.9g}}, ", passed ? "true" : "false",
            store_only ? "store only: nothing moved"
                       : c->verify_each ? "every destination value against the sine-wave formula after every run (destination poisoned before)"
                                        : "every destination value against the sine-wave formula after the last run",
            res[OURS].max_error);
        out("\"model\": {\"bytes_moved\": %" PRId64 ", \"messages_per_run\": %" PRId64 ", \"single_copy_pairs\": %d, "
            "\"peers_max\": %d, \"segments_max\": %" PRId64 ", \"route_bytes_max\": %" PRId64 "}, ",
            moved, messages, single_copy, peers_max, segments_max, route_bytes_max);
        out_params(c);
        out(", ");
        out_machine(m);
        out(", \"redist\": {");
        out_spread("store_s", store, 1);
        if (!store_only) {
            out(", ");
            out_spread("run_s", ours, 1);
            out(", ");
            out_spread("copy_s", copy, 1);
            out(", \"bandwidth_GBps\": %.6g, \"copy_ratio\": %.6g, ", bandwidth, ours.median / copy.median);
            out_values("run_s_repeats", res[OURS].run, R);
            out(", ");
            out_values("store_s_repeats", res[OURS].store, R);
        }
        out("}, \"peers\": {");
        int first = 1;
        for (int k = ALLTOALLW; k < METHODS; k++) {
            if (!res[k].enabled) continue;
            out("%s\"%s\": {\"available\": %s", first ? "" : ", ", method_names[k], res[k].available ? "true" : "false");
            first = 0;
            if (!res[k].available) {
                out(", \"why\": \"%s\"}", res[k].why);
                continue;
            }
            spread s = spread_of(res[k].store, R), t = spread_of(res[k].run, R);
            out(", ");
            out_spread("store_s", s, 1);
            out(", ");
            out_spread("run_s", t, 1);
            out(", \"ratio_to_ours\": %.6g, \"passed\": %s, \"max_abs\": %.9g}", t.median / ours.median,
                res[k].passed ? "true" : "false", res[k].max_error);
        }
        out("}}");
        printf("%s\n", json);
    }
    if (b.src) free_bundle(c, b.src);
    if (b.dst) free_bundle(c, b.dst);
    for (int d = 0; d < 3; d++) free(w.t[d]);
    esm_distgrid_free(&src);
    esm_distgrid_free(&dst);
    return passed ? 0 : 2;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    config cfg;
    int rc = parse(argc, argv, &cfg);
    if (rc) {
        if (rank == 0) {
            if (rc < 0) fputs(usage, stdout);
            else fprintf(stderr, "redist-bench: %s\n", error_text);
        }
        MPI_Finalize();
        return rc < 0 ? 0 : 1;
    }
    machine m = machine_state();
    rc = !strcmp(cfg.mode, "store-scaling") ? store_scaling(&cfg, &m) : run_mode(&cfg, &m);
    MPI_Finalize();
    return rc;
}
