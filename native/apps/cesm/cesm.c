/* cesm: a proxy of the CESM coupled model (CESM 1.0.3, compset B1850CN: active atmosphere,
 * ocean, land and sea ice through the cpl7 coupler) that computes a real, cheap coupled climate
 * and communicates the way CESM does.
 *
 * Components (models.c), each on its own decomposition of its own grid:
 *   atm  energy-balance atmosphere, advection-diffusion, on the atmosphere grid
 *   lnd  soil heat bucket on the atmosphere grid's land points
 *   ice  zero-layer sea-ice thermodynamics on the ocean grid
 *   ocn  slab mixed-layer ocean with lateral diffusion, on the ocean grid (other continents' mask)
 * Where each works (work.c, --work): sea ice under the climatological ice cover, radiation on
 * the sunlit columns every CAM radiation step, land and ocean on their points; the kernels are
 * charged by those points as CESM's decompositions share them among the ranks.
 * Processor sets (--layout): atm, lnd, ice and the coupler share the first ranks; the ocean runs
 * on the same ranks after them (sequential) or concurrently on the last ranks (concurrent).
 *
 * Each coupling interval (interval.c; ccsm_comp_mod's run loop, ocean lagged by one interval):
 *   C2O  barrier, infodata broadcast, forcing to the ocean      OCN_RUN (ocean ranks)
 *   ATMOCN map the atmosphere's state to the ocean grid (conservative sparse matrix)
 *   C2I  broadcast, rearrange, ICE_RUN, I2C                     (each phase after a barrier)
 *   C2L  broadcast, rearrange, LND_RUN, L2C
 *   CPL  atmosphere-ocean fluxes, ocean forcing, map to the atmosphere grid, merge with land
 *   C2A  broadcast, rearrange, ATM_RUN, A2C
 *   O2C  barrier, ocean state to the coupler; history and restart files when due
 * Verified (report.c): the maps conserve (global integrals equal) and keep constants; the
 * coupled system's energy changes by exactly the sunlight absorbed minus the longwave lost (the
 * coupler's in-transit fluxes included); checksums the same for any rank count, layout and MPI
 * stack. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "driver.h"

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
    run->work = esm_cli_choice(cli, "work", "physics,uniform",
                               "what each component's kernels are charged for: the points the "
                               "physics works on (ice, daylight, land, ocean as CESM's "
                               "decompositions share them), or every point every call");
    run->cost = esm_cli_choice(cli, "cost", "proxy,cesm-low,cesm-high",
                               "what a simulated run charges the kernels: the proxy's own "
                               "byte model, or CESM 1.0.3's measured cost of each component "
                               "(both ends of its band; needs computation = model)");
    run->input = esm_cli_choice(cli, "input", "none,cesm",
                                "start-up input: none, or what CESM 1.0.3 reads on a root and "
                                "broadcasts at start-up (size 1deg, simulated with a file system), "
                                "profiled with the timed intervals");
    run->fault = esm_cli_choice(cli, "fault", "none,map,leak,input",
                                "inject a fault the verification must catch: a wrong map weight, "
                                "an ocean point that drops its forcing, a start-up broadcast "
                                "changed on arrival (--input cesm)");
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

/* The atmosphere's blocks as CAM's finite-volume dynamics cuts its grid: its 2-D decomposition
 * gives each task a latitude band of at least 3 rows (npr_y bands) and a range of levels
 * (npr_z), evenly. Here: the most bands of 3 rows or more that divide the rows and the ranks;
 * the levels the one-layer proxy lacks become that many equal pieces of each band's columns.
 * One block per rank; false where the grid does not divide so (the halving rule then). */
static bool cam_fv_blocks(int nx, int ny, int ranks, int *bx, int *by)
{
    for (int npr_y = ny / 3; npr_y >= 1; npr_y--) {
        int npr_x = ranks / npr_y;
        if (ranks % npr_y || ny % npr_y || nx % npr_x)
            continue;
        *bx = nx / npr_x;
        *by = ny / npr_y;
        return true;
    }
    return false;
}

/* The grids, their overlaps and the land fraction of deck k: every rank builds them alike
 * (shared between simulated ranks when folded, esm_shared). */
typedef struct cesm_geometry {
    cesm_grid atm, ocn;
    cesm_overlaps ov;
    double *land_fraction; /* per atmosphere cell; 0 below LAND_MIN */
} cesm_geometry;

static void *geometry_of(const void *context)
{
    int k = *(const int *)context;
    const esm_deck *d = &decks[k];
    cesm_geometry *g = esm_calloc(1, sizeof *g);
    cesm_grid_atm(&g->atm, d->nx, d->ny);
    cesm_grid_ocn(&g->ocn, ocean_decks[k].nx, ocean_decks[k].ny);
    cesm_overlaps_create(&g->ov, &g->atm, &g->ocn);
    g->land_fraction = esm_calloc((long)d->nx * d->ny, sizeof(double));
    for (int J = 0; J < d->ny; J++)
        for (int I = 0; I < d->nx; I++) {
            double lf = 1.0 - cesm_ocean_area(&g->ov, &g->atm, &g->ocn, I, J) / g->atm.area[J];
            g->land_fraction[I + (long)d->nx * J] = lf > LAND_MIN ? lf : 0.0;
        }
    return g;
}

