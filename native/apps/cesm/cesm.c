/* cesm: a proxy of the CESM coupled model (CESM 1.0.3, compset B1850CN: active atmosphere,
 * ocean, land and sea ice through the cpl7 coupler) that computes a real, cheap coupled climate
 * and communicates the way CESM does.
 *
 * Components (models.c), each on its own decomposition of its own grid:
 *   atm  energy-balance atmosphere, advection-diffusion, on the atmosphere grid
 *   lnd  soil heat bucket on the atmosphere grid's land points
 *   ice  zero-layer sea-ice thermodynamics on the ocean grid
 *   ocn  slab mixed-layer ocean with lateral diffusion, on the ocean grid (other continents' mask)
 * Processor sets (--layout): atm, lnd, ice and the coupler share the first ranks; the ocean runs
 * on the same ranks after them (sequential) or concurrently on the last ranks (concurrent).
 *
 * Each coupling interval (ccsm_comp_mod's run loop, ocean lagged by one interval):
 *   C2O  barrier, infodata broadcast, forcing to the ocean      OCN_RUN (ocean ranks)
 *   ATMOCN map the atmosphere's state to the ocean grid (conservative sparse matrix)
 *   C2I  broadcast, rearrange, ICE_RUN, I2C                     (each phase after a barrier)
 *   C2L  broadcast, rearrange, LND_RUN, L2C
 *   CPL  atmosphere-ocean fluxes, ocean forcing, map to the atmosphere grid, merge with land
 *   C2A  broadcast, rearrange, ATM_RUN, A2C
 *   O2C  barrier, ocean state to the coupler; history and restart files when due
 * Verified: the maps conserve (global integrals equal) and keep constants; the coupled system's
 * energy changes by exactly the sunlight absorbed minus the longwave lost (the coupler's
 * in-transit fluxes included); checksums the same for any rank count, layout and MPI stack. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "coupler.h"

/* nx, ny: atmosphere grid; steps: coupling intervals of 30 min; the ocean grid and block sizes
 * per deck below. */
static const esm_deck decks[] = {
    {"S", 96, 48, 1, 12, 8, 240,
     "atm 96x48 (T31-like 3.75 deg), ocean 100x116 (gx3-like): 5 days, seconds"},
    {"M", 144, 96, 1, 12, 12, 96, "atm 144x96 (f19, 1.9x2.5 deg), ocean 320x384 (gx1): 2 days"},
    {"1deg", 288, 192, 1, 24, 16, 48, "atm 288x192 (f09, CESM's 1 degree), ocean 320x384 (gx1)"},
};
static const struct {
    int nx, ny, bx, by;
} ocean_decks[] = {{100, 116, 10, 12}, {320, 384, 32, 32}, {320, 384, 20, 24}};

typedef struct cesm_run {
    const esm_deck *deck;
    long steps, warmup;
    double dt, ocean_fraction;
    const char *layout, *barriers, *output, *output_dir, *fault;
    int atm_substeps, ocn_substeps, ranks, cpl_ranks, ocn_first, ocn_ranks;
    int block[4][2];               /* bx, by of the atmosphere, land, sea ice and ocean */
    cesm_grid atm_g, ocn_g;
    cesm_overlaps ov;
    double *land_fraction;
    esm_group *g_atm, *g_ocn;      /* atm, lnd, ice and the coupler; the ocean */
    bool in_atm, in_ocn;
    atm_model atm;
    ocn_model ocn;
    lnd_model lnd;
    ice_model ice;
    coupler cpl;
    double *a2x[A2X_N], *x2a[X2A_N], *x2l[X2L_N], *l2x[L2X_N], *x2i[X2I_N], *i2x[I2X_N];
    double *x2o[X2O_N], *o2x[O2X_N];
    cesm_file_plan h_atm, h_lnd, h_ice, h_ocn, r_cpl;
    cesm_info info_atm, info_lnd, info_ice, info_ocn;
    esm_timer t_atm, t_lnd, t_ice, t_ocn, t_cpl, t_rearrange, t_barrier, t_bcast, t_io;
    long bytes_written, files_written, barrier_phases;
    double wall;
    esm_counts counts0, counts1;
    esm_rearrange_counts rc0, rc1;
    esm_group_counts gc0, gc1;
} cesm_run;

