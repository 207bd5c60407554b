/* hycom.h: the HYCOM proxy's grid, state and kernels.
 *
 * A stack of nz isopycnal layers (thickness h_k) on an Arakawa C-grid: h, eta at cell centres
 * (T), u at west faces, v at south faces, both stored at the index of the cell they bound.
 * Layer velocities are split HYCOM's way into a barotropic transport (ub, vb: m^2/s, stepped
 * with short substeps) and baroclinic deviations (u, v: with sum_k hu_k u_k = 0).
 *
 * Every array has a halo of `width` (1-6) rings. Kernels compute over a region: the interior
 * plus as many halo rings as their inputs allow (esm_region), so a wide halo serves several
 * operations before it must be exchanged again. */
#ifndef HYCOM_H
#define HYCOM_H
#include "esm.h"

typedef enum { CASE_BASIN, CASE_WAVE } hycom_case;

/* Where each array currently holds valid values (see esm_region in esm_halo.h). */
typedef struct valid {
    esm_region h, u, v;          /* layer state */
    esm_region p, fu, fv;        /* derived from h: pressure (T); face thickness and forcing */
    esm_region eta, ub, vb;      /* barotropic state */
    esm_region ubm, vbm;         /* barotropic transports averaged over the substeps */
    esm_region h_next, u_next, v_next;
} valid;

typedef struct hycom hycom;

/* A kernel over region r of local block lb (arg: a flag or factor some kernels take). */
typedef void (*block_kernel)(hycom *m, int lb, esm_region r, double arg);
typedef struct {
    block_kernel run;
    esm_region r;
    double arg;
    const char *name;            /* "pressure" */
    double points, bytes, flops; /* its work, bytes (the byte model) and flops on this rank */
} queued_kernel;
#define HYCOM_QUEUE 32 /* a full queue runs early: always correct, only less reuse */

/* A flush is one kernel for folding and the node model (esm_fold.h), named by the kernels it
 * runs ("hycom.pressure.faces_u..."): each mix has its own cost per point. */
typedef struct {
    char name[HYCOM_QUEUE * 20 + 8];
    esm_kernel kernel;
} flush_kernel;

struct hycom {
    hycom_case kind;
    esm_decomp d;
    esm_layout l2, l3;           /* 2D and layer fields, halo `width`, [block][k][j][i] */
    int width, nz;
    double *row_dxt, *row_dxv;   /* per global row (index gj + width): east-west widths */
    double *row_fu, *row_fv;     /* Coriolis at u and v points */
    double dy, gravity, viscosity;
    double *gprime;              /* reduced gravity at the top of layer k (gprime[0] unused) */
    double dt, dtau;             /* baroclinic step, barotropic substep (s) */
    int substeps;
    /* static 2D fields (l2) */
    double *depth, *mt, *mu, *mv;
    /* layers (l3) */
    double *h, *u, *v, *h_next, *u_next, *v_next;
    /* layer temporaries of the step's first phase (pressure to project): the potential and
     * the thickness at u and v faces. Nothing reads them after project (the continuity
     * takes the face thicknesses from h again), so when that phase runs in one flush (no
     * exchange inside it: halo width >= 2) every block uses the same storage, block 0's,
     * which stays in the cache; at width 1 each block has its own (temporary_blocks). */
    double *p, *hu, *hv;
    int temporary_blocks;        /* 1 or d.nlocal */
    long flushes, queued_temporaries; /* hycom_flush calls; how many before pressure was queued */
    /* barotropic and per-face totals (l2) */
    double *eta, *ub, *vb, *ubm, *vbm, *hu_total, *hv_total, *force_u, *force_v;
    double *mean_u, *mean_v;     /* depth mean of the baroclinic pressure force */
    double *share_u, *share_v;   /* mean barotropic transport per metre of water */
    esm_halo *layer_halo, *barotropic_halo;
    double *row_a, *row_b, *row_c; /* scratch: a row of a block, halo included, and a face */
    double *plane_a, *plane_b; /* scratch: one block's 2D extent (column sums, level by level) */
    valid ok;
    double bytes; /* bytes moved by kernels (the model), this rank */
    /* the wave case */
    double wave_amplitude, wave_k, wave_f, wave_depth;
    queued_kernel queue[HYCOM_QUEUE]; /* kernels called, not yet run (see hycom_flush) */
    int queued;
    flush_kernel **flush_kernels; /* the mixes flushed so far */
    int nflush_kernels;
};

/* Grid, masks, depth, layers and the initial state of `kind`. Collective. */
void hycom_create(hycom *m, hycom_case kind, int nx, int ny, int nz, int bx, int by, int width,
                  esm_distribution dist, esm_block_choice choice, esm_halo_engine engine);
double hycom_row(const double *rows, const hycom *m, int gj);

/* Kernels over a region of every local block (kernels.h). A call queues the kernel;
 * hycom_flush runs the queue block by block (every queued kernel on a block, then the next
 * block). Flush before a halo exchange and before anything reads the fields. */
void hycom_flush(hycom *m);
void kernel_pressure(hycom *m, esm_region r);
void kernel_faces_u(hycom *m, esm_region r);
void kernel_faces_v(hycom *m, esm_region r);
void kernel_momentum_u(hycom *m, esm_region r);
void kernel_momentum_v(hycom *m, esm_region r);
void kernel_project(hycom *m, esm_region ru, esm_region rv);
void kernel_mean_add(hycom *m, esm_region ru, esm_region rv, int first);
void kernel_mean_scale(hycom *m, esm_region ru, esm_region rv, double factor);
void kernel_barotropic_eta(hycom *m, esm_region r);
void kernel_barotropic_u(hycom *m, esm_region r);
void kernel_barotropic_v(hycom *m, esm_region r);
void kernel_continuity(hycom *m, esm_region r);
#endif
