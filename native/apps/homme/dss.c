/* Direct stiffness summation: the exchange plan (element edges and corners to neighbour
 * ranks) and the sum over each node's copies in global element order. */
#include <stdlib.h>
#include <string.h>
#include "dss.h"

/* This rank's index of element g, or -1. */
static int local_of(const homme_dss *d, int g)
{
    int k = cube_position(d->cube, g) - d->first;
    return k >= 0 && k < d->nlocal ? k : -1;
}

static int ascending(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* The elements that receive from or send to this rank: its own and their neighbours,
 * ascending, without repeats. */
static int *elements_concerned(const homme_dss *d, int *count)
{
    int *list = esm_calloc((size_t)d->nlocal * (MAX_NEIGHBOURS + 1) + 1, sizeof *list), n = 0;
    for (int lb = 0; lb < d->nlocal; lb++) {
        list[n++] = d->element[lb];
        n += cube_neighbours(d->cube->ne, d->element[lb], &list[n]);
    }
    qsort(list, n, sizeof *list, ascending);
    int unique = 0;
    for (int k = 0; k < n; k++)
        if (unique == 0 || list[k] != list[unique - 1])
            list[unique++] = list[k];
    *count = unique;
    return list;
}

/* Walk every (receiving element r, sending element e of another rank) pair that concerns this
 * rank in global order, r ascending, then e ascending, then e's points ascending: the sender
 * packs and the receiver unpacks the same points in the same order. Sends come from the
 * element values; receives go to consecutive ghost slots. With `fill`, also point each
 * gathered copy at its ghost slot. */
static esm_halo_spec *exchange_spec(homme_dss *d, int fill)
{
    const homme_cube *c = d->cube;
    esm_halo_spec *s = esm_halo_spec_new();
    int me = esm_rank(), nconcerned, *concerned = elements_concerned(d, &nconcerned);
    long slot = 0, sent = 0;
    for (int kr = 0; kr < nconcerned; kr++) {
        int r = concerned[kr], to = cube_owner(c, r), nbr[MAX_NEIGHBOURS];
        int nnbr = cube_neighbours(c->ne, r, nbr);
        for (int k = 0; k < nnbr; k++) {
            int e = nbr[k], from = cube_owner(c, e);
            if (from == to || (from != me && to != me))
                continue;
            for (int p = 0; p < NPTS; p++) {
                int copy[MAX_COPIES], ncopies = cube_copies(c->ne, e, p, copy), q = -1, mine = 0;
                for (int m = 0; m < ncopies; m++) {
                    if (copy[m] / NPTS == r)
                        q = copy[m] % NPTS;
                    if (copy[m] == e * NPTS + p)
                        mine = m; /* e's copy among the node's copies */
                }
                if (q < 0)
                    continue; /* not on the edge or corner e shares with r */
                if (from == me) {
                    esm_halo_spec_send(s, to, (long)local_of(d, e) * NPTS + p, 1);
                    sent++;
                    continue;
                }
                long ghost = d->npoints + slot++;
                esm_halo_spec_recv(s, from, ghost, 1);
                if (fill) /* the copy of e among the copies gathered at (r, q) */
                    d->from[d->start[(long)local_of(d, r) * NPTS + q] + mine] = ghost;
            }
        }
    }
    free(concerned);
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
    d->first = cube_first(c, me);
    d->nlocal = cube_first(c, me + 1) - d->first;
    d->element = esm_calloc(d->nlocal, sizeof *d->element);
    for (int lb = 0; lb < d->nlocal; lb++)
        d->element[lb] = cube_element(c, d->first + lb);
    d->npoints = (long)d->nlocal * NPTS;
    /* Gather lists: the copies of each point's node, in global (element, point) order. */
    d->start = esm_calloc(d->npoints + 1, sizeof *d->start);
    d->from = esm_calloc(d->npoints * MAX_COPIES + 1, sizeof *d->from);
    for (long k = 0; k < d->npoints; k++) {
        int copy[MAX_COPIES], ncopies = cube_copies(c->ne, d->element[k / NPTS], k % NPTS, copy);
        d->start[k + 1] = d->start[k] + ncopies;
        for (int m = 0; m < ncopies; m++) {
            int lb = local_of(d, copy[m] / NPTS);
            d->from[d->start[k] + m] = lb >= 0 ? (long)lb * NPTS + copy[m] % NPTS : -1;
        }
    }
    esm_halo_spec *spec = exchange_spec(d, 1);
    d->plan[1] = esm_halo_create(spec, 1, 1, engine);
    d->peers = esm_halo_peers(d->plan[1]);
    d->length = d->npoints + d->nghost;
    d->rmp = esm_field_alloc((d->npoints + 1) * sizeof *d->rmp);
    d->scratch = esm_field_alloc((d->npoints + 1) * sizeof *d->scratch);
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
        for (int m = d->start[k]; m < d->start[k + 1]; m++)
            d->shared_from[d->shared_start[b + 1]++] = (int)d->from[m];
    }
    /* Per field: each copy read with its index, each shared point's list bounds and index
     * read, its sum written and read back, the point written. */
    d->sum_bytes = 12.0 * d->shared_start[d->nshared] + 32.0 * d->nshared;
    free(d->start);
    free(d->from);
    d->start = NULL;
    d->from = NULL;
}

void dss_free(homme_dss *d)
{
    for (int f = 0; f <= DSS_MAX_FIELDS; f++)
        esm_halo_free(d->plan[f]);
    free(d->element);
    free(d->shared);
    free(d->shared_start);
    free(d->shared_from);
    esm_field_free(d->rmp);
    esm_field_free(d->scratch);
    memset(d, 0, sizeof *d);
}

static void dss(homme_dss *d, int nfields, double *const fields[], int scale)
{
    static const esm_kernel sums = {.name = "homme.dss_sum"};
    esm_halo_update(plan_for(d, nfields), fields); /* pack, Isend/Irecv, Waitall, unpack */
    const int *start = d->shared_start, *from = d->shared_from, *shared = d->shared;
    double *sum = d->scratch;
    double bytes = nfields * (d->sum_bytes + (scale ? 24.0 * d->npoints : 0.0));
    /* flops: an add per copy of a shared node after its first; the scaling, one a point */
    double flops = nfields * ((double)(start[d->nshared] - d->nshared) + (scale ? d->npoints : 0));
    if (!esm_kernel_begin_flops(&sums, bytes / 8, bytes, flops))
        return;
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
    esm_kernel_end(&sums);
}

void dss_sum(homme_dss *d, int nfields, double *const fields[])
{
    dss(d, nfields, fields, 0);
}
void dss_apply(homme_dss *d, int nfields, double *const fields[])
{
    dss(d, nfields, fields, 1);
}

void dss_set_mass(homme_dss *d, const double *spheremp)
{
    double *mass = esm_field_alloc(d->length * sizeof *mass);
    memcpy(mass, spheremp, d->npoints * sizeof *mass);
    dss_sum(d, 1, &mass);
    for (long k = 0; k < d->npoints; k++)
        d->rmp[k] = 1.0 / mass[k];
    esm_field_free(mass);
}