static void parse(cesm_run *run, int argc, char **argv)
{
    esm_cli *cli = esm_cli_begin(argc, argv,
                                 "CESM proxy: atmosphere, land, sea ice and ocean "
                                 "through a coupler (MCT-style rearrangers, conservative maps)");
    run->deck = esm_cli_size(cli, decks, sizeof decks / sizeof *decks);
    run->steps =
        esm_cli_int(cli, "steps", run->deck->steps, 1, 10000000, "coupling intervals timed");
    run->warmup = esm_cli_int(cli, "warmup", 1, 0, 1000, "coupling intervals before timing");
    run->layout = esm_cli_choice(cli, "layout", "sequential,concurrent",
                                 "processor sets: all components on all ranks one after another, "
                                 "or the ocean on its own ranks beside the others");
    run->ocean_fraction = esm_cli_real(cli, "ocean-fraction", 0.25, 0.01, 0.99,
                                       "concurrent: share of the ranks for the ocean");
    run->barriers =
        esm_cli_choice(cli, "barriers", "on,off", "the driver's timing barriers around each phase");
    run->output = esm_cli_choice(cli, "output", "on,off",
                                 "history (beginning, middle, end) and restart files");
    run->output_dir =
        esm_cli_text(cli, "output-dir", ".", "directory for history and restart files");
    run->dt = esm_cli_real(cli, "dt", 1800, 60, 86400, "coupling interval, seconds");
    run->atm_substeps =
        (int)esm_cli_int(cli, "atm-substeps", 3, 1, 100, "atmosphere steps per coupling interval");
    run->ocn_substeps =
        (int)esm_cli_int(cli, "ocn-substeps", 2, 1, 100, "ocean steps per coupling interval");
    run->fault = esm_cli_choice(cli, "fault", "none,map,leak",
                                "inject a fault the verification must catch: a wrong map weight, "
                                "an ocean point that drops its forcing");
    esm_cli_end(cli);
}

/* Blocks of an nx x ny grid cut bx x by that hold a point where `has` is true. */
static int blocks_with(int nx, int ny, int bx, int by, const unsigned char *active,
                       const double *fraction)
{
    int count = 0;
    for (int j0 = 0; j0 < ny; j0 += by)
        for (int i0 = 0; i0 < nx; i0 += bx) {
            bool any = false;
            for (int j = j0; j < j0 + by && j < ny && !any; j++)
                for (int i = i0; i < i0 + bx && i < nx && !any; i++)
                    any = active ? active[i + (long)nx * j] : fraction[i + (long)nx * j] > 0;
            count += any;
        }
    return count;
}

