/* homme: a proxy of HOMME, NCAR's spectral-element atmospheric dynamical core, in its
 * shallow-water form (HOMME's sweqx), the code scaled to 13,824 cores on JUROPA in the
 * HPC Advisory Council white paper (../shared/seeds/002).
 *
 * What it solves: the shallow-water equations on the sphere (sweq.h) with continuous-Galerkin
 * spectral elements on the cubed sphere (cube.h): ne x ne elements per face, 4 x 4 GLL points
 * per element (np = 4). Each step is one classical Runge-Kutta step (4 stages) and one forward
 * step of hyperviscosity -nu del^4.
 *
 * How it communicates (dss.h): every stage ends in a direct stiffness summation (DSS) of the
 * tendencies -- pack element edges, MPI_Isend/MPI_Irecv with each neighbour rank, MPI_Waitall,
 * unpack and sum -- and the hyperviscosity adds two more, one after each Laplacian: 6 DSS per
 * step. Every --statefreq steps the diagnostics (mass, l1/l2/linf error norms) take two
 * MPI_Allreduce. Elements go to ranks along a space-filling curve over the cube.
 *
 * How it is verified (williamson.h): Williamson et al. (1992) test case 1 (cosine bell
 * advection) or 2 (steady geostrophic flow; exact answer = initial state), normalised l1, l2,
 * linf errors of the depth against the exact answer below a tolerance that shrinks as ne
 * grows (third order), and the total mass conserved to round-off. Sums are reproducible
 * (esm_sum.h) and the DSS adds in global element order, so any number of ranks gives the same
 * bits: the result line carries a checksum of the final state to show it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cube.h"
#include "dss.h"
#include "esm.h"
#include "sweq.h"
#include "williamson.h"

static const esm_deck decks[] = {
    {"S", 4, 4, 1, 1, 1, 0, "ne=4: 96 elements, 7.5 degrees (--ne 8: 384 elements)"},
    {"M", 16, 16, 1, 1, 1, 0, "ne=16: 1,536 elements, 1.9 degrees (--ne 30: 5,400 elements)"},
    {"ne120", 120, 120, 1, 1, 1, 0, "ne=120: 86,400 elements, 0.25 degrees (production)"},
};
enum { NDECKS = sizeof decks / sizeof *decks, DSS_PER_STEP_RK = 4, DSS_PER_STEP_HV = 2 };

static const double DAY = 86400.0;
enum { FOLDED_STEPS = 2 }; /* a folded run's default steps (below) */

/* The time step (seconds) for a CFL number `cfl`: the fastest shallow-water wave (gravity
 * wave plus wind, 210 m/s) over the closest GLL points (at the face corners). RK4 with the
 * np=4 derivative stays stable up to cfl ~ 1.6 (measured at ne=4), so the default 0.8 has a
 * margin of two. tc1 uses the same step as tc2 (a CFL of 0.15 for its 38.6 m/s wind). */
static double cfl_dt(int ne, double cfl)
{
    williamson w = williamson_case(TC2, 0.0);
    double speed = w.u0 + sqrt(w.gravity * w.h0);
    double element = w.radius * (M_PI / 2) / ne;            /* element width (m) */
    double gll_gap = 0.5 * (1.0 - gll_xi[2]) * element * 0.7; /* closest points */
    return cfl * gll_gap / speed;
}

/* Default hyperviscosity (m^4/s): 1e13 at ne=30, scaled with the fourth power of the element
 * width, so that the grid scale is damped at the same rate per unit time at every resolution
 * and the error it adds to smooth flows converges at fourth order, like the discretisation's.
 * (HOMME's climate runs use 1e15 at ne=30 scaled as width^3.2; its Williamson tests use from
 * 1e15 (tc1, ne=6) down to almost none (tc2).) */
static double default_nu(int ne)
{
    return 1.0e13 * pow(30.0 / ne, 4.0);
}

typedef struct model {
    williamson w;
    int nf;                 /* fields: h (tc1), or h and the 3 velocity components (tc2) */
    double dt, nu;
    homme_cube cube;
    homme_dss dss;
    homme_metric metric;
    double *jw1, *jw2;      /* tc1: J u^1, J u^2 of the fixed wind */
    double *y[4], *stage[4], *tend[4], *acc[4], *lap[4];
    esm_timer tendency, other_kernels, dss_time, diagnostics;
} model;

/* A field: this rank's element points and ghost slots (shared between ranks when folded). */
static double *field(const model *md)
{
    return esm_field_alloc((md->dss.length + 1) * sizeof(double));
}

