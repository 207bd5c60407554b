/* One coupling interval of the CESM proxy's driver, as ccsm_comp_mod runs it (cesm.c lists the
 * phases): each component's phase after CESM's timing barrier, the infodata broadcast, the
 * rearrangers between the components and the coupler, the coupler's own work, and the history
 * and restart files when due. */
#include <string.h>
#include "driver.h"

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
void write_files(cesm_run *run, const cesm_info *info, bool restart)
{
    static const char *const atm[] = {"T_atm", "flux_sfc", "T_sfc"};
    static const char *const lnd[] = {"T_lnd", "flux_lnd"};
    static const char *const ice[] = {"h_ice", "frac_ice", "T_ice_sfc"};
    static const char *const ocn[] = {"T_ocn", "frazil"};
    static const char *const cpl[] = {"x2o_heat", "o2x_frazil"};
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
void coupling_interval(cesm_run *run, const cesm_info *info)
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
        double edge[2];
        cesm_ice_edges(&run->ocn_g, run->info_ice.seconds, edge);
        ice_run(&run->ice, (const double *const *)run->x2i, run->i2x, run->info_ice.dt, edge);
        esm_timer_stop(&run->t_ice);
        barrier(run, run->g_atm);
        rearrange(run, c->i2c, run->i2x, c->i2x);

        barrier(run, run->g_atm);                         /* C2L, LND_RUN, L2C */
        infodata(run, run->g_atm, info, &run->info_lnd);
        rearrange(run, c->c2l, c->a2x, run->x2l);
        barrier(run, run->g_atm);
        esm_timer_start(&run->t_lnd);
        esm_group_enter(run->g_atm);
        lnd_run(&run->lnd, (const double *const *)run->x2l, run->l2x, run->info_lnd.dt);
        esm_group_leave();
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
        atm_export(&run->atm, run->info_atm.seconds + run->info_atm.dt, run->info_atm.interval + 1,
                   run->info_atm.dt, run->a2x);
        esm_group_leave();
        esm_timer_stop(&run->t_atm);
        barrier(run, run->g_atm);
        rearrange(run, c->a2c, run->a2x, c->a2x);
    }
    barrier(run, NULL);                                   /* O2C */
    rearrange(run, c->o2c, run->o2x, c->o2x);
}