/* Grids, land fraction, processor sets; all bad input found here, on every rank alike. */
static void plan(cesm_run *run)
{
    const esm_deck *d = run->deck;
    int k = (int)(d - decks);
    cesm_grid_atm(&run->atm_g, d->nx, d->ny);
    cesm_grid_ocn(&run->ocn_g, ocean_decks[k].nx, ocean_decks[k].ny);
    cesm_overlaps_create(&run->ov, &run->atm_g, &run->ocn_g);
    long na = (long)d->nx * d->ny;
    run->land_fraction = esm_calloc(na, sizeof(double));
    for (int J = 0; J < d->ny; J++)
        for (int I = 0; I < d->nx; I++) {
            double lf = 1.0 - cesm_ocean_area(&run->ov, &run->atm_g, &run->ocn_g, I, J) /
                                  run->atm_g.area[J];
            run->land_fraction[I + (long)d->nx * J] = lf > LAND_MIN ? lf : 0.0;
        }

    run->ranks = esm_ranks();
    bool concurrent = !strcmp(run->layout, "concurrent");
    if (concurrent && run->ranks < 2)
        esm_fail("--layout concurrent puts the ocean on ranks of its own and needs at least 2 "
                 "ranks: use --layout sequential or more ranks");
    if (concurrent) {
        run->ocn_ranks = (int)lround(run->ranks * run->ocean_fraction);
        run->ocn_ranks = run->ocn_ranks < 1                ? 1
                         : run->ocn_ranks > run->ranks - 1 ? run->ranks - 1
                                                           : run->ocn_ranks;
        run->cpl_ranks = run->ranks - run->ocn_ranks;
        run->ocn_first = run->cpl_ranks;
    } else {
        run->ocn_ranks = run->cpl_ranks = run->ranks;
        run->ocn_first = 0;
    }
    /* Each component's blocks: the deck's size, halved (the longer side first) until every
     * rank of the component gets a block with a point of it, as CESM's PE layouts choose the
     * block sizes of POP and CICE per processor count (1deg on 384 ranks: the atmosphere's
     * 24 x 16 blocks give only 144). */
    struct {
        const char *what;
        const cesm_grid *g;
        const unsigned char *active;
        const double *fraction;
        int bx, by, ranks;
    } need[] = {
        {"atmosphere", &run->atm_g, run->atm_g.active, NULL, d->bx, d->by, run->cpl_ranks},
        {"land", &run->atm_g, NULL, run->land_fraction, d->bx, d->by, run->cpl_ranks},
        {"sea-ice", &run->ocn_g, run->ocn_g.active, NULL, ocean_decks[k].bx, ocean_decks[k].by,
         run->cpl_ranks},
        {"ocean", &run->ocn_g, run->ocn_g.active, NULL, ocean_decks[k].bx, ocean_decks[k].by,
         run->ocn_ranks},
    };
    for (int c = 0; c < 4; c++) {
        int bx = need[c].bx, by = need[c].by, nx = need[c].g->nx, ny = need[c].g->ny;
        int blocks = blocks_with(nx, ny, bx, by, need[c].active, need[c].fraction);
        while (blocks < need[c].ranks && (bx > 2 || by > 2)) {
            if (bx >= by)
                bx = (bx + 1) / 2;
            else
                by = (by + 1) / 2;
            blocks = blocks_with(nx, ny, bx, by, need[c].active, need[c].fraction);
        }
        if (blocks < need[c].ranks)
            esm_fail("the %s model gets %d ranks but has only %d blocks at --size %s: use fewer "
                     "ranks, a larger --size or, for the ocean, a smaller --ocean-fraction",
                     need[c].what, need[c].ranks, blocks, d->name);
        run->block[c][0] = bx;
        run->block[c][1] = by;
    }
    bool bad_dir = false;
    if (!strcmp(run->output, "on")) {
        struct stat st;
        bad_dir = stat(run->output_dir, &st) != 0 || !S_ISDIR(st.st_mode) ||
                  access(run->output_dir, W_OK | X_OK) != 0;
    }
    esm_fail_if_any(bad_dir,
                    "--output-dir %s is not a writable directory: create it, choose "
                    "another, or use --output off",
                    run->output_dir);
}

static double **alloc_into(double *dst[], long n, int nfields)
{
    for (int f = 0; f < nfields; f++)
        dst[f] = esm_calloc(n + 1, sizeof(double));
    return dst;
}

