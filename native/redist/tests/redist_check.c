/* Checks of libesmredist through its C API, driven by tests/test_redist_*.py.
 *
 *   redist_check roundtrip [--seeds A-B] [--pairs P-Q] [--all-options | --options K-L | --sample N]
 *       For each seed, random decompositions A and B of a random index space (1-4 dimensions,
 *       every pair of kinds: blocks, boxes, index lists), then for each option combination
 *       (comm x pack x bundle x local x single copy, fields malloc'ed or node-shared):
 *       A -> B must put every element where B says (values are functions of the global index,
 *       exact in every type), and B -> A must give back A exactly (round trip identity). Runs
 *       twice per route (the second time with other arrays: persistent requests and cached
 *       datatypes must follow), and once split into begin/end. Every rank draws the same random
 *       numbers, so all agree on the decompositions. Prints one JSON line on rank 0.
 *   redist_check error NAME|all
 *       Makes the error NAME (or each in turn) happen; every rank prints "rank R: NAME: STATUS:
 *       message" and exits 0 when every status is the expected one, 3 otherwise.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "esm_rank_state.h"
#include "esm_redist.h"

/* This rank's state (one block per simulated rank under SMPI, which runs every rank in one
 * process). */
typedef struct {
    int rank, nranks;
    uint64_t rng;             /* the random numbers' state */
    int shared_memory;        /* fields in node-shared memory (esm_shared_alloc), not malloc'ed */
    const char *current_case; /* the error case running */
} check_state;
ESM_RANK_STATE(check_state, check)

