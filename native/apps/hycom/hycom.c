/* hycom: a proxy of the HYbrid Coordinate Ocean Model (HYCOM 2.2) that computes and
 * communicates the way the model does, and proves its answer.
 *
 * A stack of isopycnal layers (default 26, as in the seeds' 1/12 degree benchmark) on a
 * C-grid, stepped split-explicitly. Each baroclinic step:
 *   1. pressure: surface height and each layer's Montgomery potential from the thicknesses;
 *   2. faces: thickness at u and v faces, the depth-integrated pressure force;
 *   3. baroclinic velocities: pressure force less its depth mean, Coriolis, viscosity;
 *      then any depth mean is removed (the barotropic mode lives in ub, vb);
 *   4. barotropic substeps (tens of them): forward-backward surface height and transports;
 *   5. continuity: every layer's thickness from its transport, whose depth sum is the
 *      substep-averaged barotropic transport: layer masses conserved to round-off.
 * Halos are `width` rings wide (1-6) and exchanged by persistent requests (MPI_Startall +
 * MPI_Waitall) only when the kernels have used them up: each kernel computes into the halo
 * as far as its inputs are valid (esm_region), HYCOM's margin. Every step an allreduce
 * gathers the CFL number and the thinnest layer; every `diag` steps another sums the layer
 * masses (exactly: the same bits on any number of tiles).
 *
 * Tiles are cut for the rank count (HYCOM's patch.input), land tiles dropped.
 *
 * Verified: layer masses conserved to round-off, thickness positive, CFL < 1; with --case
 * wave, a linear inertia-gravity wave in a flat periodic basin follows the scheme's discrete
 * dispersion relation exactly and the continuous one (omega^2 = f^2 + g H k^2) closely.
 * Folded under SMPI (esm_fold.h): fields shared, each flush of kernels charged, not verified
 * (docs/ocean.md, "Seed scale"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hycom.h"

static const esm_deck decks[] = {
    {"S", 128, 96, 26, 32, 24, 20, "2.8 x 1.6 degree global, 26 layers: seconds on 2 cores"},
    {"M", 512, 384, 26, 64, 48, 10, "0.7 x 0.4 degree global, 26 layers"},
    {"L", 1500, 1100, 26, 75, 55, 5, "0.24 x 0.14 degree global, 26 layers"},
    {"glb0.08", 4500, 3298, 26, 150, 97, 3, "the seeds' 1/12 degree global benchmark, 26 layers"},
};

/* ---- halo groups ---------------------------------------------------------------------- */

/* Before an exchange the queued kernels run (hycom_flush: they write what is sent), timed by
 * the phase's timer `phase`; the exchange itself is timed by `t` alone, not by `phase`. */
static void exchange(hycom *m, esm_halo *halo, double **fields, esm_timer *phase, esm_timer *t)
{
    hycom_flush(m);
    esm_timer_stop(phase);
    esm_timer_start(t);
    esm_halo_update(halo, fields);
    esm_timer_stop(t);
    esm_timer_start(phase);
}

/* The layer thicknesses and the velocity arrays `u`, `v` (old or new) in one message per
 * neighbour; their valid regions become the full halo. */
static void exchange_layers(hycom *m, double *u, double *v, esm_region *ru, esm_region *rv,
                            esm_timer *phase, esm_timer *t)
{
    exchange(m, m->layer_halo, (double *[]){m->h, u, v}, phase, t);
    m->ok.h = *ru = *rv = esm_region_full(m->width);
}

static void exchange_barotropic(hycom *m, esm_timer *phase, esm_timer *t)
{
    exchange(m, m->barotropic_halo, (double *[]){m->eta, m->ub, m->vb}, phase, t);
    m->ok.eta = m->ok.ub = m->ok.vb = esm_region_full(m->width);
}

/* Compute `out` = where a kernel's inputs allow; when that misses part of the interior,
 * exchange (`refresh`) and compute it again. */