/* Processor sets, components on theirs, the coupler, file plans, first exchanges. */
static void set_up(cesm_run *run)
{
    const esm_deck *d = run->deck;
    run->g_atm = esm_group_create(0, run->cpl_ranks);
    run->g_ocn = esm_group_create(run->ocn_first, run->ocn_ranks);
    run->in_atm = esm_group_member(run->g_atm);
    run->in_ocn = esm_group_member(run->g_ocn);
    if (run->in_atm) {
        esm_group_enter(run->g_atm);
        atm_create(&run->atm, &run->atm_g, run->block[0][0], run->block[0][1], run->atm_substeps,
                   run->dt);
        lnd_create(&run->lnd, &run->atm_g, run->land_fraction, run->block[1][0], run->block[1][1]);
        ice_create(&run->ice, &run->ocn_g, run->block[2][0], run->block[2][1]);
        esm_group_leave();
    }
    if (run->in_ocn) {
        esm_group_enter(run->g_ocn);
        ocn_create(&run->ocn, &run->ocn_g, run->block[3][0], run->block[3][1], run->ocn_substeps,
                   run->dt);
        run->ocn.leak = !strcmp(run->fault, "leak") && esm_rank() == 0;
        esm_group_leave();
    }
    coupler_create(&run->cpl, &run->atm_g, &run->ocn_g, &run->ov, run->land_fraction,
                   run->cpl_ranks, &run->atm.pts, &run->lnd.pts, &run->ice.pts, &run->ocn.pts,
                   !strcmp(run->fault, "map"));
    alloc_into(run->a2x, run->atm.pts.n, A2X_N);
    alloc_into(run->x2a, run->atm.pts.n, X2A_N);
    alloc_into(run->x2l, run->lnd.pts.n, X2L_N);
    alloc_into(run->l2x, run->lnd.pts.n, L2X_N);
    alloc_into(run->x2i, run->ice.pts.n, X2I_N);
    alloc_into(run->i2x, run->ice.pts.n, I2X_N);
    alloc_into(run->x2o, run->ocn.pts.n, X2O_N);
    alloc_into(run->o2x, run->ocn.pts.n, O2X_N);
    file_plan_create(&run->h_atm, "atm", &run->atm_g, &run->atm.pts, NULL, 3, 0);
    {
        unsigned char *land = esm_calloc((size_t)d->nx * d->ny, 1);
        for (long p = 0; p < (long)d->nx * d->ny; p++)
            land[p] = run->land_fraction[p] > 0;
        file_plan_create(&run->h_lnd, "lnd", &run->atm_g, &run->lnd.pts, land, 2, 0);
        free(land);
    }
    file_plan_create(&run->h_ice, "ice", &run->ocn_g, &run->ice.pts, run->ocn_g.active, 3, 0);
    file_plan_create(&run->h_ocn, "ocn", &run->ocn_g, &run->ocn.pts, run->ocn_g.active, 2,
                     run->ocn_first);
    file_plan_create(&run->r_cpl, "cpl", &run->ocn_g, &run->cpl.o, run->ocn_g.active, 2, 0);

    /* initial exchanges (the driver's init phase): the atmosphere's and ocean's states */
    atm_export(&run->atm, 0.0, run->a2x);
    esm_rearrange(run->cpl.a2c, (const double *const *)run->a2x, run->cpl.a2x);
    ocn_export(&run->ocn, run->o2x);
    esm_rearrange(run->cpl.o2c, (const double *const *)run->o2x, run->cpl.o2x);
    /* every timer is also a phase of the profile: components, and the driver's own work */
    run->t_atm = (esm_timer){.name = "atm", .phase = true};
    run->t_lnd = (esm_timer){.name = "lnd", .phase = true};
    run->t_ice = (esm_timer){.name = "ice", .phase = true};
    run->t_ocn = (esm_timer){.name = "ocn", .phase = true};
    run->t_cpl = (esm_timer){.name = "cpl", .phase = true};
    run->t_rearrange = (esm_timer){.name = "rearrange", .phase = true};
    run->t_barrier = (esm_timer){.name = "barrier", .phase = true};
    run->t_bcast = (esm_timer){.name = "bcast", .phase = true};
    run->t_io = (esm_timer){.name = "io", .phase = true};
}

/* CESM's timing barrier before a phase, on the ranks of the phase's set (NULL: every rank). */
static void barrier(cesm_run *run, esm_group *g)
{
    if (strcmp(run->barriers, "on") || (g && !esm_group_member(g)))
        return;
    esm_timer_start(&run->t_barrier);
    if (g)
        esm_group_enter(g);
    esm_barrier();
    if (g)
        esm_group_leave();
    esm_timer_stop(&run->t_barrier);
    run->barrier_phases++;
}

/* seq_infodata_exchange: the coupler's root sends the clock and shared state to a component's
 * ranks: the coupler's and the component's ranks together (NULL: every rank, the ocean's
 * case); world rank 0, the coupler's root, is rank 0 of each. */
static void infodata(cesm_run *run, esm_group *g, const cesm_info *info, cesm_info *copy)
{
    if (g && !esm_group_member(g))
        return;
    esm_timer_start(&run->t_bcast);
    *copy = *info;
    if (g)
        esm_group_enter(g);
    esm_broadcast(copy, sizeof *copy, 0);
    if (g)
        esm_group_leave();
    esm_timer_stop(&run->t_bcast);
}

static void rearrange(cesm_run *run, esm_rearranger *r, double *const *src, double *const *dst)
{
    esm_timer_start(&run->t_rearrange);
    esm_rearrange(r, (const double *const *)src, dst);
    esm_timer_stop(&run->t_rearrange);
}