/* Grids, land fraction, processor sets; all bad input found here, on every rank alike. */
static void plan(cesm_run *run)
{
    const esm_deck *d = run->deck;
    int k = (int)(d - decks);
    char key[64];
    snprintf(key, sizeof key, "cesm.geometry.%s", d->name);
    cesm_geometry *geometry = esm_shared(key, geometry_of, &k);
    run->atm_g = geometry->atm; /* the run owns the arrays (never freed) */
    run->ocn_g = geometry->ocn;
    run->ov = geometry->ov;
    run->land_fraction = geometry->land_fraction;
    if (esm_shared_owned())
        free(geometry);

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
    /* Each component's blocks: the atmosphere's as CAM's FV dynamics cuts them (above); the
     * others the deck's size, halved (the longer side first) until every rank of the
     * component gets a block with a point of it, as CESM's PE layouts choose the block sizes
     * of POP and CICE per processor count. */
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
        if (c == 0)
            cam_fv_blocks(nx, ny, need[c].ranks, &bx, &by);
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

/* What each component's kernels are charged (cost.c): per coupling interval, the points its
 * kernels work on over the whole grid, counted as they count them. */
static void set_costs(cesm_run *run)
{
    esm_fail_if_any(strcmp(run->cost, "proxy") && !esm_kernel_cost_modelled(),
                    "--cost %s charges CESM 1.0.3's measured cost as simulated time: run it "
                    "simulated with computation = model and a machine (esmperf simulate cesm "
                    "--computation model --machine dell-m610 ...), or use --cost proxy",
                    run->cost);
    double atm = (double)run->atm_g.nactive, ocn = (double)run->ocn_g.nactive;
    double lnd = 0;
    for (long p = 0; p < (long)run->atm_g.nx * run->atm_g.ny; p++)
        lnd += run->land_fraction[p] > 0;
    cesm_cost_set(&run->atm.cost, run->cost, CESM_COST_ATM, atm * run->atm_substeps, run->dt);
    cesm_cost_set(&run->lnd.cost, run->cost, CESM_COST_LND, lnd, run->dt);
    cesm_cost_set(&run->ice.cost, run->cost, CESM_COST_ICE, ocn, run->dt);
    cesm_cost_set(&run->ocn.cost, run->cost, CESM_COST_OCN, ocn * run->ocn_substeps, run->dt);
    /* the coupler's ice preparation (atm + ocn points), fluxes (ocn), merge (atm + land) */
    cesm_cost_set(&run->cpl.cost, run->cost, CESM_COST_CPL, 2 * atm + 2 * ocn + lnd, run->dt);
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
        run->atm.uniform = run->lnd.uniform = run->ice.uniform = !strcmp(run->work, "uniform");
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
    set_costs(run);
    if (!strcmp(run->input, "cesm")) {
        esm_fail_if_any(strcmp(d->name, "1deg") || !esm_file_system_modelled(),
                        "--input cesm reads CESM 1.0.3's start-up input of f09_g16 from a "
                        "simulated file system: run --size 1deg on the smpi stack with one "
                        "(esmperf simulate cesm --size 1deg --file-system nfs-low ...), "
                        "or use --input none");
        run->map_weights = run->cpl.a2o.nnz; /* the atmosphere-ocean map's, all ranks' */
        esm_global_sum_long(&run->map_weights, 1);
    }
    cesm_values_into(run->a2x, run->atm.pts.n, A2X_N);
    cesm_values_into(run->x2a, run->atm.pts.n, X2A_N);
    cesm_values_into(run->x2l, run->lnd.pts.n, X2L_N);
    cesm_values_into(run->l2x, run->lnd.pts.n, L2X_N);
    cesm_values_into(run->x2i, run->ice.pts.n, X2I_N);
    cesm_values_into(run->i2x, run->ice.pts.n, I2X_N);
    cesm_values_into(run->x2o, run->ocn.pts.n, X2O_N);
    cesm_values_into(run->o2x, run->ocn.pts.n, O2X_N);
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
    if (run->in_atm) {
        esm_group_enter(run->g_atm);
        atm_export(&run->atm, 0.0, 0, run->dt, run->a2x);
        esm_group_leave();
    }
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
    run->t_input = (esm_timer){.name = "input", .phase = true};
}

void cesm_work_mine(const cesm_run *run, long out[CESM_WORK_N])
{
    out[CESM_WORK_ATM] = run->atm.work;
    out[CESM_WORK_RAD] = run->atm.work_radiation;
    out[CESM_WORK_LND] = run->lnd.work;
    out[CESM_WORK_ICE] = run->ice.work;
    out[CESM_WORK_OCN] = run->ocn.work;
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
    bool output = !strcmp(run.output, "on"), input = !strcmp(run.input, "cesm");
    long middle = run.steps / 2;

    for (long k = -run.warmup; k < run.steps; k++) {
        if (k == 0) { /* timing starts: counts and timers from zero */
            esm_timer *all[] = {&run.t_atm,     &run.t_lnd,   &run.t_ice,
                                &run.t_ocn,     &run.t_cpl,   &run.t_rearrange,
                                &run.t_barrier, &run.t_bcast, &run.t_io};
            for (int t = 0; t < 9; t++)
                esm_timer_reset(all[t]);
            esm_barrier();
            if (input) { /* the profile's timed region is the deck's whole run, start-up too */
                esm_timed_begin();
                read_input(&run);
            }
            run.counts0 = *esm_counts_mine();
            run.rc0 = esm_rearrange_counts_mine();
            run.gc0 = esm_group_counts_mine();
            cesm_work_mine(&run, run.work0);
            run.wall = esm_wtime(); /* the figure of merit: the intervals (CESM's Run Time) */
            if (!input)
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
    cesm_work_mine(&run, run.work1);
    energies(&run, e1);
    esm_exit(report(&run, e0, e1, constant_error));
}
