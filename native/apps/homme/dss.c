/* Direct stiffness summation: the exchange plan (element edges and corners to neighbour
 * ranks) and the sum over each node's copies in global element order. */
#include <stdlib.h>
#include <string.h>
#include "dss.h"

/* The point of element `e` at node `n`, or -1. */
static int point_at(const homme_cube *c, int e, int n)
{
    for (int p = 0; p < NPTS; p++)
        if (c->node[e * NPTS + p] == n)
            return p;
    return -1;
}

/* Walk every (receiving element r, sending element e of another rank) pair in global order,
 * r ascending, then e ascending, then e's points ascending: the sender packs and the receiver
 * unpacks the same points in the same order. Sends come from the element values; receives go
 * to consecutive ghost slots. With `fill`, also point each gathered copy at its ghost slot. */
static esm_halo_spec *exchange_spec(homme_dss *d, int fill)
{
    const homme_cube *c = d->cube;
    const int *local = d->local;
    esm_halo_spec *s = esm_halo_spec_new();
    int me = esm_rank();
    long slot = 0, sent = 0;
    for (int r = 0; r < c->nelem; r++) {
        int to = c->owner[r];
        for (int k = c->nbr_start[r]; k < c->nbr_start[r + 1]; k++) {
            int e = c->nbr[k], from = c->owner[e];
            if (from == to || (from != me && to != me))
                continue;
            for (int p = 0; p < NPTS; p++) {
                int n = c->node[e * NPTS + p], q = point_at(c, r, n);
                if (q < 0)
                    continue; /* not on the edge or corner e shares with r */
                if (from == me) {
                    esm_halo_spec_send(s, to, (long)local[e] * NPTS + p, 1);
                    sent++;
                    continue;
                }
                long ghost = d->npoints + slot++;
                esm_halo_spec_recv(s, from, ghost, 1);
                if (fill) { /* the copy of e among the copies gathered at (r, q) */
                    long at = (long)local[r] * NPTS + q;
                    int copy = 0;
                    while (c->member[c->member_start[n] + copy] / NPTS != e)
                        copy++;
                    d->from[d->start[at] + copy] = ghost;
                }
            }
        }
    }
    d->nghost = slot;
    d->edge_points = sent;
    return s;
}

static esm_halo *plan_for(homme_dss *d, int nfields)
{
    if (!d->plan[nfields]) /* made at the same point of the run on every rank: tags agree */
        d->plan[nfields] = esm_halo_create(exchange_spec(d, 0), nfields, 1, d->engine);
    return d->plan[nfields];
}

void dss_create(homme_dss *d, const homme_cube *c, esm_halo_engine engine)
{
    memset(d, 0, sizeof *d);
    int me = esm_rank();
    d->cube = c;
    d->engine = engine;
    d->nlocal = c->first[me + 1] - c->first[me];
    d->element = esm_calloc(d->nlocal, sizeof *d->element);
    int *local_index = d->local = esm_calloc(c->nelem, sizeof *d->local);
    for (int g = 0; g < c->nelem; g++)
        local_index[g] = -1;
    for (int lb = 0; lb < d->nlocal; lb++) {
        d->element[lb] = c->curve[c->first[me] + lb];
        local_index[d->element[lb]] = lb;
    }
    d->npoints = (long)d->nlocal * NPTS;
    /* Gather lists: the copies of each point's node, in global (element, point) order. */
    d->start = esm_calloc(d->npoints + 1, sizeof *d->start);
    for (long k = 0; k < d->npoints; k++) {
        int n = c->node[d->element[k / NPTS] * NPTS + k % NPTS];
        d->start[k + 1] = d->start[k] + c->member_start[n + 1] - c->member_start[n];
    }
    d->from = esm_calloc(d->start[d->npoints] + 1, sizeof *d->from);
    for (long k = 0; k < d->npoints; k++) {
        int n = c->node[d->element[k / NPTS] * NPTS + k % NPTS];
        for (int m = c->member_start[n]; m < c->member_start[n + 1]; m++) {
            int e = c->member[m] / NPTS, p = c->member[m] % NPTS;
            d->from[d->start[k] + m - c->member_start[n]] =
                local_index[e] >= 0 ? (long)local_index[e] * NPTS + p : -1;
        }
    }
    esm_halo_spec *spec = exchange_spec(d, 1);
    d->plan[1] = esm_halo_create(spec, 1, 1, engine);
    d->peers = esm_halo_peers(d->plan[1]);
    d->length = d->npoints + d->nghost;
    d->rmp = esm_calloc(d->npoints + 1, sizeof *d->rmp);
    d->scratch = esm_calloc(d->npoints + 1, sizeof *d->scratch);
    long unfilled = 0;
    for (long k = 0; k < d->start[d->npoints]; k++)
        unfilled += d->from[k] < 0;
    esm_fail_if_any(unfilled > 0, "internal error: %ld node copies have no source", unfilled);
    /* Keep the lists of the points on element edges only (interior points have one copy),
     * with 32-bit offsets: the sums read half the index bytes. */
    d->shared_start = esm_calloc(d->npoints + 1, sizeof *d->shared_start);
    d->shared = esm_calloc(d->npoints + 1, sizeof *d->shared);
    d->shared_from = esm_calloc(d->start[d->npoints] + 1, sizeof *d->shared_from);
    for (long k = 0; k < d->npoints; k++) {
        if (d->start[k + 1] - d->start[k] < 2)
            continue;
        int b = (int)d->nshared++;
        d->shared[b] = (int)k;
        d->shared_start[b + 1] = d->shared_start[b];
        for (int c = d->start[k]; c < d->start[k + 1]; c++)
            d->shared_from[d->shared_start[b + 1]++] = (int)d->from[c];
    }
    free(d->start);
    free(d->from);
    d->start = NULL;
    d->from = NULL;
}

void dss_free(homme_dss *d)
{
    for (int f = 0; f <= DSS_MAX_FIELDS; f++)
        esm_halo_free(d->plan[f]);
    free(d->element); free(d->shared); free(d->shared_start); free(d->shared_from);
    free(d->rmp); free(d->scratch);
    free(d->local);
    memset(d, 0, sizeof *d);
}

static void dss(homme_dss *d, int nfields, double *const fields[], int scale)
{
    esm_halo_update(plan_for(d, nfields), fields); /* pack, Isend/Irecv, Waitall, unpack */
    const int *start = d->shared_start, *from = d->shared_from, *shared = d->shared;
    double *sum = d->scratch;
    for (int f = 0; f < nfields; f++) {
        double *x = fields[f];
        for (long b = 0; b < d->nshared; b++) { /* every copy of the node, in global order */
            double s = x[from[start[b]]];
            for (int c = start[b] + 1; c < start[b + 1]; c++)
                s += x[from[c]];
            sum[b] = s;
        }
        for (long b = 0; b < d->nshared; b++)
            x[shared[b]] = sum[b];
        if (scale)
            for (long k = 0; k < d->npoints; k++)
                x[k] *= d->rmp[k];
    }
}

void dss_sum(homme_dss *d, int nfields, double *const fields[]) { dss(d, nfields, fields, 0); }
void dss_apply(homme_dss *d, int nfields, double *const fields[]) { dss(d, nfields, fields, 1); }

void dss_set_mass(homme_dss *d, const double *spheremp)
{
    double *mass = esm_calloc(d->length, sizeof *mass);
    memcpy(mass, spheremp, d->npoints * sizeof *mass);
    dss_sum(d, 1, &mass);
    for (long k = 0; k < d->npoints; k++)
        d->rmp[k] = 1.0 / mass[k];
    free(mass);
}