static void emit(cesm_run *run, cesm_file_plan *plan, const char *kind, const cesm_info *info,
                 const char *const names[], double *const fields[])
{
    long bytes = file_write(plan, run->output_dir, kind, info->interval, info->seconds + info->dt,
                            names, (const double *const *)fields);
    run->bytes_written += bytes;
    run->files_written += bytes > 0;
}

/* History (kind "h0") or restart ("r") files of every component and, for restarts, the
 * coupler's fluxes in transit. */
static void write_files(cesm_run *run, const cesm_info *info, bool restart)
{
    static const char *atm[] = {"T_atm", "flux_sfc", "T_sfc"}, *lnd[] = {"T_lnd", "flux_lnd"};
    static const char *ice[] = {"h_ice", "frac_ice", "T_ice_sfc"}, *ocn[] = {"T_ocn", "frazil"};
    static const char *cpl[] = {"x2o_heat", "o2x_frazil"};
    barrier(run, NULL);
    esm_timer_start(&run->t_io);
    const char *kind = restart ? "r" : "h0";
    emit(run, &run->h_atm, kind, info, atm,
         (double *[]){run->a2x[A2X_T], run->x2a[X2A_FLUX], run->x2a[X2A_TSFC]});
    emit(run, &run->h_lnd, kind, info, lnd, (double *[]){run->lnd.t, run->l2x[L2X_FLUX]});
    emit(run, &run->h_ice, kind, info, ice,
         (double *[]){run->ice.h, run->i2x[I2X_FRAC], run->i2x[I2X_TSFC]});
    emit(run, &run->h_ocn, kind, info, ocn, run->o2x);
    if (restart)
        emit(run, &run->r_cpl, kind, info, cpl,
             (double *[]){run->cpl.x2o[X2O_HEAT], run->cpl.o2x[O2X_FRAZIL]});
    esm_timer_stop(&run->t_io);
}

/* One coupling interval of the driver. */
static void coupling_interval(cesm_run *run, const cesm_info *info)
{
    coupler *c = &run->cpl;
    double dt = info->dt;

    barrier(run, NULL);                                   /* C2O */
    infodata(run, NULL, info, &run->info_ocn);
    rearrange(run, c->c2o, c->x2o, run->x2o);
    if (run->in_ocn) {                                    /* OCN_RUN */
        barrier(run, run->g_ocn);
        esm_timer_start(&run->t_ocn);
        esm_group_enter(run->g_ocn);
        ocn_run(&run->ocn, (const double *const *)run->x2o, run->o2x);
        esm_group_leave();
        esm_timer_stop(&run->t_ocn);
    }
    if (run->in_atm) {
        barrier(run, run->g_atm);                         /* ATMOCN: state to the ocean grid */
        esm_timer_start(&run->t_cpl);
        coupler_ice_prep(c);
        esm_timer_stop(&run->t_cpl);

        barrier(run, run->g_atm);                         /* C2I, ICE_RUN, I2C */
        infodata(run, run->g_atm, info, &run->info_ice);
        rearrange(run, c->c2i, c->x2i, run->x2i);
        barrier(run, run->g_atm);
        esm_timer_start(&run->t_ice);
        ice_run(&run->ice, (const double *const *)run->x2i, run->i2x, run->info_ice.dt);
        esm_timer_stop(&run->t_ice);
        barrier(run, run->g_atm);
        rearrange(run, c->i2c, run->i2x, c->i2x);

        barrier(run, run->g_atm);                         /* C2L, LND_RUN, L2C */
        infodata(run, run->g_atm, info, &run->info_lnd);
        rearrange(run, c->c2l, c->a2x, run->x2l);
        barrier(run, run->g_atm);
        esm_timer_start(&run->t_lnd);
        lnd_run(&run->lnd, (const double *const *)run->x2l, run->l2x, run->info_lnd.dt);
        esm_timer_stop(&run->t_lnd);
        barrier(run, run->g_atm);
        rearrange(run, c->l2c, run->l2x, c->l2x);

        barrier(run, run->g_atm);                         /* CPL: fluxes, map, merge */
        esm_timer_start(&run->t_cpl);
        coupler_atm_prep(c, dt);
        esm_timer_stop(&run->t_cpl);

        barrier(run, run->g_atm);                         /* C2A, ATM_RUN, A2C */
        infodata(run, run->g_atm, info, &run->info_atm);
        rearrange(run, c->c2a, c->x2a, run->x2a);
        barrier(run, run->g_atm);
        esm_timer_start(&run->t_atm);
        esm_group_enter(run->g_atm);
        atm_run(&run->atm, (const double *const *)run->x2a);
        atm_export(&run->atm, run->info_atm.seconds + run->info_atm.dt, run->a2x);
        esm_group_leave();
        esm_timer_stop(&run->t_atm);
        barrier(run, run->g_atm);
        rearrange(run, c->a2c, run->a2x, c->a2x);
    }
    barrier(run, NULL);                                   /* O2C */
    rearrange(run, c->o2c, run->o2x, c->o2x);
}