static void set_up(model *md, int ne, int test, double alpha, esm_halo_engine engine)
{
    md->w = williamson_case(test, alpha);
    md->nf = test == TC1 ? 1 : 4;
    cube_create(&md->cube, ne, esm_ranks());
    dss_create(&md->dss, &md->cube, engine);
    homme_metric *m = &md->metric;
    metric_create(m, ne, md->dss.nlocal, md->dss.element, md->dss.length, md->w.radius);
    dss_set_mass(&md->dss, m->mp);
    for (int f = 0; f < md->nf; f++) {
        md->y[f] = field(md);
        md->stage[f] = field(md);
        md->tend[f] = field(md);
        md->acc[f] = field(md);
        md->lap[f] = field(md);
    }
    md->jw1 = field(md);
    md->jw2 = field(md);
    for (long k = 0; k < m->npoints; k++) {
        double x[3] = {m->x[0][k], m->x[1][k], m->x[2][k]}, u[3];
        williamson_wind(&md->w, x, u);
        m->fcor[k] = williamson_coriolis(&md->w, x);
        md->y[0][k] = williamson_depth(&md->w, x, 0.0);
        double c1 = 0, c2 = 0;
        for (int a = 0; a < 3; a++) {
            c1 += m->d1[a][k] * u[a];
            c2 += m->d2[a][k] * u[a];
            if (test == TC2)
                md->y[1 + a][k] = u[a];
        }
        md->jw1[k] = m->jac[k] * (m->gi11[k] * c1 + m->gi12[k] * c2);
        md->jw2[k] = m->jac[k] * (m->gi12[k] * c1 + m->gi22[k] * c2);
    }
    md->tendency = (esm_timer){.name = "tendency"};
    md->other_kernels = (esm_timer){.name = "other_kernels"};
    md->dss_time = (esm_timer){.name = "dss", .phase = true};
    md->diagnostics = (esm_timer){.name = "diagnostics"};
}

/* tend = d(in)/dt, assembled: element kernel, then DSS. Each kernel is an esm_kernel with
 * its byte model (sweq.h): folded, it runs on its first calls and is charged after. */
static void tendency(model *md, double *const in[], double *const tend[])
{
    static const esm_kernel advection = {.name = "homme.advection_tendency",
                                         .flops = ADVECTION_FLOPS};
    static const esm_kernel shallow_water = {.name = "homme.sw_tendency",
                                             .flops = SW_TENDENCY_FLOPS};
    double n = (double)md->dss.npoints;
    esm_timer_start(&md->tendency);
    if (md->w.test == TC1) {
        if (esm_kernel_begin(&advection, n, n * ADVECTION_BYTES)) {
            advection_tendency(&md->metric, md->dss.nlocal, md->jw1, md->jw2, in[0], tend[0]);
            esm_kernel_end(&advection);
        }
    } else if (esm_kernel_begin(&shallow_water, n, n * SW_TENDENCY_BYTES)) {
        sw_tendency(&md->metric, md->dss.nlocal, md->w.gravity, in[0], in + 1, tend[0], tend + 1);
        esm_kernel_end(&shallow_water);
    }
    esm_timer_stop(&md->tendency);
    esm_timer_start(&md->dss_time);
    dss_apply(&md->dss, md->nf, tend);
    esm_timer_stop(&md->dss_time);
}

/* Keep the velocity tangent to the sphere (tc2). */
static void tangent(model *md)
{
    static const esm_kernel projection = {.name = "homme.project_tangent",
                                          .flops = PROJECT_TANGENT_FLOPS};
    double n = (double)md->dss.npoints;
    if (esm_kernel_begin(&projection, n, n * PROJECT_TANGENT_BYTES)) {
        project_tangent(&md->metric, md->y + 1);
        esm_kernel_end(&projection);
    }
}

/* Stage s of the Runge-Kutta step, once its tendency k is in: acc accumulates y + sum b k,
 * stage = y + a k is the next stage's input. */
static void rk_update(model *md, int s, double b, double a)
{
    long n = md->dss.npoints;
    for (int f = 0; f < md->nf; f++) {
        double *y = md->y[f], *k = md->tend[f], *acc = md->acc[f], *stage = md->stage[f];
        if (s == 0)
            for (long p = 0; p < n; p++)
                acc[p] = y[p] + b * k[p];
        else
            for (long p = 0; p < n; p++)
                acc[p] += b * k[p];
        if (s < 3)
            for (long p = 0; p < n; p++)
                stage[p] = y[p] + a * k[p];
    }
}