/* ---- random numbers, the same sequence on every rank (splitmix64) ---- */
static uint64_t rng_next(void)
{
    uint64_t z = (check()->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static int64_t rng_range(int64_t lo, int64_t hi) /* [lo, hi] */
{
    return lo + (int64_t)(rng_next() % (uint64_t)(hi - lo + 1));
}

static void die(const char *what, int status)
{
    fprintf(stderr, "rank %d: %s failed: %s: %s\n", check()->rank, what, esm_status_name(status),
            esm_error_message());
    MPI_Abort(MPI_COMM_WORLD, 4);
}
#define CHECK(call)                                                                                \
    do {                                                                                           \
        int status_ = (call);                                                                      \
        if (status_ != ESM_OK)                                                                     \
            die(#call, status_);                                                                   \
    } while (0)

/* ---- random decompositions ---- */
enum { BLOCKS, BOXES, INDICES, KINDS };
static const char *kind_names[] = {"blocks", "boxes", "indices"};

typedef struct {
    int ndims;
    int64_t dims[4];
    int64_t total;
} space;

static esm_distgrid *random_blocks(const space *s)
{
    int parts[4] = {1, 1, 1, 1};
    int left = check()->nranks;
    for (int f = 2; left > 1;) { /* spread the prime factors of nranks over the dimensions */
        if (left % f) {
            f++;
            continue;
        }
        parts[rng_range(0, s->ndims - 1)] *= f;
        left /= f;
    }
    int64_t cut_store[4][64];
    const int64_t *cuts[4];
    for (int d = 0; d < s->ndims; d++) {
        int64_t *c = cut_store[d];
        c[0] = 0;
        c[parts[d]] = s->dims[d];
        for (int p = 1; p < parts[d]; p++)
            c[p] = rng_range(0, s->dims[d]);
        for (int p = 1; p < parts[d]; p++) /* sort the inner cuts */
            for (int q = p + 1; q < parts[d]; q++)
                if (c[q] < c[p]) {
                    int64_t t = c[p];
                    c[p] = c[q];
                    c[q] = t;
                }
        cuts[d] = c;
    }
    int even = rng_range(0, 3) == 0;
    esm_distgrid *d;
    CHECK(esm_distgrid_create_blocks(MPI_COMM_WORLD, s->ndims, s->dims, parts, even ? NULL : cuts,
                                     &d));
    return d;
}

/* Recursive bisection of `box` into n boxes (some may be empty), appended to out. */
static void bisect(int ndims, const int64_t lo[], const int64_t hi[], int n, int64_t (*out)[8],
                   int *count)
{
    if (n == 1) {
        memcpy(out[*count], lo, ndims * sizeof(int64_t));
        memcpy(out[*count] + 4, hi, ndims * sizeof(int64_t));
        (*count)++;
        return;
    }
    int d = (int)rng_range(0, ndims - 1);
    int k = (int)rng_range(1, n - 1);
    int64_t at = rng_range(lo[d], hi[d]);
    int64_t mid_hi[4], mid_lo[4];
    memcpy(mid_hi, hi, sizeof mid_hi);
    memcpy(mid_lo, lo, sizeof mid_lo);
    mid_hi[d] = at;
    mid_lo[d] = at;
    bisect(ndims, lo, mid_hi, k, out, count);
    bisect(ndims, mid_lo, hi, n - k, out, count);
}

static esm_distgrid *random_boxes(const space *s)
{
    const int rank = check()->rank, nranks = check()->nranks;
    int64_t (*boxes)[8] = calloc(nranks, sizeof *boxes);
    int64_t lo[4] = {0}, hi[4];
    memcpy(hi, s->dims, sizeof hi);
    int count = 0;
    bisect(s->ndims, lo, hi, nranks, boxes, &count);
    int *perm = malloc(nranks * sizeof(int));
    for (int r = 0; r < nranks; r++)
        perm[r] = r;
    for (int r = nranks - 1; r > 0; r--) {
        int j = (int)rng_range(0, r), t = perm[r];
        perm[r] = perm[j];
        perm[j] = t;
    }
    esm_distgrid *d;
    int64_t *mine = boxes[perm[rank]];
    CHECK(esm_distgrid_create_boxes(MPI_COMM_WORLD, s->ndims, s->dims, mine, mine + 4, &d));
    free(perm);
    free(boxes);
    return d;
}

static esm_distgrid *random_indices(const space *s)
{
    const int rank = check()->rank, nranks = check()->nranks;
    int64_t levels = s->ndims > 1 && rng_range(0, 1) ? s->dims[s->ndims - 1] : 1;
    int64_t points = s->total / levels;
    /* runs of points to random ranks; each rank's runs in random order, some reversed */
    int64_t *start = malloc((points + 1) * sizeof(int64_t)),
            *len = malloc((points + 1) * sizeof(int64_t));
    int *owner = malloc((points + 1) * sizeof(int)), *rev = malloc((points + 1) * sizeof(int));
    int64_t nruns = 0;
    for (int64_t g = 0; g < points;) {
        int64_t n = rng_range(1, rng_range(0, 1) ? 3 : 40);
        if (n > points - g)
            n = points - g;
        start[nruns] = g;
        len[nruns] = n;
        owner[nruns] = (int)rng_range(0, nranks - 1);
        rev[nruns] = rng_range(0, 3) == 0;
        nruns++;
        g += n;
    }
    for (int64_t i = nruns - 1; i > 0; i--) { /* shuffle the runs */
        int64_t j = rng_range(0, i), t;
        t = start[i], start[i] = start[j], start[j] = t;
        t = len[i], len[i] = len[j], len[j] = t;
        int o = owner[i];
        owner[i] = owner[j];
        owner[j] = o;
        o = rev[i];
        rev[i] = rev[j];
        rev[j] = o;
    }
    int64_t *mine = malloc((points + 1) * sizeof(int64_t)), count = 0;
    for (int64_t i = 0; i < nruns; i++)
        if (owner[i] == rank)
            for (int64_t k = 0; k < len[i]; k++)
                mine[count++] = rev[i] ? start[i] + len[i] - 1 - k : start[i] + k;
    esm_distgrid *d;
    CHECK(esm_distgrid_create_indices(MPI_COMM_WORLD, points, levels, count, mine, &d));
    free(start), free(len), free(owner), free(rev), free(mine);
    return d;
}

static esm_distgrid *random_decomp(int kind, const space *s)
{
    return kind == BLOCKS ? random_blocks(s) : kind == BOXES ? random_boxes(s) : random_indices(s);
}

/* ---- values: exact functions of the global index in every type ---- */
static const esm_type types[] = {ESM_DOUBLE, ESM_FLOAT, ESM_INT32, ESM_INT64};
static double value_of(int64_t global, int field)
{
    return (double)(global * 4 + field + 1);
}

static void fill(esm_type t, void *a, int64_t i, double v)
{
    switch (t) {
    case ESM_DOUBLE:
        ((double *)a)[i] = v;
        break;
    case ESM_FLOAT:
        ((float *)a)[i] = (float)v;
        break;
    case ESM_INT32:
        ((int32_t *)a)[i] = (int32_t)v;
        break;
    case ESM_INT64:
        ((int64_t *)a)[i] = (int64_t)v;
        break;
    }
}
static double read_value(esm_type t, const void *a, int64_t i)
{
    switch (t) {
    case ESM_DOUBLE:
        return ((const double *)a)[i];
    case ESM_FLOAT:
        return ((const float *)a)[i];
    case ESM_INT32:
        return ((const int32_t *)a)[i];
    case ESM_INT64:
        return (double)((const int64_t *)a)[i];
    }
    return NAN;
}

typedef struct {
    esm_distgrid *d;
    int64_t n;
    int64_t *global;
} layout;

static layout make_layout(esm_distgrid *d)
{
    layout l = {d, 0, NULL};
    CHECK(esm_distgrid_local_count(d, &l.n));
    l.global = malloc((l.n + 1) * sizeof(int64_t));
    CHECK(esm_distgrid_global_indices(d, l.global));
    return l;
}

/* nf fields of layout l: filled with the values (fill_values) or a sentinel. */
static void **make_bundle(const layout *l, esm_fields f, int fill_values)
{
    void **b = malloc(f.count * sizeof(void *));
    for (int k = 0; k < f.count; k++) {
        if (check()->shared_memory)
            CHECK(esm_shared_alloc(l->d, (l->n + 1) * esm_type_bytes(f.type), &b[k]));
        else
            b[k] = malloc((l->n + 1) * esm_type_bytes(f.type));
        for (int64_t i = 0; i < l->n; i++)
            fill(f.type, b[k], i, fill_values ? value_of(l->global[i], k) : -7.0);
    }
    return b;
}
static void clear_bundle(const layout *l, esm_fields f, void **b)
{
    for (int k = 0; k < f.count; k++)
        for (int64_t i = 0; i < l->n; i++)
            fill(f.type, b[k], i, -7.0);
}
static void free_bundle(esm_fields f, void **b)
{
    for (int k = 0; k < f.count; k++) {
        if (check()->shared_memory)
            CHECK(esm_shared_free(&b[k]));
        else
            free(b[k]);
    }
    free(b);
}
static int64_t wrong_values(const layout *l, esm_fields f, void **b)
{
    int64_t wrong = 0;
    for (int k = 0; k < f.count; k++)
        for (int64_t i = 0; i < l->n; i++)
            if (read_value(f.type, b[k], i) != value_of(l->global[i], k))
                wrong++;
    return wrong;
}

/* Combination k: the options, and whether the fields are in node-shared memory. */
static void options_of(int k, esm_route_options *o)
{
    o->comm = (esm_comm_mode)(k % 3);
    o->pack = (esm_pack_mode)(k / 3 % 4);
    o->bundle = k / 12 % 2;
    o->local_direct = k / 24 % 2;
    o->single_copy = k / 48 % 2;
    check()->shared_memory = k / 96 % 2;
}
enum { OPTION_COMBINATIONS = 192 };

/* One option combination on A -> B -> A; returns the number of wrong elements (all ranks). */
static int64_t check_options(const layout *A, const layout *B, esm_fields f,
                             const esm_route_options *o, int64_t *moved)
{
    esm_route *ab, *ba;
    CHECK(esm_route_store(A->d, B->d, f, f, o, &ab));
    CHECK(esm_route_store(B->d, A->d, f, f, o, &ba));
    void **a = make_bundle(A, f, 1), **b1 = make_bundle(B, f, 0), **b2 = make_bundle(B, f, 0);
    void **back = make_bundle(A, f, 0);
    int64_t wrong = 0;
    /* twice with one pair of arrays, then with another, then split */
    CHECK(esm_route_run(ab, (const void *const *)a, b1));
    wrong += wrong_values(B, f, b1);
    clear_bundle(B, f, b1);
    CHECK(esm_route_run(ab, (const void *const *)a, b1));
    wrong += wrong_values(B, f, b1);
    CHECK(esm_route_run(ab, (const void *const *)a, b2));
    wrong += wrong_values(B, f, b2);
    CHECK(esm_route_run_begin(ba, (const void *const *)b2, back));
    CHECK(esm_route_run_end(ba));
    wrong += wrong_values(A, f, back); /* the round trip gives A back */
    esm_route_info info;
    CHECK(esm_route_get_info(ab, &info));
    *moved += info.send_bytes;
    free_bundle(f, a), free_bundle(f, b1), free_bundle(f, b2), free_bundle(f, back);
    CHECK(esm_route_free(&ab));
    CHECK(esm_route_free(&ba));
    return wrong;
}

static int parse_range(const char *s, int *a, int *b)
{
    return sscanf(s, "%d-%d", a, b) == 2 || (sscanf(s, "%d", a) == 1 && (*b = *a, 1));
}

static int roundtrip(int argc, char **argv)
{
    const int rank = check()->rank, nranks = check()->nranks;
    int seed_lo = 1, seed_hi = 3, all_options = 0, option_lo = -1, option_hi = -1, pair_lo = 0,
        pair_hi = KINDS * KINDS - 1;
    int sample = 16;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
            parse_range(argv[++i], &seed_lo, &seed_hi);
        else if (!strcmp(argv[i], "--pairs") && i + 1 < argc)
            parse_range(argv[++i], &pair_lo, &pair_hi);
        else if (!strcmp(argv[i], "--all-options"))
            all_options = 1;
        else if (!strcmp(argv[i], "--sample") && i + 1 < argc)
            sample = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--options") && i + 1 < argc)
            parse_range(argv[++i], &option_lo, &option_hi);
    }
    int64_t cases = 0, runs_checked = 0, wrong = 0, moved = 0, elements = 0;
    int kinds_seen[KINDS][KINDS] = {{0}}, options_seen[OPTION_COMBINATIONS] = {0};
    for (int seed = seed_lo; seed <= seed_hi; seed++) {
        check()->rng = 0x5eed0000ull + (uint64_t)seed;
        for (int pair = 0; pair < KINDS * KINDS; pair++) {
            space s;
            s.ndims = (int)rng_range(1, 4);
            s.total = 1;
            int64_t max_extent = s.ndims == 1 ? 400 : s.ndims == 2 ? 30 : s.ndims == 3 ? 10 : 6;
            for (int d = 0; d < s.ndims; d++) {
                s.dims[d] = rng_range(1, max_extent);
                s.total *= s.dims[d];
            }
            int ka = pair / KINDS, kb = pair % KINDS;
            if (pair < pair_lo || pair > pair_hi)
                continue;
            layout A = make_layout(random_decomp(ka, &s));
            layout B = make_layout(random_decomp(kb, &s));
            esm_fields f = {(int)rng_range(1, 3), types[rng_range(0, 3)]};
            /* every combination, or a rotating sample (--sample per pair, from a random start) */
            int first = (int)rng_range(0, OPTION_COMBINATIONS - 1);
            for (int k = 0; k < OPTION_COMBINATIONS; k++) {
                int chosen =
                    all_options ||
                    (option_lo >= 0
                         ? k >= option_lo && k <= option_hi
                         : (k - first + OPTION_COMBINATIONS) % OPTION_COMBINATIONS < sample);
                if (!chosen)
                    continue;
                esm_route_options o;
                options_of(k, &o);
                wrong += check_options(&A, &B, f, &o, &moved);
                cases++;
                runs_checked += 4;
                kinds_seen[ka][kb] = 1;
                options_seen[k] = 1;
            }
            elements += s.total;
            esm_distgrid_free(&A.d);
            esm_distgrid_free(&B.d);
            free(A.global);
            free(B.global);
        }
    }
    int64_t all_wrong = 0, all_moved = 0;
    MPI_Allreduce(&wrong, &all_wrong, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&moved, &all_moved, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    int pairs = 0, options = 0;
    for (int a = 0; a < KINDS; a++)
        for (int b = 0; b < KINDS; b++)
            pairs += kinds_seen[a][b];
    for (int k = 0; k < OPTION_COMBINATIONS; k++)
        options += options_seen[k];
    if (rank == 0) {
        printf("{\"ranks\": %d, \"seeds\": [%d, %d], \"cases\": %" PRId64
               ", \"runs_checked\": %" PRId64
               ", \"kind_pairs\": %d, \"option_combinations\": %d, \"wrong_elements\": %" PRId64
               ", \"bytes_moved\": %" PRId64 ", \"passed\": %s}\n",
               nranks, seed_lo, seed_hi, cases, runs_checked, pairs, options, all_wrong, all_moved,
               all_wrong == 0 ? "true" : "false");
    }
    (void)kind_names;
    (void)elements;
    return all_wrong == 0 ? 0 : 2;
}

/* ---- error cases ---- */
static const char *error_cases[] = {
    "blocks_gap",      "blocks_overlap",      "blocks_parts",         "boxes_overlap",
    "boxes_gap",       "box_outside",         "indices_duplicate",    "indices_outside",
    "indices_overlap", "indices_gap",         "size_mismatch",        "fields_mismatch",
    "type_mismatch",   "inconsistent_fields", "inconsistent_options", "inconsistent_layout",
    "bad_options",     "run_end_first",       "layout_only"};
static int report(int status, esm_status expected)
{
    printf("rank %d: %s: %s: %s\n", check()->rank, check()->current_case, esm_status_name(status),
           status ? esm_error_message() : "no error");
    fflush(stdout);
    return status == (int)expected ? 0 : 3;
}

static int error_case(const char *name)
{
    const int rank = check()->rank, nranks = check()->nranks;
    check()->current_case = name;
    esm_distgrid *a = NULL, *b = NULL;
    esm_route *route = NULL;
    esm_fields f = {2, ESM_DOUBLE};
    int64_t dims[2] = {12, 10};
    int parts[2] = {nranks, 1}, one_by_n[2] = {1, nranks};
    int st;
    if (!strcmp(name, "blocks_gap")) { /* the last cut stops short of the edge */
        int64_t c0[64], c1[2] = {0, 10};
        for (int p = 0; p <= nranks; p++)
            c0[p] = p * 11 / nranks;
        const int64_t *cuts[2] = {c0, c1};
        return report(esm_distgrid_create_blocks(MPI_COMM_WORLD, 2, dims, parts, cuts, &a),
                      ESM_ERR_TILING);
    }
    if (!strcmp(name, "blocks_overlap")) { /* cuts go back */
        int64_t c0[64], c1[2] = {0, 10};
        for (int p = 0; p <= nranks; p++)
            c0[p] = p * 12 / nranks;
        c0[1] = c0[2] + 1;
        const int64_t *cuts[2] = {c0, c1};
        return report(esm_distgrid_create_blocks(MPI_COMM_WORLD, 2, dims, parts, cuts, &a),
                      ESM_ERR_TILING);
    }
    if (!strcmp(name, "blocks_parts")) {
        int wrong[2] = {nranks + 1, 1};
        return report(esm_distgrid_create_blocks(MPI_COMM_WORLD, 2, dims, wrong, NULL, &a),
                      ESM_ERR_ARGUMENT);
    }
    if (!strcmp(name, "boxes_overlap") || !strcmp(name, "boxes_gap")) {
        int64_t lo[2] = {rank * 12 / nranks, 0}, hi[2] = {(rank + 1) * 12 / nranks, 10};
        if (rank == 1) {
            if (!strcmp(name, "boxes_overlap"))
                lo[0]--; /* into rank 0's box */
            else
                lo[0]++;                               /* leave a row to nobody */
        }
        return report(esm_distgrid_create_boxes(MPI_COMM_WORLD, 2, dims, lo, hi, &a),
                      ESM_ERR_TILING);
    }
    if (!strcmp(name, "box_outside")) { /* one rank only: every rank must still fail */
        int64_t lo[2] = {rank * 12 / nranks, 0},
                hi[2] = {(rank + 1) * 12 / nranks, rank == nranks - 1 ? 11 : 10};
        return report(esm_distgrid_create_boxes(MPI_COMM_WORLD, 2, dims, lo, hi, &a),
                      ESM_ERR_ARGUMENT);
    }
    if (!strcmp(name, "indices_duplicate")) {
        int64_t idx[2] = {rank, rank};
        return report(esm_distgrid_create_indices(MPI_COMM_WORLD, nranks, 1, 2, idx, &a),
                      ESM_ERR_TILING);
    }
    if (!strcmp(name, "indices_outside")) {
        int64_t idx[1] = {rank == 0 ? -1 : rank};
        return report(esm_distgrid_create_indices(MPI_COMM_WORLD, nranks, 1, 1, idx, &a),
                      ESM_ERR_ARGUMENT);
    }
    if (!strcmp(name, "indices_overlap") || !strcmp(name, "indices_gap")) {
        /* every rank holds points rank*10 .. rank*10+9 of 10*nranks; rank 1 also holds 0, or gives up 19 */
        int64_t idx[11], n = 0;
        for (int k = 0; k < 10; k++)
            idx[n++] = rank * 10 + k;
        if (rank == 1) {
            if (!strcmp(name, "indices_overlap"))
                idx[n++] = 0;
            else
                n--;
        }
        CHECK(esm_distgrid_create_indices(MPI_COMM_WORLD, 10 * nranks, 1, n, idx, &a));
        int64_t d1[1] = {10 * nranks};
        int p1[1] = {nranks};
        CHECK(esm_distgrid_create_blocks(MPI_COMM_WORLD, 1, d1, p1, NULL, &b));
        return report(esm_route_store(a, b, f, f, NULL, &route), ESM_ERR_TILING);
    }
    CHECK(esm_distgrid_create_blocks(MPI_COMM_WORLD, 2, dims, parts, NULL, &a));
    if (!strcmp(name, "size_mismatch")) {
        int64_t other[2] = {10, 12};
        CHECK(esm_distgrid_create_blocks(MPI_COMM_WORLD, 2, other, one_by_n, NULL, &b));
        return report(esm_route_store(a, b, f, f, NULL, &route), ESM_ERR_MISMATCH);
    }
    CHECK(esm_distgrid_create_blocks(MPI_COMM_WORLD, 2, dims, one_by_n, NULL, &b));
    if (!strcmp(name, "fields_mismatch")) {
        esm_fields g = {3, ESM_DOUBLE};
        return report(esm_route_store(a, b, f, g, NULL, &route), ESM_ERR_MISMATCH);
    }
    if (!strcmp(name, "type_mismatch")) {
        esm_fields g = {2, ESM_FLOAT};
        return report(esm_route_store(a, b, f, g, NULL, &route), ESM_ERR_MISMATCH);
    }
    if (!strcmp(name, "inconsistent_fields")) { /* rank 1 asks for another bundle */
        esm_fields g = {rank == 1 ? 3 : 2, ESM_DOUBLE};
        return report(esm_route_store(a, b, g, g, NULL, &route), ESM_ERR_INCONSISTENT);
    }
    if (!strcmp(name, "inconsistent_options")) {
        esm_route_options o;
        esm_route_options_default(&o);
        o.pack = rank == 1 ? ESM_PACK_XP : ESM_PACK_PET;
        return report(esm_route_store(a, b, f, f, &o, &route), ESM_ERR_INCONSISTENT);
    }
    if (!strcmp(name, "inconsistent_layout")) { /* rank 0 cuts elsewhere */
        int64_t c0[64], c1[2] = {0, 10};
        for (int p = 0; p <= nranks; p++)
            c0[p] = p * 12 / nranks;
        if (rank == 0)
            c0[1]++;
        const int64_t *cuts[2] = {c0, c1};
        esm_distgrid *c = NULL;
        return report(esm_distgrid_create_blocks(MPI_COMM_WORLD, 2, dims, parts, cuts, &c),
                      ESM_ERR_INCONSISTENT);
    }
    if (!strcmp(name, "bad_options")) {
        esm_route_options o;
        esm_route_options_default(&o);
        o.pack = (esm_pack_mode)7;
        return report(esm_route_store(a, b, f, f, &o, &route), ESM_ERR_ARGUMENT);
    }
    if (!strcmp(name, "run_end_first")) {
        CHECK(esm_route_store(a, b, f, f, NULL, &route));
        return report(esm_route_run_end(route), ESM_ERR_STATE);
    }
    if (!strcmp(name, "layout_only")) {
        esm_distgrid *l = NULL;
        CHECK(esm_distgrid_create_blocks(MPI_COMM_NULL, 2, dims, parts, NULL, &l));
        return report(esm_route_store(l, b, f, f, NULL, &route), ESM_ERR_UNSUPPORTED);
    }
    if (rank == 0)
        fprintf(stderr, "redist_check: unknown error case %s\n", name);
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &check()->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &check()->nranks);
    const int rank = check()->rank;
    int rc = 1;
    if (argc >= 2 && !strcmp(argv[1], "roundtrip"))
        rc = roundtrip(argc, argv);
    else if (argc >= 3 && !strcmp(argv[1], "error") && !strcmp(argv[2], "all")) {
        /* every case in one run: each must fail alike on every rank and leave the library usable */
        rc = 0;
        for (size_t i = 0; i < sizeof error_cases / sizeof *error_cases; i++)
            rc |= error_case(error_cases[i]);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            printf("error cases: %zu\n", sizeof error_cases / sizeof *error_cases);
    } else if (argc >= 3 && !strcmp(argv[1], "error"))
        rc = error_case(argv[2]);
    else if (rank == 0)
        fprintf(stderr, "usage: redist_check roundtrip [--seeds A-B] [--pairs P-Q] [--all-options "
                        "| --options K-L | --sample N] | error NAME|all\n");
    MPI_Finalize();
    return rc;
}
