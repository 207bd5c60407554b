/* The start-up input of CESM 1.0.3 B1850CN f09_g16 as it moves (--input cesm; docs/cesm.md,
 * "Start-up input"): what its components and coupler read on one rank and broadcast, in the
 * code's own pieces, from an unmodified CESM 1.0.3 tree (github:JungleComputing/
 * climate-modelling at dd82fa1, cesm1_0_3/):
 *   - the coupler's mapping weights (models/csm_share/shr/shr_mct_mod.F90 350-687): task 0
 *     reads each SCRIP map in chunks of 100,000 weights (rbuf_size, line 421) with plain netCDF
 *     and broadcasts each chunk's S, row and col (8, 4 and 4 B a weight, lines 608-610) to the
 *     coupler's ranks; f09_g16 reads the atmosphere-ocean maps 8 times (a2oF and a2oS twice,
 *     o2a four times: models/drv/bld/cpl.template 406-442) and the runoff map r05 -> gx1v6 once;
 *   - PIO's non-distributed reads (models/utils/pio/pionfget_mod.F90): the I/O root reads the
 *     whole array, check_netcdf's MPI_Barrier on the component's ranks follows every netCDF
 *     call unconditionally in pio1_2_6 (pio_utils.F90 line 46), then MPI_Bcast from the root;
 *     the I/O root is the component's rank PIO_ROOT = 1 (scripts/ccsm_utils/Machines/
 *     config_pes.xml's default): CAM's radiation table and prescribed aerosol, ozone and
 *     aerosol deposition, CLM's river directions;
 *   - the sea ice's and ocean's own masters reading their grid masks and broadcasting them
 *     (CICE ice_grid.F90 241-242, POP grid.F90 1974).
 * A root's read costs its bytes over the file system's rate (esm_file_system_read, the smpi
 * knob file_system), the others wait in the barrier or the broadcast. The payload is a pattern
 * each receiver checks, another for every broadcast (not when folded: the ranks then share one
 * buffer). The proxy uses none
 * of it: its maps are built from the grids, its physics needs no tables. */
#include <string.h>
#include "driver.h"

#define MAP_CHUNK 100000L          /* shr_mct_mod.F90 rbuf_size */
#define RUNOFF_WEIGHTS 17089010L   /* map_r05_to_gx1v6_e1000r300: its 2015 regeneration */
#define PIO_ROOT 1                 /* config_pes.xml */
#define FV_LEVELS 26               /* CAM4's L26 (the tracer files' names) */
#define CHECK_STRIDE 4093          /* bytes between the bytes a receiver checks */

/* Moves `bytes` from the root of the current communicator (its file read first; with PIO,
 * check_netcdf's barrier between the read and the broadcast) and checks them on the others. */
static void read_and_broadcast(cesm_run *run, long bytes, int root, bool pio, bool read, bool *bad)
{
    int me = esm_rank();
    unsigned char tag = (unsigned char)(1 + run->input_broadcasts++ % 251); /* each its own */
    if (root >= esm_ranks())
        root = 0;
    if (run->input_capacity < bytes) {
        esm_field_free(run->input_buffer);
        run->input_buffer = esm_field_alloc((size_t)bytes);
        run->input_capacity = bytes;
    }
    unsigned char *data = run->input_buffer;
    if (me == root) {
        if (read)
            esm_file_system_read((double)bytes);
        memset(data, tag, (size_t)bytes);
    }
    if (pio)
        esm_barrier();
    for (long done = 0; done < bytes;) { /* MPI_Bcast takes an int count */
        int piece = bytes - done > (1L << 30) ? 1 << 30 : (int)(bytes - done);
        esm_broadcast(data + done, piece, root);
        done += piece;
    }
    if (!strcmp(run->fault, "input") && run->input_broadcasts == 1 && me == esm_ranks() - 1)
        data[CHECK_STRIDE * (bytes / CHECK_STRIDE / 2)] ^= 1; /* the fault the check must catch */
    if (!esm_folded() && me != root) /* every CHECK_STRIDE-th byte: a broadcast moves whole runs */
        for (long b = 0; b < bytes && !*bad; b += CHECK_STRIDE)
            *bad = data[b] != tag;
    run->input_bytes += me == root && read ? bytes : 0;
}

/* shr_mct_sMatReaddnc: n weights, chunk by chunk, S then row then col. */
static void map_read(cesm_run *run, long weights, bool *bad)
{
    for (long first = 0; first < weights; first += MAP_CHUNK) {
        long n = weights - first < MAP_CHUNK ? weights - first : MAP_CHUNK;
        if (esm_rank() == 0)
            esm_file_system_read(16.0 * (double)n);
        run->input_bytes += esm_rank() == 0 ? 16 * n : 0;
        read_and_broadcast(run, 8 * n, 0, false, false, bad);
        read_and_broadcast(run, 4 * n, 0, false, false, bad);
        read_and_broadcast(run, 4 * n, 0, false, false, bad);
    }
}

void read_input(cesm_run *run)
{
    bool bad_data = false, *bad = &bad_data;
    esm_timer_start(&run->t_input);
    if (run->in_atm) {
        esm_group_enter(run->g_atm);
        /* CAM: radae_init's 7 tables of (10, 10, 25, 21, 7) doubles (radae.F90 2954-2960) */
        for (int t = 0; t < 7; t++)
            read_and_broadcast(run, 8L * 10 * 10 * 25 * 21 * 7, PIO_ROOT, true, true, bad);
        /* tracer_data: 2 records of each prescribed field on the 1.9x2.5 grid (144 x 96),
         * 13 aerosols and ozone of 26 levels, 14 aerosol deposition fluxes at the surface
         * (prescribed_aero.F90 48, aerodep_flx.F90 39, tracer_data.F90 1047-1049, 1350) */
        for (int r = 0; r < 2; r++) {
            for (int f = 0; f < 13 + 1; f++)
                read_and_broadcast(run, 8L * 144 * 96 * FV_LEVELS, PIO_ROOT, true, true, bad);
            for (int f = 0; f < 14; f++)
                read_and_broadcast(run, 8L * 144 * 96, PIO_ROOT, true, true, bad);
        }
        /* CLM's river transport: 3 fields on the 0.5 degree grid (RtmMod.F90 250-266), then
         * the land fraction on the atmosphere's grid, broadcast (356) */
        for (int f = 0; f < 3; f++)
            read_and_broadcast(run, 8L * 720 * 360, PIO_ROOT, true, true, bad);
        read_and_broadcast(run, 8L * run->atm_g.nx * run->atm_g.ny, 0, false, false, bad);
        /* CICE's master: the global ULAT and KMT (ice_grid.F90 241-242) */
        for (int f = 0; f < 2; f++)
            read_and_broadcast(run, 8L * run->ocn_g.nx * run->ocn_g.ny, 0, false, true, bad);
        esm_group_leave();
    }
    if (run->in_ocn) { /* POP's master: KMT_G, 4-byte integers (grid.F90 1974) */
        esm_group_enter(run->g_ocn);
        read_and_broadcast(run, 4L * run->ocn_g.nx * run->ocn_g.ny, 0, false, true, bad);
        esm_group_leave();
    }
    if (run->in_atm) { /* the coupler's maps (its ranks: the atmosphere's) */
        esm_group_enter(run->g_atm);
        for (int m = 0; m < 8; m++)
            map_read(run, run->map_weights, bad);
        map_read(run, RUNOFF_WEIGHTS, bad);
        esm_group_leave();
    }
    esm_timer_stop(&run->t_input);
    run->input_bad = bad_data; /* checked once, at the end (report.c): CESM adds no reduction */
}