#define WHERE(out, region, refresh)                                                                \
    do {                                                                                           \
        out = (region);                                                                            \
        if (!esm_region_covers(out)) {                                                             \
            refresh;                                                                               \
            out = (region);                                                                        \
        }                                                                                          \
        if (!esm_region_covers(out))                                                               \
            esm_fail_if_any(true, "internal error: %s cannot cover the interior", #region);        \
    } while (0)

#define AFTER esm_region_after
#define MEET esm_region_meet
/* What the layer kernels must cover: the continuity needs u on the east faces and v on the
 * north faces of the interior; v (Coriolis) needs u one ring further south, east and north. */
static const esm_region INTERIOR = {0, 0, 0, 0}, U_NEEDED = {0, 1, 1, 1}, V_NEEDED = {0, 0, 0, 1};

typedef struct {
    esm_timer kernels, barotropic, halo_layers, halo_barotropic, diagnostics;
} timers;

/* ---- one baroclinic step ---------------------------------------------------------------- */

static void step(hycom *m, timers *t)
{
    valid *ok = &m->ok;
    esm_region out, ru, rv;
#define BAROTROPIC exchange_barotropic(m, &t->barotropic, &t->halo_barotropic)
#define LAYERS(u, v, ru, rv) exchange_layers(m, u, v, ru, rv, &t->kernels, &t->halo_layers)

    esm_phase_begin("baroclinic");
    esm_timer_start(&t->kernels);
    /* 1-2. pressure, surface height, faces: from the thicknesses */
    WHERE(out, MEET(AFTER(ok->h, -1, 0, 0, 0), AFTER(ok->h, 0, 0, -1, 0)),
          LAYERS(m->u, m->v, &ok->u, &ok->v));
    kernel_pressure(m, ok->h);
    ok->p = ok->eta = ok->h;
    kernel_faces_u(m, ok->fu = MEET(AFTER(ok->h, -1, 0, 0, 0), AFTER(ok->p, -1, 0, 0, 0)));
    kernel_faces_v(m, ok->fv = MEET(AFTER(ok->h, 0, 0, -1, 0), AFTER(ok->p, 0, 0, -1, 0)));

    /* 3. baroclinic velocities: u, then v with the new u; no depth mean. Only as far into
     *    the halo as v and the continuity need: the layers are exchanged every step anyway. */
    WHERE(ru, MEET(MEET(ok->fu, AFTER(ok->v, -1, 0, 0, 1)), AFTER(ok->u, -1, 1, -1, 1)),
          LAYERS(m->u, m->v, &ok->u, &ok->v));
    kernel_momentum_u(m, ok->u_next = MEET(ru, U_NEEDED));
    WHERE(rv, MEET(MEET(ok->fv, AFTER(ok->u_next, 0, 1, -1, 0)), AFTER(ok->v, -1, 1, -1, 1)),
          LAYERS(m->u_next, m->v, &ok->u_next, &ok->v));
    kernel_momentum_v(m, ok->v_next = MEET(rv, V_NEEDED));
    kernel_project(m, ok->u_next, ok->v_next);
    hycom_flush(m);
    esm_timer_stop(&t->kernels);
    esm_phase_end("baroclinic");

    /* 4. barotropic substeps, forward-backward, consuming the wide halo */
    esm_phase_begin("barotropic");
    esm_timer_start(&t->barotropic);
    for (int s = 0; s < m->substeps; s++) {
        WHERE(out, MEET(MEET(AFTER(ok->ub, 0, 1, 0, 0), AFTER(ok->vb, 0, 0, 0, 1)), ok->eta),
              BAROTROPIC);
        kernel_mean_add(m, ok->ub, ok->vb, s == 0);
        ok->ubm = s ? MEET(ok->ubm, ok->ub) : ok->ub;
        ok->vbm = s ? MEET(ok->vbm, ok->vb) : ok->vb;
        kernel_barotropic_eta(m, ok->eta = out);
        WHERE(out,
              MEET(MEET(AFTER(ok->eta, -1, 0, 0, 0), AFTER(ok->vb, -1, 0, 0, 1)),
                   MEET(ok->fu, ok->ub)),
              BAROTROPIC);
        kernel_barotropic_u(m, ok->ub = out);
        WHERE(out,
              MEET(MEET(AFTER(ok->eta, 0, 0, -1, 0), AFTER(ok->ub, 0, 1, -1, 0)),
                   MEET(ok->fv, ok->vb)),
              BAROTROPIC);
        kernel_barotropic_v(m, ok->vb = out);
    }
    kernel_mean_scale(m, ok->ubm, ok->vbm, 1.0 / m->substeps);
    hycom_flush(m);
    esm_timer_stop(&t->barotropic);
    esm_phase_end("barotropic");

    /* 5. continuity */
    esm_phase_begin("baroclinic");
    esm_timer_start(&t->kernels);
    esm_region faces = MEET(MEET(AFTER(ok->fu, 0, 1, 0, 0), AFTER(ok->fv, 0, 0, 0, 1)),
                            MEET(AFTER(ok->ubm, 0, 1, 0, 0), AFTER(ok->vbm, 0, 0, 0, 1)));
    WHERE(out,
          MEET(MEET(faces, ok->h),
               MEET(AFTER(ok->u_next, 0, 1, 0, 0), AFTER(ok->v_next, 0, 0, 0, 1))),
          LAYERS(m->u_next, m->v_next, &ok->u_next, &ok->v_next));
    kernel_continuity(m, ok->h_next = MEET(out, INTERIOR));
    hycom_flush(m);
    double *swap;
    swap = m->h;
    m->h = m->h_next;
    m->h_next = swap;
    swap = m->u;
    m->u = m->u_next;
    m->u_next = swap;
    swap = m->v;
    m->v = m->v_next;
    m->v_next = swap;
    ok->h = ok->h_next;
    ok->u = ok->u_next;
    ok->v = ok->v_next;
    esm_timer_stop(&t->kernels);
    esm_phase_end("baroclinic");
#undef BAROTROPIC
#undef LAYERS
}

/* ---- diagnostics -------------------------------------------------------------------------- */

/* Interior points of this rank's tiles (land included: the kernels run over whole tiles). */
static double interior_points(const hycom *m)
{
    double n = 0;
    for (int lb = 0; lb < m->d.nlocal; lb++)
        n += (double)m->d.block[m->d.local[lb]].ni * m->d.block[m->d.local[lb]].nj;
    return n;
}

/* Over one row of one layer: the largest |velocity| dt/dx, and the thinnest wet layer. */
ESM_SIMD static void cfl_row(int n, double dt_dx, double dt_dy, const double *restrict u,
                             const double *restrict ubar, const double *restrict v,
                             const double *restrict vbar, const double *restrict h,
                             const double *restrict mt, double *cfl, double *thin)
{
    double c = *cfl, t = *thin;
    for (int i = 0; i < n; i++) {
        double cu = fabs(u[i] + ubar[i]) * dt_dx, cv = fabs(v[i] + vbar[i]) * dt_dy;
        double wet = mt[i] > 0 ? h[i] : INFINITY;
        c = c > cu ? c : cu;
        c = c > cv ? c : cv;
        t = t < wet ? t : wet;
    }
    *cfl = c;
    *thin = t;
}

/* Largest CFL number of the layer velocities and thinnest wet layer: one allreduce. */
static void cfl_and_thinnest(const hycom *m, double *cfl, double *thinnest)
{
    double c = 0.0, thin = INFINITY;
    const long sk = m->l3.stride_k;
    static const esm_kernel kernel = {.name = "hycom.cfl",
                                      .flops = 4}; /* a level point: 2 +, 2 x */
    double n = (double)m->nz * interior_points(m); /* reads u, v, h; ub, vb, both totals, mt */
    if (esm_kernel_begin(&kernel, n, (3.0 * m->nz + 5) * sizeof(double) * n / m->nz)) {
        for (int lb = 0; lb < m->d.nlocal; lb++) {
            const esm_block *b = &m->d.block[m->d.local[lb]];
            for (int j = 0; j < b->nj; j++) {
                double dx = hycom_row(m->row_dxt, m, b->j0 + j);
                long q0 = esm_at(&m->l2, lb, 0, j, 0), p0 = esm_at(&m->l3, lb, 0, j, 0);
                double *ubar = m->row_a, *vbar = m->row_b;   /* the barotropic velocities */
                for (int i = 0; i < b->ni; i++) {
                    long q = q0 + i;
                    ubar[i] = m->hu_total[q] > 0 ? m->ub[q] / m->hu_total[q] : 0;
                    vbar[i] = m->hv_total[q] > 0 ? m->vb[q] / m->hv_total[q] : 0;
                }
                for (int k = 0; k < m->nz; k++)
                    cfl_row(b->ni, m->dt / dx, m->dt / m->dy, m->u + p0 + k * sk, ubar,
                            m->v + p0 + k * sk, vbar, m->h + p0 + k * sk, m->mt + q0, &c, &thin);
            }
        }
        esm_kernel_end(&kernel);
    }
    double ext[2] = {c, -thin};
    esm_global_max(ext, 2);
    *cfl = ext[0];
    *thinnest = -ext[1];
}

/* Every layer's mass (volume), summed exactly: one allreduce. */
static void layer_masses(const hycom *m, double *mass)
{
    esm_sum *sums = esm_calloc(m->nz, sizeof *sums);
    /* h x area, and the exact sum's 17 (esm_sum_add: a scaling, 8 limbs of 2) */
    static const esm_kernel kernel = {.name = "hycom.layer_masses", .flops = 1 + 17};
    double n = (double)m->nz * interior_points(m); /* reads h */
    if (esm_kernel_begin(&kernel, n, sizeof(double) * n)) {
        for (int lb = 0; lb < m->d.nlocal; lb++) {
            const esm_block *b = &m->d.block[m->d.local[lb]];
            for (int k = 0; k < m->nz; k++)
                for (int j = 0; j < b->nj; j++) {
                    double area = hycom_row(m->row_dxt, m, b->j0 + j) * m->dy;
                    for (int i = 0; i < b->ni; i++)
                        esm_sum_add(&sums[k], m->h[esm_at(&m->l3, lb, i, j, k)] * area);
                }
        }
        esm_kernel_end(&kernel);
    }
    esm_global_sums(sums, m->nz, mass);
    free(sums);
}

/* The wave's amplitude: projection of eta on cos(k x) (exact sums: one allreduce). */
static double wave_projection(const hycom *m)
{
    esm_sum sums[2] = {{0}};
    for (int lb = 0; lb < m->d.nlocal; lb++) {
        const esm_block *b = &m->d.block[m->d.local[lb]];
        for (int j = 0; j < b->nj; j++)
            for (int i = 0; i < b->ni; i++) {
                double c = cos(m->wave_k * (b->i0 + i + 0.5) * m->dy);
                esm_sum_add(&sums[0], m->eta[esm_at(&m->l2, lb, i, j, 0)] * c);
                esm_sum_add(&sums[1], c * c);
            }
    }
    double out[2];
    esm_global_sums(sums, 2, out);
    return out[0] / out[1];
}

/* The scheme's own answer for the wave: one substep maps (eta, u, v) of the Fourier mode
 * linearly (C-grid differences and averages, forward-backward, Sielecki Coriolis). */
typedef struct {
    double g[3][3];
    double state[3];
    double omega;
} wave_model;

static void wave_model_create(wave_model *w, const hycom *m)
{
    double dx = m->dy, s = 2.0 / dx * sin(m->wave_k * dx / 2), c = cos(m->wave_k * dx / 2);
    double tau = m->dtau, gh = m->gravity * m->wave_depth, f = m->wave_f;
    for (int col = 0; col < 3; col++) {
        double x[3] = {col == 0, col == 1, col == 2};
        x[0] = x[0] - tau * s * x[1];
        x[1] = x[1] + tau * gh * s * x[0] + tau * f * c * x[2];
        x[2] = x[2] - tau * f * c * x[1];
        for (int row = 0; row < 3; row++)
            w->g[row][col] = x[row];
    }
    w->state[0] = m->wave_amplitude;
    w->state[1] = w->state[2] = 0;
    double trace = w->g[0][0] + w->g[1][1] + w->g[2][2]; /* eigenvalues 1, exp(+-i omega tau) */
    w->omega = acos((trace - 1) / 2) / tau;
}

static double wave_model_step(wave_model *w, int substeps)
{
    for (int s = 0; s < substeps; s++) {
        double y[3];
        for (int r = 0; r < 3; r++)
            y[r] = w->g[r][0] * w->state[0] + w->g[r][1] * w->state[1] + w->g[r][2] * w->state[2];
        memcpy(w->state, y, sizeof y);
    }
    return w->state[0];
}

/* ---- the run ------------------------------------------------------------------------------ */

typedef struct hycom_run {
    const esm_deck *deck;
    long steps, warmup;
    int nx, ny, nz, bx, by, width, diag;
    hycom_case kind;
    const char *case_name, *halo_name, *stream_name;
    esm_distribution distribution;
    bool tiles_given;                       /* --block: else patch chooses tiles for the ranks */
    hycom m;
    timers t;
    double *mass0, *mass;                   /* every layer's mass: at the start, lately */
    double worst_cfl, thinnest, worst_drift;
    wave_model wave;                        /* the wave case: the scheme's answer ... */
    double omega_theory, wave_vs_scheme, wave_vs_theory;    /* ... theory's, the misfits */
    double wall, bytes0;
    esm_counts counts0, counts1;
} hycom_run;

static void parse(hycom_run *run, int argc, char **argv)
{
    esm_cli *cli = esm_cli_begin(argc, argv,
                                 "HYCOM proxy: multi-layer isopycnal ocean on a "
                                 "C-grid, split-explicit, wide halos, persistent halo exchange");
    run->deck = esm_cli_size(cli, decks, sizeof decks / sizeof *decks);
    run->nx = run->deck->nx, run->ny = run->deck->ny, run->bx = run->deck->bx,
    run->by = run->deck->by;
    run->steps = esm_cli_int(cli, "steps", run->deck->steps, 1, 1000000, "time steps timed");
    run->warmup = esm_cli_int(cli, "warmup", 1, 0, 1000, "time steps before timing");
    run->case_name = esm_cli_choice(cli, "case", "basin,wave",
                                    "global basin with eddies, or the linear wave test");
    run->width = (int)esm_cli_int(cli, "halo-width", 6, 1, 6, "halo rings (HYCOM's nbdy)");
    run->halo_name = esm_cli_choice(cli, "halo", "persistent,isend", "halo exchange engine");
    const char *distribution = esm_cli_choice(cli, "distribution", "patch,cartesian,sfc",
                                              "tiles to ranks: HYCOM's patch (tiles chosen for "
                                              "the rank count unless --block), a Cartesian grid "
                                              "of ranks, or a space-filling curve");
    esm_cli_pair(cli, "grid", &run->nx, &run->ny, 100000, "global grid, overrides the size's");
    esm_cli_pair(cli, "block", &run->bx, &run->by, 100000,
                 "tile size (patch: chosen for the "
                 "rank count when absent)");
    run->nz = (int)esm_cli_int(cli, "layers", run->deck->nz, 1, 200, "isopycnal layers");
    run->diag = (int)esm_cli_int(cli, "diag", 10, 1, 1000000, "steps between layer-mass sums");
    run->stream_name = esm_cli_choice(cli, "stream", "on,off", "measure the STREAM triad roofline");
    run->tiles_given = esm_cli_given(cli, "block") != NULL;
    esm_cli_end(cli);
    run->kind = strcmp(run->case_name, "wave") ? CASE_BASIN : CASE_WAVE;
    run->distribution = !strcmp(distribution, "sfc")         ? ESM_DIST_SFC
                        : !strcmp(distribution, "cartesian") ? ESM_DIST_CARTESIAN
                                                             : ESM_DIST_PATCH;
}

static void set_up(hycom_run *run)
{
    hycom *m = &run->m;
    esm_block_choice choice = run->distribution == ESM_DIST_PATCH && !run->tiles_given
                                  ? ESM_BLOCKS_FOR_RANKS
                                  : ESM_BLOCKS_GIVEN;
    hycom_create(m, run->kind, run->nx, run->ny, run->nz, run->bx, run->by, run->width,
                 run->distribution, choice, esm_halo_engine_named(run->halo_name));
    run->bx = m->d.bx;
    run->by = m->d.by;
    run->mass0 = esm_calloc(run->nz, sizeof(double));
    run->mass = esm_calloc(run->nz, sizeof(double));
    layer_masses(m, run->mass0);
    run->thinnest = INFINITY;
    if (run->kind == CASE_WAVE) {
        wave_model_create(&run->wave, m);
        run->omega_theory =
            sqrt(m->wave_f * m->wave_f + m->gravity * m->wave_depth * m->wave_k * m->wave_k);
    }
    run->t = (timers){{.name = "kernels"},
                      {.name = "barotropic"},
                      {.name = "halo_layers"},
                      {.name = "halo_barotropic"},
                      {.name = "diagnostics"}};
}

/* After the warm-up: timers and counts from zero, ranks together. */
static void start_timing(hycom_run *run)
{
    esm_timer *all[] = {&run->t.kernels, &run->t.barotropic, &run->t.halo_layers,
                        &run->t.halo_barotropic, &run->t.diagnostics};
    for (int k = 0; k < 5; k++)
        esm_timer_reset(all[k]);
    run->bytes0 = run->m.bytes;
    esm_barrier();
    run->counts0 = *esm_counts_mine();
    run->wall = esm_wtime();
    esm_timed_begin();
}

/* After step number `done` (from 1): CFL and thinnest layer every step, layer masses every
 * `diag` steps and at the end, the wave's amplitude against the scheme and the theory. */
static void diagnose(hycom_run *run, long done, bool last)
{
    hycom *m = &run->m;
    esm_timer_start(&run->t.diagnostics);
    double cfl, thin;
    cfl_and_thinnest(m, &cfl, &thin);
    run->worst_cfl = fmax(run->worst_cfl, cfl);
    run->thinnest = fmin(run->thinnest, thin);
    if (done % run->diag == 0 || last) {
        layer_masses(m, run->mass);
        for (int k = 0; k < run->nz; k++)
            run->worst_drift =
                fmax(run->worst_drift, fabs(run->mass[k] - run->mass0[k]) / run->mass0[k]);
    }
    if (run->kind == CASE_WAVE) {
        double measured = wave_projection(m) / m->wave_amplitude;
        double scheme = wave_model_step(&run->wave, m->substeps) / m->wave_amplitude;
        double omega = run->omega_theory, f2 = m->wave_f * m->wave_f / (omega * omega);
        double theory = f2 + (1 - f2) * cos(omega * done * m->dt);
        run->wave_vs_scheme = fmax(run->wave_vs_scheme, fabs(measured - scheme));
        run->wave_vs_theory = fmax(run->wave_vs_theory, fabs(measured - theory));
    }
    esm_timer_stop(&run->t.diagnostics);
}

/* A bitwise fingerprint of the final state: the same bits on any number of tiles. */
static void fingerprint(const hycom_run *run, esm_result *r)
{
    const hycom *m = &run->m;
    uint64_t checksum = 0;
    static const esm_kernel kernel = {.name = "hycom.fingerprint",
                                      .flops = 0}; /* integer checksum */
    double n = (3.0 * run->nz + 2) * interior_points(m); /* reads every value once */
    if (esm_kernel_begin(&kernel, n, sizeof(double) * n)) {
        for (int lb = 0; lb < m->d.nlocal; lb++) {
            const esm_block *b = &m->d.block[m->d.local[lb]];
            for (int j = 0; j < b->nj; j++)
                for (int i = 0; i < b->ni; i++) {
                    long gid = ((b->i0 + i) + (long)run->nx * (b->j0 + j)) * (3L * run->nz + 2);
                    long q = esm_at(&m->l2, lb, i, j, 0);
                    esm_checksum_add(&checksum, gid, m->ub[q]);
                    esm_checksum_add(&checksum, gid + 1, m->vb[q]);
                    for (int k = 0; k < run->nz; k++) {
                        long p = esm_at(&m->l3, lb, i, j, k);
                        esm_checksum_add(&checksum, gid + 2 + 3 * k, m->h[p]);
                        esm_checksum_add(&checksum, gid + 3 + 3 * k, m->u[p]);
                        esm_checksum_add(&checksum, gid + 4 + 3 * k, m->v[p]);
                    }
                }
        }
        esm_kernel_end(&kernel);
    }
    char hex[24];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)esm_global_checksum(checksum));
    esm_result_text(r, "checksum.state", hex);
}