/* One classical Runge-Kutta step. */
static void runge_kutta(model *md)
{
    static const double into[4] = {0.0, 0.5, 0.5, 1.0};
    static const double weight[4] = {1 / 6.0, 1 / 3.0, 1 / 3.0, 1 / 6.0};
    /* work: doubles moved; 2 flops (a multiply-add) for every 3 doubles */
    static const esm_kernel update = {.name = "homme.rk_update", .flops = 2.0 / 3};
    static const char *stage_phase[4] = {"rk_stage1", "rk_stage2", "rk_stage3", "rk_stage4"};
    for (int s = 0; s < 4; s++) {
        esm_phase_begin(stage_phase[s]);
        tendency(md, s == 0 ? md->y : md->stage, md->tend);
        esm_timer_start(&md->other_kernels);
        /* acc (and stage): two doubles read and one written per point and field */
        double doubles = (double)md->nf * md->dss.npoints * (s < 3 ? 6 : 3);
        if (esm_kernel_begin(&update, doubles, 8 * doubles)) {
            rk_update(md, s, md->dt * weight[s], s < 3 ? md->dt * into[s + 1] : 0.0);
            esm_kernel_end(&update);
        }
        esm_timer_stop(&md->other_kernels);
        esm_phase_end(stage_phase[s]);
    }
    for (int f = 0; f < md->nf; f++) {
        double *t = md->y[f];
        md->y[f] = md->acc[f];
        md->acc[f] = t;
    }
    if (md->nf == 4)
        tangent(md);
}

/* y <- y - dt nu del^4 y, as HOMME's biharmonic_wk: weak Laplacian, DSS, weak Laplacian, DSS. */
static void hyperviscosity(model *md)
{
    static const esm_kernel laplacian = {.name = "homme.laplace_wk", .flops = LAPLACE_WK_FLOPS};
    static const esm_kernel update = {.name = "homme.hv_update", .flops = 2.0 / 3}; /* a double */
    if (md->nu <= 0.0)
        return;
    esm_phase_begin("hyperviscosity");
    long n = md->dss.npoints;
    for (int pass = 0; pass < 2; pass++) {
        double *const *in = pass == 0 ? md->y : md->lap;
        double *const *out = pass == 0 ? md->lap : md->tend;
        esm_timer_start(&md->other_kernels);
        double points = (double)md->nf * n;
        if (esm_kernel_begin(&laplacian, points, points * LAPLACE_WK_BYTES)) {
            for (int f = 0; f < md->nf; f++)
                laplace_wk(&md->metric, md->dss.nlocal, in[f], out[f]);
            esm_kernel_end(&laplacian);
        }
        esm_timer_stop(&md->other_kernels);
        esm_timer_start(&md->dss_time);
        dss_apply(&md->dss, md->nf, out);
        esm_timer_stop(&md->dss_time);
    }
    esm_timer_start(&md->other_kernels);
    double c = md->dt * md->nu, doubles = 3.0 * md->nf * n; /* y, tend in; y out */
    if (esm_kernel_begin(&update, doubles, 8 * doubles)) {
        for (int f = 0; f < md->nf; f++)
            for (long p = 0; p < n; p++)
                md->y[f][p] -= c * md->tend[f][p];
        esm_kernel_end(&update);
    }
    if (md->nf == 4)
        tangent(md);
    esm_timer_stop(&md->other_kernels);
    esm_phase_end("hyperviscosity");
}

typedef struct diagnosis {
    double mass, l1, l2, linf;
} diagnosis;

