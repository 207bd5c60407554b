/* What the CESM proxy's kernels are charged in a simulated run (docs/cesm.md, "What the
 * components cost"; esm_fold.h for how a kernel's flops and bytes become simulated time).
 *
 * `--cost proxy` charges each kernel the proxy's own byte model: a one-layer component costs
 * what its one layer reads and writes, about a hundredth of a real component's step. The other
 * ends charge each component, per model day over its whole grid, the core-seconds CESM 1.0.3's
 * own component took on the same grids, spread evenly over the proxy's points of that
 * component: a published measurement, the `ccsm_timing` file of CESM 1.0.3 at 0.9x1.25_gx1v6,
 * compset B_2000 (the seed's B1850CN less CLM's carbon-nitrogen cycle), a 5-day startup run on
 * 40 cores of DAS-4 (cpl 32, atm 32, lnd 16, ice 16, ocn 8 PEs), public in
 * github:JungleComputing/climate-modelling at dd82fa1, `comparison1/single.8`. Its smallest PE
 * count of the four published (40-320 cores) is used: there each component's own MPI is the
 * least part of its time (the timers include it, so the charge stays an upper bound of the
 * computation).
 *
 * A time measured on DAS-4's core becomes simulated time at the band's two ends (a range of the
 * source, both shown):
 *   cesm-low   the fastest rank's time (the timer's min over the component's PEs), as in-core
 *              work: flops at DAS-4's peak, so it scales with the simulated core's clock
 *   cesm-high  the slowest rank's time (the max), as memory traffic at DAS-4's memory
 *              bandwidth per core, so it scales with the simulated node's bandwidth share
 * DAS-4 (ASCI's DAS-4 page, from VU Amsterdam's): VU cluster nodes of 2 quad-core Intel Xeon
 * E5620 at 2.4 GHz; an E5620 (Intel ARK) has 3 DDR3-1066 channels, 25.6 GB/s; Westmere retires
 * 4 double-precision flops a cycle (2 adds, 2 multiplies: SSE2). */
#include <math.h>
#include <string.h>
#include "models.h"

/* flops/s: 4 a cycle at 2.4 GHz, the peak, as the simulated machines' core flops */
#define DAS4_CORE_FLOPS (4.0 * 2.4e9)
/* bytes/s: 2 sockets' DDR3-1066 peak over 8 cores, times the STREAM efficiency every seed-era
 * machine preset assumes (src/esmperf/mpi/machines.py, STREAM_EFFICIENCY = 0.6; the test
 * tests/test_cesm_cost.py holds the two equal), so that DAS-4's and the simulated node's
 * bandwidths are figures of one kind */
#define DAS4_CORE_BANDWIDTH (0.6 * 2 * 25.6e9 / 8.0)
#define DAY 86400.0

/* comparison1/single.8: per component, PEs and the driver's run timer (seconds per model day:
 * min and max over the PEs). The coupler has no min:max line (its work is spread over the
 * driver's prep phases): its CPL Run Time at both ends. */
static const struct {
    const char *name;
    int pes;
    double min, max;
} das4[CESM_COST_N] = {
    [CESM_COST_ATM] = {"atm", 32, 97.263, 116.390}, /* DRIVER_ATM_RUN */
    [CESM_COST_LND] = {"lnd", 16, 18.365, 18.950},  /* DRIVER_LND_RUN */
    [CESM_COST_ICE] = {"ice", 16, 26.685, 28.970},  /* DRIVER_ICE_RUN */
    [CESM_COST_OCN] = {"ocn", 8, 133.111, 133.114}, /* DRIVER_OCN_RUN */
    [CESM_COST_CPL] = {"cpl", 32, 17.661, 17.661},  /* CPL Run Time */
};

void cesm_cost_set(cesm_cost *c, const char *choice, int component, double points_per_interval,
                   double dt)
{
    c->end = !strcmp(choice, "cesm-low") ? 1 : !strcmp(choice, "cesm-high") ? 2 : 0;
    double seconds = c->end == 1 ? das4[component].min : das4[component].max;
    c->core_seconds =
        c->end ? seconds * das4[component].pes / (points_per_interval * (DAY / dt)) : 0.0;
}

bool cesm_kernel_begin(const esm_kernel *k, const cesm_cost *c, double points, double bytes)
{
    if (!c->end)
        return esm_kernel_begin(k, points, bytes);
    double seconds = c->core_seconds * points;
    if (c->end == 1)
        return esm_kernel_begin_flops(k, points, 0.0, seconds * DAS4_CORE_FLOPS);
    return esm_kernel_begin_flops(k, points, seconds * DAS4_CORE_BANDWIDTH, 0.0);
}