/* Energy of every component and of the coupler's in-transit fluxes, and the external forcing
 * so far: [atm, lnd, ice, ocn, cpl, sw_lnd, sw_ice, sw_ocn, olr]. Collective. */
static void energies(cesm_run *run, double out[9])
{
    esm_sum s[9] = {{0}};
    atm_energy(&run->atm, &s[0]);
    lnd_energy(&run->lnd, &s[1]);
    ice_energy(&run->ice, &s[2]);
    ocn_energy(&run->ocn, &s[3]);
    coupler_energy(&run->cpl, run->dt, &s[4]);
    esm_sum_add_array(&s[5], run->lnd.sw, run->lnd.pts.n);
    esm_sum_add_array(&s[6], run->ice.sw, run->ice.pts.n);
    esm_sum_add_array(&s[7], run->cpl.ocean_sw, run->cpl.o.n);
    esm_sum_add_array(&s[8], run->atm.olr, run->atm.pts.n);
    esm_global_sums(s, 9, out);
}

static void checksum_of(esm_result *r, const char *name, const cesm_points *pts, const double *v,
                        const long *at)
{
    uint64_t sum = 0;
    for (long p = 0; p < pts->n; p++)
        esm_checksum_add(&sum, pts->global[p], v[at ? at[p] : p]);
    char hex[24], path[64];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)esm_global_checksum(sum));
    snprintf(path, sizeof path, "checksum.%s", name);
    esm_result_text(r, path, hex);
}