/* Mass and Williamson's error norms of the depth at time t: two allreduces. */
static diagnosis diagnose(model *md, double t)
{
    static const esm_kernel norms = {.name = "homme.diagnostics"}; /* reads x, h, mp: 40 bytes */
    esm_timer_start(&md->diagnostics);
    const homme_metric *m = &md->metric;
    esm_sum sums[5];
    memset(sums, 0, sizeof sums);
    double extremes[2] = {0.0, 0.0};
    /* flops a point: the error 1, the five weighted terms 7, five exact sums of 17 (a
     * scaling, 8 limbs of 2: esm_sum_add), the exact depth (tc1: 51, tc2: 14; williamson.c) */
    double flops = 1 + 7 + 5 * 17 + (md->w.test == TC1 ? 51 : 14);
    bool run =
        esm_kernel_begin_flops(&norms, (double)m->npoints, 40.0 * m->npoints, flops * m->npoints);
    for (long k = 0; run && k < m->npoints; k++) {
        double x[3] = {m->x[0][k], m->x[1][k], m->x[2][k]};
        double exact = williamson_depth(&md->w, x, t), h = md->y[0][k], error = fabs(h - exact);
        esm_sum_add(&sums[0], m->mp[k] * h);
        esm_sum_add(&sums[1], m->mp[k] * error);
        esm_sum_add(&sums[2], m->mp[k] * fabs(exact));
        esm_sum_add(&sums[3], m->mp[k] * error * error);
        esm_sum_add(&sums[4], m->mp[k] * exact * exact);
        extremes[0] = fmax(extremes[0], error);
        extremes[1] = fmax(extremes[1], fabs(exact));
    }
    if (run)
        esm_kernel_end(&norms);
    double total[5];
    esm_global_sums(sums, 5, total);
    esm_global_max(extremes, 2);
    esm_timer_stop(&md->diagnostics);
    return (diagnosis){total[0], total[1] / total[2], sqrt(total[3] / total[4]),
                       extremes[0] / extremes[1]};
}

/* A fingerprint of the final state, the same for any number of ranks iff the bits are. */
static unsigned long long state_checksum(const model *md)
{
    uint64_t sum = 0;
    for (int e = 0; e < md->dss.nlocal; e++)
        for (int p = 0; p < NPTS; p++)
            for (int f = 0; f < md->nf; f++)
                esm_checksum_add(&sum, ((long)md->dss.element[e] * NPTS + p) * md->nf + f,
                                 md->y[f][(long)e * NPTS + p]);
    return (unsigned long long)esm_global_checksum(sum);
}

/* Error tolerances (docs/homme.md): about 1.5-2 times the largest error measured at ne=4
 * after 12 days (alpha = 0, 45, 90), shrinking as ne^-3 for tc2 (smooth: the errors converge
 * at fourth order) and as ne^-1.5 for tc1 (the bell's second derivative jumps at its rim,
 * which caps the order near 2), with a floor at round-off. Shorter runs have smaller errors.
 * Grids coarser than ne=3 are too coarse to meet them. */
static double tolerance(int test, const char *norm, int ne)
{
    static const struct {
        const char *norm;
        double tc1, tc2;
    } at4[] = {{"l1", 2.0, 4e-4}, {"l2", 0.6, 6e-4}, {"linf", 0.45, 4e-3}};
    for (size_t k = 0; k < sizeof at4 / sizeof *at4; k++)
        if (!strcmp(at4[k].norm, norm))
            return test == TC1 ? at4[k].tc1 * pow(4.0 / ne, 1.5)
                               : fmax(at4[k].tc2 * pow(4.0 / ne, 3.0), 1e-11);
    return 0.0;
}

typedef struct options {
    const char *size, *test_name, *engine;
    int ne, test;
    double alpha, dt, nu, stream_mb;
    long steps, statefreq;
} options;

static options read_options(int argc, char **argv)
{
    options o;
    esm_cli *cli = esm_cli_begin(argc, argv,
                                 "HOMME proxy: shallow water on the cubed sphere "
                                 "with spectral elements (np=4), Williamson test cases 1 and 2");
    const esm_deck *deck = esm_cli_size(cli, decks, NDECKS);
    o.size = deck->name;
    o.ne = (int)esm_cli_int(cli, "ne", deck->nx, 1, 1024, "elements along a cube edge (6 ne^2)");
    o.test_name = esm_cli_choice(cli, "case", "tc2,tc1",
                                 "Williamson test case: tc2 steady "
                                 "geostrophic flow, tc1 cosine bell advection");
    o.test = !strcmp(o.test_name, "tc1") ? TC1 : TC2;
    o.alpha = esm_cli_real(cli, "alpha", 45.0, 0.0, 90.0, "tilt of the flow's axis (degrees)");
    double days = esm_cli_real(cli, "days", 12.0, 1e-6, 1e4, "simulated days");
    double cfl = esm_cli_real(cli, "cfl", 0.8, 1e-3, 10.0, "Courant number of the fastest wave");
    long steps = (long)ceil(days * DAY / cfl_dt(o.ne, cfl));
    o.dt = esm_cli_real(cli, "dt", days * DAY / steps, 1e-3, 1e6, "time step (s)");
    steps = (long)ceil(days * DAY / o.dt - 1e-9);
    /* A folded run cannot verify its days (its values mean nothing: esm_fold.h) and its time
     * per step is its figure: FOLDED_STEPS unless --steps is given (ne120's 12 days are
     * about 35,000 steps, hours of simulation at the seed's 13,824 ranks). */
    o.steps = esm_cli_int(cli, "steps", esm_folded() ? FOLDED_STEPS : steps, 1, 1000000000,
                          "time steps (default: all --days; a folded run: 2)");
    o.nu = esm_cli_real(cli, "nu", default_nu(o.ne), 0.0, 1e30, "hyperviscosity (m^4/s; 0: none)");
    o.statefreq = esm_cli_int(cli, "statefreq", 10, 1, 1000000000,
                              "steps between diagnostics (mass, norms: 2 allreduces)");
    o.engine = esm_cli_choice(cli, "engine", "isend,persistent",
                              "DSS messages: Isend/Irecv/Waitall or persistent Startall");
    o.stream_mb = esm_cli_real(cli, "stream", 64.0, 0.0, 65536.0,
                               "STREAM triad array size per rank (MiB; 0: skip)");
    esm_cli_end(cli);
    int elements = 6 * o.ne * o.ne;
    if (esm_ranks() > elements)
        esm_fail("%d ranks but only %d elements (ne=%d): every rank needs an element; use at "
                 "most %d ranks or --ne %d or more",
                 esm_ranks(), elements, o.ne, elements, (int)ceil(sqrt(esm_ranks() / 6.0)));
    return o;
}