/* Verification, performance model, kernel bandwidth against STREAM: the result line. */
static int report(hycom_run *run)
{
    const hycom *m = &run->m;
    long steps = run->steps;
    esm_result *r = esm_result_new("hycom", run->deck->name, steps);

    double omega_error = 0;
    bool passed = run->worst_drift <= 1e-12 && run->thinnest > 0 && run->worst_cfl < 1;
    if (run->kind == CASE_WAVE) {
        omega_error = fabs(run->wave.omega - run->omega_theory) / run->omega_theory;
        passed = passed && run->wave_vs_scheme <= 1e-5 && run->wave_vs_theory <= 1e-2 &&
                 omega_error <= 1e-3;
    }
    bool meaningful = esm_report_verification(
        r, passed,
        run->kind == CASE_WAVE
            ? "linear inertia-gravity wave vs the discrete and continuous dispersion relations; "
              "layer mass conserved; thickness positive; CFL < 1"
            : "layer mass conserved; thickness positive; CFL < 1");
    if (meaningful) {
        esm_result_norm(r, "layer_mass_drift", run->worst_drift);
        esm_result_norm(r, "thinnest_layer", run->thinnest);
        esm_result_norm(r, "cfl", run->worst_cfl);
    }
    if (run->kind == CASE_WAVE && meaningful) {
        esm_result_norm(r, "wave_vs_scheme", run->wave_vs_scheme);
        esm_result_norm(r, "wave_vs_theory", run->wave_vs_theory);
        esm_result_norm(r, "omega_vs_theory", omega_error);
    }
    fingerprint(run, r);
    double total_mass = 0;
    for (int k = 0; k < run->nz; k++)
        total_mass += run->mass[k];
    esm_result_real(r, "layers.mass_total", total_mass);

    /* performance: bytes and the slowest rank's kernel time over the timed steps */
    esm_sum kernel_bytes = {0};
    esm_sum_add(&kernel_bytes, m->bytes - run->bytes0);
    double total_bytes, slowest[2] = {run->wall, run->t.kernels.total + run->t.barotropic.total};
    esm_global_sums(&kernel_bytes, 1, &total_bytes);
    esm_global_max(slowest, 2);
    double wall = slowest[0], GBps = total_bytes / fmax(slowest[1], 1e-30) / 1e9;
    esm_result_wall(r, wall);
    esm_result_fom(r, steps * m->dt / (365.0 * 86400.0) / (wall / 86400.0), "SYPD", true);
    esm_result_real(r, "model.bytes_per_point",
                    total_bytes / steps / ((double)m->d.ocean_points * run->nz));
    esm_report_counts(r, &run->counts0, &run->counts1, steps);
    esm_result_real(r, "model.steps_per_second", steps / wall);

    esm_result_text(r, "params.case", run->case_name);
    esm_report_grid(r, run->nx, run->ny, run->nz, run->bx, run->by);
    esm_result_int(r, "params.halo_width", run->width);
    esm_result_text(r, "params.halo", run->halo_name);
    esm_report_decomp(r, &m->d);
    esm_result_real(r, "params.dt", m->dt);
    esm_result_real(r, "params.dtau", m->dtau);
    esm_result_int(r, "params.substeps", m->substeps);
    esm_result_real(r, "params.viscosity", m->viscosity);
    esm_result_int(r, "params.warmup", run->warmup);
    esm_result_int(r, "params.diag", run->diag);

    esm_stream stream = {0};
    if (!strcmp(run->stream_name, "on"))
        stream = esm_stream_triad(64.0, 10);
    esm_report_stream(r, stream);
    esm_report_kernel(r, "all", GBps, stream);
    esm_timer *timers[] = {&run->t.kernels, &run->t.barotropic, &run->t.halo_layers,
                           &run->t.halo_barotropic, &run->t.diagnostics};
    esm_result_timers(r, timers, 5);
    return esm_result_finish(r);
}

int main(int argc, char **argv)
{
    esm_init(&argc, &argv, "hycom");
    hycom_run run = {0};
    parse(&run, argc, argv);
    set_up(&run);
    for (long n = -run.warmup; n < run.steps; n++) {
        if (n == 0)
            start_timing(&run);
        step(&run.m, &run.t);
        diagnose(&run, n + run.warmup + 1, n == run.steps - 1);
    }
    esm_timed_end();
    run.wall = esm_wtime() - run.wall;
    run.counts1 = *esm_counts_mine();
    esm_exit(report(&run));
}