static int report(cesm_run *run, const double e0[9], const double e1[9], double constant_error)
{
    long steps = run->steps, intervals = run->steps + run->warmup;
    esm_result *r = esm_result_new("cesm", run->deck->name, steps);

    /* verification */
    double content0 = e0[0] + e0[1] + e0[2] + e0[3] + e0[4];
    double content1 = e1[0] + e1[1] + e1[2] + e1[3] + e1[4];
    double sw = e1[5] + e1[6] + e1[7], olr = e1[8];
    double residual = (content1 - content0) - (sw - olr);
    double closure = fabs(residual) / (sw + olr);
    double magnitude = fabs(e1[0]) + fabs(e1[1]) + fabs(e1[2]) + fabs(e1[3]) + fabs(e1[4]);
    esm_sum parts[6] = {{0}};
    const coupler *c = &run->cpl;
    long source_points[2] = {c->a.n, c->o.n}, destination_points[2] = {c->o.n, c->a.n};
    for (int k = 0; k < 2; k++) { /* map k: a2o shortwave, o2a heat flux */
        esm_sum_add_array(&parts[k], c->map_src[k], source_points[k]);
        esm_sum_add_array(&parts[2 + k], c->map_dst[k], destination_points[k]);
        esm_sum_add_array(&parts[4 + k], c->map_gross[k], source_points[k]);
    }
    double m[6];
    esm_global_sums(parts, 6, m);
    double map_sw = fabs(m[2] - m[0]) / m[4], map_flux = fabs(m[3] - m[1]) / m[5];
    bool passed =
        map_sw <= 1e-12 && map_flux <= 1e-12 && constant_error <= 1e-13 && closure <= 1e-11;
    if (esm_folded()) /* the kernels ran on their first calls only: the values mean nothing */
        esm_result_unverified(r, "not verified: folded run");
    else {
        esm_result_verification(r, passed,
                                "conservative maps (global integrals equal on both "
                                "grids, constants kept); coupled energy budget closed: change = "
                                "absorbed sunlight - outgoing longwave");
        esm_result_norm(r, "map_a2o_conservation", map_sw);
        esm_result_norm(r, "map_o2a_conservation", map_flux);
        esm_result_norm(r, "map_constant_error", constant_error);
        esm_result_norm(r, "energy_closure", closure);
        esm_result_norm(r, "energy_closure_of_content", fabs(residual) / magnitude);
    }
    esm_result_real(r, "energy.residual_J", residual);
    esm_result_real(r, "energy.change_J", content1 - content0);
    esm_result_real(r, "energy.sw_absorbed_J", sw);
    esm_result_real(r, "energy.olr_J", olr);
    const char *names[] = {"atm", "lnd", "ice", "ocn", "cpl_in_transit"};
    for (int k = 0; k < 5; k++) {
        char path[64];
        snprintf(path, sizeof path, "energy.%s_J", names[k]);
        esm_result_real(r, path, e1[k]);
    }
    checksum_of(r, "atm", &run->atm.pts, run->atm.t, run->atm.at);
    checksum_of(r, "lnd", &run->lnd.pts, run->lnd.t, NULL);
    checksum_of(r, "ice", &run->ice.pts, run->ice.h, NULL);
    checksum_of(r, "ocn", &run->ocn.pts, run->ocn.t, run->ocn.at);
    checksum_of(r, "cpl_x2o", &run->cpl.o, run->cpl.x2o[X2O_HEAT], NULL);

    /* performance: counts over the timed intervals, summed over ranks */
    long mine[] = {
        run->counts1.isend - run->counts0.isend,
        run->counts1.irecv - run->counts0.irecv,
        run->rc1.wait - run->rc0.wait,
        run->counts1.waitall - run->counts0.waitall,
        run->counts1.barrier - run->counts0.barrier,
        run->gc1.bcast - run->gc0.bcast,
        run->counts1.allreduce - run->counts0.allreduce,
        (run->rc1.messages - run->rc0.messages) + (run->counts1.messages - run->counts0.messages),
        (run->rc1.bytes_sent - run->rc0.bytes_sent) +
            (run->counts1.bytes_sent - run->counts0.bytes_sent),
        run->bytes_written,
        run->files_written,
        esm_rearranger_bytes(run->cpl.a2o.gather) + esm_rearranger_bytes(run->cpl.o2a.gather),
        run->cpl.a2o.nnz + run->cpl.o2a.nnz,
        run->lnd.pts.n,
    };
    enum { N = sizeof mine / sizeof *mine };
    long total[N];
    memcpy(total, mine, sizeof mine);
    esm_global_sum_long(total, N);
    double slowest = run->wall;
    esm_global_max(&slowest, 1);
    esm_result_wall(r, slowest);
    double years = steps * run->dt / (365.0 * 86400.0);
    esm_result_fom(r, years / (slowest / 86400.0), "SYPD", true);
    const char *per[] = {"isend", "irecv",     "wait",     "waitall",   "barrier",
                         "bcast", "allreduce", "messages", "bytes_sent"};
    for (int k = 0; k < 9; k++) {
        char path[96];
        snprintf(path, sizeof path, "model.%s_per_interval", per[k]);
        esm_result_real(r, path, (double)total[k] / steps);
    }
    esm_result_real(r, "model.map_bytes_per_interval",
                    8.0 *
                        (A2X_N * (double)run->ocn_g.nactive + 3.0 * run->atm_g.nx * run->atm_g.ny));
    esm_result_real(r, "model.map_gather_bytes_per_interval", (double)total[11]);
    esm_result_int(r, "model.map_nonzeros", total[12]);
    esm_result_real(r, "model.simulated_days", steps * run->dt / 86400.0);

    esm_result_int(r, "driver.intervals", intervals);
    esm_result_int(r, "driver.barriers", total[4]);
    esm_result_int(r, "driver.bcasts", total[5]);
    esm_result_int(r, "io.bytes_written", total[9]);
    esm_result_int(r, "io.files", total[10]);

    esm_rearrange_counts rc = esm_rearrange_counts_mine();
    esm_group_counts gc = esm_group_counts_mine();
    long all[] = {rc.wait,      rc.rearranges, rc.messages, rc.bytes_sent,
                  rc.allgather, rc.allgatherv, gc.bcast,    gc.comm_split};
    esm_global_sum_long(all, 8);
    const char *cn[] = {"wait",      "rearranges", "messages", "bytes_sent",
                        "allgather", "allgatherv", "bcast",    "comm_split"};
    for (int k = 0; k < 8; k++) {
        char path[64];
        snprintf(path, sizeof path, "coupling_comm.%s", cn[k]);
        esm_result_int(r, path, all[k]);
    }

    esm_result_text(r, "params.layout", run->layout);
    esm_result_text(r, "params.barriers", run->barriers);
    esm_result_text(r, "params.output", run->output);
    esm_result_text(r, "params.fault", run->fault);
    esm_result_int(r, "params.warmup", run->warmup);
    esm_result_real(r, "params.dt", run->dt);
    esm_result_int(r, "params.atm_nx", run->atm_g.nx);
    esm_result_int(r, "params.atm_ny", run->atm_g.ny);
    esm_result_int(r, "params.ocn_nx", run->ocn_g.nx);
    esm_result_int(r, "params.ocn_ny", run->ocn_g.ny);
    const char *blocked[] = {"atm", "lnd", "ice", "ocn"};
    for (int c = 0; c < 4; c++) {
        char path[40], size[24];
        snprintf(path, sizeof path, "params.%s_block", blocked[c]);
        snprintf(size, sizeof size, "%dx%d", run->block[c][0], run->block[c][1]);
        esm_result_text(r, path, size);
    }
    esm_result_int(r, "params.ocean_points", run->ocn_g.nactive);
    esm_result_int(r, "params.land_points", total[13]);
    esm_result_int(r, "params.cpl_ranks", run->cpl_ranks);
    esm_result_int(r, "params.ocn_ranks", run->ocn_ranks);
    esm_result_int(r, "params.ocn_first_rank", run->ocn_first);
    esm_result_int(r, "params.atm_substeps", run->atm_substeps);
    esm_result_int(r, "params.ocn_substeps", run->ocn_substeps);
    esm_timer *timers[] = {&run->t_atm,     &run->t_lnd,   &run->t_ice,
                           &run->t_ocn,     &run->t_cpl,   &run->t_rearrange,
                           &run->t_barrier, &run->t_bcast, &run->t_io};
    esm_result_timers(r, timers, 9);
    return esm_result_finish(r);
}