/* The result line: verification, figures of the exchange (counts: the core's at the start and
 * at the end of the `timed` steps), STREAM and the kernel's bandwidth. */
static int report(model *md, const options *o, diagnosis start, diagnosis end, double wall,
                  long timed, const esm_counts counts[2])
{
    int test = o->test, ne = o->ne;
    int dss_per_step = DSS_PER_STEP_RK + (o->nu > 0 ? DSS_PER_STEP_HV : 0);
    double days = o->steps * o->dt / DAY, mass_change = fabs(end.mass - start.mass) / start.mass;
    bool passed = end.l1 <= tolerance(test, "l1", ne) && end.l2 <= tolerance(test, "l2", ne) &&
                  end.linf <= tolerance(test, "linf", ne) && mass_change <= 1e-12;
    bool folded = esm_folded(); /* the values mean nothing: nothing to verify */
    if (folded)
        esm_say("homme: after %.4g days: not verified: folded run\n", days);
    else
        esm_say("homme: after %.4g days: l1 %.3e  l2 %.3e  linf %.3e  mass change %.2e  %s\n", days,
                end.l1, end.l2, end.linf, mass_change, passed ? "PASS" : "FAIL");
    unsigned long long checksum = state_checksum(md); /* collective, folded or not */

    esm_sum edge_points; /* edge points sent, over all ranks */
    memset(&edge_points, 0, sizeof edge_points);
    esm_sum_add(&edge_points, md->dss.edge_points);
    double total_edge_points, tendency_seconds = md->tendency.total;
    /* most neighbour ranks, most and fewest elements (HOMME's partition: they differ by one) */
    double extremes[3] = {md->dss.peers, md->dss.nlocal, -md->dss.nlocal};
    esm_global_sums(&edge_points, 1, &total_edge_points);
    esm_global_max(extremes, 3);
    esm_global_max(&tendency_seconds, 1);
    esm_stream stream = {0};
    if (o->stream_mb > 0)
        stream = esm_stream_triad(o->stream_mb, 5);
    double bytes_per_point = test == TC1 ? ADVECTION_BYTES : SW_TENDENCY_BYTES;
    double kernel_GBps = tendency_seconds > 0 ? timed * 4.0 * md->cube.nelem * NPTS *
                                                    bytes_per_point / tendency_seconds / 1e9
                                              : 0.0;

    char what[200], hex[32];
    snprintf(what, sizeof what,
             "Williamson test case %d (%s), alpha=%g, %.4g days: l1/l2/linf "
             "of h against the exact answer, mass to round-off",
             test, test == TC1 ? "cosine bell advection" : "steady geostrophic flow", o->alpha,
             days);
    snprintf(hex, sizeof hex, "%016llx", checksum);
    esm_result *r = esm_result_new("homme", o->size, o->steps);
    esm_result_wall(r, wall);
    esm_result_fom(r, timed > 0 && wall > 0 ? timed / wall : 0.0, "steps/s", true);
    if (folded) {
        esm_result_unverified(r, "not verified: folded run");
    } else {
        esm_result_verification(r, passed, what);
        esm_result_norm(r, "l1", end.l1);
        esm_result_norm(r, "l2", end.l2);
        esm_result_norm(r, "linf", end.linf);
        esm_result_norm(r, "mass", mass_change);
        esm_result_real(r, "verification.tolerance.l1", tolerance(test, "l1", ne));
        esm_result_real(r, "verification.tolerance.l2", tolerance(test, "l2", ne));
        esm_result_real(r, "verification.tolerance.linf", tolerance(test, "linf", ne));
        esm_result_real(r, "verification.tolerance.mass", 1e-12);
        esm_result_text(r, "verification.checksum", hex);
        esm_result_real(r, "verification.mass", end.mass);
    }
    esm_result_int(r, "model.bytes_per_point", (long)bytes_per_point);
    esm_result_int(r, "model.dss_per_step", dss_per_step);
    esm_report_counts(r, &counts[0], &counts[1], timed); /* means per rank, timed steps */
    esm_result_real(r, "model.dss_bytes_per_step", dss_per_step * total_edge_points * md->nf * 8.0);
    esm_result_int(r, "model.max_peers", (long)extremes[0]);
    esm_result_int(r, "model.elements_per_rank.max", (long)extremes[1]);
    esm_result_int(r, "model.elements_per_rank.min", (long)-extremes[2]);
    esm_result_text(r, "params.case", o->test_name);
    esm_result_int(r, "params.ne", ne);
    esm_result_int(r, "params.elements", md->cube.nelem);
    esm_result_int(r, "params.nodes", md->cube.nnodes);
    esm_result_int(r, "params.np", NP);
    esm_result_real(r, "params.alpha", o->alpha);
    esm_result_real(r, "params.dt", o->dt);
    esm_result_real(r, "params.days", days);
    esm_result_real(r, "params.nu", o->nu);
    esm_result_int(r, "params.statefreq", o->statefreq);
    esm_result_text(r, "params.engine", o->engine);
    esm_result_text(r, "params.curve", md->cube.curve->name);
    esm_result_int(r, "params.curve_breaks", md->cube.curve->breaks);
    esm_report_kernel(r, "tendency", kernel_GBps, stream);
    esm_result_real(r, "kernels.tendency.seconds", tendency_seconds);
    esm_report_stream(r, stream);
    esm_timer *timers[] = {&md->tendency, &md->other_kernels, &md->dss_time, &md->diagnostics};
    esm_result_timers(r, timers, 4);
    return esm_result_finish(r);
}

int main(int argc, char **argv)
{
    esm_init(&argc, &argv, "homme");
    gll_init();
    options o = read_options(argc, argv);
    model md = {.dt = o.dt, .nu = o.nu};
    set_up(&md, o.ne, o.test, o.alpha, esm_halo_engine_named(o.engine));
    esm_say("homme: %s, ne=%d (%d elements, %d nodes), %d ranks, %ld steps of %.6g s, nu=%.3g, "
            "curve %s\n",
            o.test_name, o.ne, md.cube.nelem, md.cube.nnodes, esm_ranks(), o.steps, o.dt, o.nu,
            md.cube.curve->name);

    diagnosis start = diagnose(&md, 0.0), now = start;
    esm_timer *timers[] = {&md.tendency, &md.other_kernels, &md.dss_time, &md.diagnostics};
    long warm_up = o.steps > 1 ? 1 : 0; /* the first step is not timed */
    esm_counts counts[2] = {{0}}; /* the core's, at the start and end of the timed steps */
    double started = esm_wtime();
    for (long n = 1; n <= o.steps; n++) {
        if (n == warm_up + 1) {
            for (int t = 0; t < 4; t++)
                esm_timer_reset(timers[t]);
            started = esm_wtime();
            counts[0] = *esm_counts_mine();
            esm_timed_begin();
        }
        runge_kutta(&md);    /* 4 stages, each: element kernel, DSS */
        hyperviscosity(&md); /* weak Laplacian, DSS, weak Laplacian, DSS */
        if (n % o.statefreq == 0 || n == o.steps)
            now = diagnose(&md, n * o.dt);
    }
    esm_timed_end();
    counts[1] = *esm_counts_mine();
    double wall = esm_wtime() - started;
    esm_global_max(&wall, 1);

    int status = report(&md, &o, start, now, wall, o.steps - warm_up, counts);
    dss_free(&md.dss);
    metric_free(&md.metric);
    cube_free(&md.cube);
    esm_exit(status);
}