int main(int argc, char **argv)
{
    esm_init(&argc, &argv, "cesm");
    cesm_run run = {0};
    parse(&run, argc, argv);
    plan(&run);
    set_up(&run);
    double constant_error = coupler_constant_error(&run.cpl);
    double e0[9], e1[9];
    energies(&run, e0);
    bool output = !strcmp(run.output, "on");
    long middle = run.steps / 2;

    for (long k = -run.warmup; k < run.steps; k++) {
        if (k == 0) { /* timing starts: counts and timers from zero */
            esm_timer *all[] = {&run.t_atm,     &run.t_lnd,   &run.t_ice,
                                &run.t_ocn,     &run.t_cpl,   &run.t_rearrange,
                                &run.t_barrier, &run.t_bcast, &run.t_io};
            for (int t = 0; t < 9; t++)
                esm_timer_reset(all[t]);
            esm_barrier();
            run.counts0 = *esm_counts_mine();
            run.rc0 = esm_rearrange_counts_mine();
            run.gc0 = esm_group_counts_mine();
            run.wall = esm_wtime();
            esm_timed_begin();
        }
        cesm_info info = {.interval = k + run.warmup,
                          .seconds = (k + run.warmup) * run.dt,
                          .dt = run.dt,
                          .history = output && (k == 0 || k == middle || k == run.steps - 1),
                          .restart = output && k == run.steps - 1,
                          .stop = k == run.steps - 1};
        coupling_interval(&run, &info);
        if (info.history)
            write_files(&run, &info, false);
        if (info.restart)
            write_files(&run, &info, true);
    }
    esm_timed_end();
    run.wall = esm_wtime() - run.wall;
    run.counts1 = *esm_counts_mine();
    run.rc1 = esm_rearrange_counts_mine();
    run.gc1 = esm_group_counts_mine();
    energies(&run, e1);
    esm_exit(report(&run, e0, e1, constant_error));
}
