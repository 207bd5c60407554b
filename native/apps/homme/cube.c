/* The cubed sphere: GLL points, element topology, the space-filling curve over the six faces,
 * and the geometry of every element point. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cube.h"
#include "esm.h"

const double gll_xi[NP] = {-1.0, -0.44721359549995793928, 0.44721359549995793928, 1.0};
const double gll_w[NP] = {1.0 / 6.0, 5.0 / 6.0, 5.0 / 6.0, 1.0 / 6.0};
double gll_deriv[NP][NP];

void gll_init(void)
{
    /* Lagrange polynomials through the GLL points, in barycentric form. */
    double bary[NP];
    for (int b = 0; b < NP; b++) {
        bary[b] = 1.0;
        for (int m = 0; m < NP; m++)
            if (m != b)
                bary[b] /= gll_xi[b] - gll_xi[m];
    }
    for (int a = 0; a < NP; a++) {
        double diagonal = 0.0;
        for (int b = 0; b < NP; b++)
            if (b != a) {
                gll_deriv[a][b] = bary[b] / bary[a] / (gll_xi[a] - gll_xi[b]);
                diagonal -= gll_deriv[a][b];
            }
        gll_deriv[a][a] = diagonal;
    }
}

/* Each face: its centre c (outward normal) and the axes e1, e2 of its (alpha, beta)
 * coordinates, right-handed: e1 x e2 = c. Faces 0-3 go round the equator, 4 is north, 5 south. */
static const int face_c[6][3] = {{1, 0, 0}, {0, 1, 0}, {-1, 0, 0},
                                  {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
static const int face_e1[6][3] = {{0, 1, 0}, {-1, 0, 0}, {0, -1, 0},
                                   {1, 0, 0}, {0, 1, 0}, {0, 1, 0}};
static const int face_e2[6][3] = {{0, 0, 1}, {0, 0, 1}, {0, 0, 1},
                                   {0, 0, 1}, {-1, 0, 0}, {1, 0, 0}};

/* Along a face edge there are N = 3 ne + 1 lattice positions (element edges and the two inner
 * GLL points of each element); lattice_tan(k) is tan(angle) of position k. Made exactly
 * antisymmetric (and exactly +-1 at the cube edges) so that a point seen from any face has the
 * same coordinates. */
static double lattice_tan(int ne, int k)
{
    int n = (NP - 1) * ne;
    if (2 * k > n)
        return -lattice_tan(ne, n - k);
    if (k == 0)
        return -1.0;
    if (2 * k == n)
        return 0.0;
    int element = k / (NP - 1), i = k % (NP - 1);
    double angle = -M_PI / 4 + (M_PI / 2) / ne * (element + 0.5 * (gll_xi[i] + 1.0));
    return tan(angle);
}

/* The lattice coordinates (0..N along x, y, z) of point p of element g: equal for the same
 * node whichever element it is seen from. */
static void lattice(int ne, int g, int p, int l[3], int *ti, int *tj)
{
    int n = (NP - 1) * ne, face = g / (ne * ne), ie = g % ne, je = (g / ne) % ne;
    int i = (NP - 1) * ie + p % NP, j = (NP - 1) * je + p / NP;
    for (int a = 0; a < 3; a++) {
        if (face_c[face][a])
            l[a] = face_c[face][a] > 0 ? n : 0;
        else if (face_e1[face][a])
            l[a] = face_e1[face][a] > 0 ? i : n - i;
        else
            l[a] = face_e2[face][a] > 0 ? j : n - j;
    }
    *ti = i;
    *tj = j;
}

point_geometry cube_point(int ne, int g, int p, double radius)
{
    int l[3], i, j, face = g / (ne * ne);
    lattice(ne, g, p, l, &i, &j);
    double cube[3], r2 = 0.0;
    for (int a = 0; a < 3; a++) {
        cube[a] = lattice_tan(ne, l[a]);
        r2 += cube[a] * cube[a];
    }
    double r = sqrt(r2);
    point_geometry pg;
    for (int a = 0; a < 3; a++)
        pg.x[a] = cube[a] / r;
    /* X = P/|P| with P = c + tan(alpha) e1 + tan(beta) e2, alpha = alpha0 + (xi+1) dalpha/2:
     * dX/dalpha = sec^2(alpha) (e1 - X (X.e1)) / |P|, and X.e1 = tan(alpha) / |P|. */
    double t1 = lattice_tan(ne, i), t2 = lattice_tan(ne, j), half = 0.5 * (M_PI / 2) / ne;
    double s1 = radius * half * (1.0 + t1 * t1) / r, s2 = radius * half * (1.0 + t2 * t2) / r;
    for (int a = 0; a < 3; a++) {
        pg.d1[a] = s1 * (face_e1[face][a] - pg.x[a] * t1 / r);
        pg.d2[a] = s2 * (face_e2[face][a] - pg.x[a] * t2 / r);
    }
    double n[3] = {pg.d1[1] * pg.d2[2] - pg.d1[2] * pg.d2[1],
                   pg.d1[2] * pg.d2[0] - pg.d1[0] * pg.d2[2],
                   pg.d1[0] * pg.d2[1] - pg.d1[1] * pg.d2[0]};
    pg.jac = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    return pg;
}

/* ---- topology ------------------------------------------------------------------------- */

typedef struct { int64_t key; int point; } keyed_point;

static int by_key(const void *a, const void *b)
{
    const keyed_point *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->point > y->point) - (x->point < y->point);
}

static int ascending(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* Nodes: sort every element point by its lattice key; equal keys are one node. */
static void number_nodes(homme_cube *c)
{
    long npoints = (long)c->nelem * NPTS;
    int64_t side = (NP - 1) * c->ne + 1;
    keyed_point *kp = esm_calloc(npoints, sizeof *kp);
    for (int g = 0; g < c->nelem; g++)
        for (int p = 0; p < NPTS; p++) {
            int l[3], i, j;
            lattice(c->ne, g, p, l, &i, &j);
            int64_t key = l[0] + side * (l[1] + side * l[2]);
            kp[(long)g * NPTS + p] = (keyed_point){key, g * NPTS + p};
        }
    qsort(kp, npoints, sizeof *kp, by_key);
    c->node = esm_calloc(npoints, sizeof *c->node);
    c->member = esm_calloc(npoints, sizeof *c->member);
    c->member_start = esm_calloc(npoints + 1, sizeof *c->member_start);
    int nodes = 0;
    for (long k = 0; k < npoints; k++) {
        if (k == 0 || kp[k].key != kp[k - 1].key)
            c->member_start[nodes++] = (int)k;
        c->node[kp[k].point] = nodes - 1;
        c->member[k] = kp[k].point;
    }
    c->member_start[nodes] = (int)npoints;
    c->nnodes = nodes;
    free(kp);
}

/* Neighbours: elements sharing at least one node (edge and corner neighbours). */
static void find_neighbours(homme_cube *c)
{
    enum { MAX_NBR = 12 };
    int *list = esm_calloc((size_t)c->nelem * MAX_NBR, sizeof *list);
    int *count = esm_calloc(c->nelem, sizeof *count);
    for (int n = 0; n < c->nnodes; n++)
        for (int a = c->member_start[n]; a < c->member_start[n + 1]; a++)
            for (int b = c->member_start[n]; b < c->member_start[n + 1]; b++) {
                int ea = c->member[a] / NPTS, eb = c->member[b] / NPTS, k = 0;
                if (ea == eb)
                    continue;
                while (k < count[ea] && list[ea * MAX_NBR + k] != eb)
                    k++;
                if (k == count[ea] && count[ea] < MAX_NBR)
                    list[ea * MAX_NBR + count[ea]++] = eb;
            }
    c->nbr_start = esm_calloc(c->nelem + 1, sizeof *c->nbr_start);
    for (int g = 0; g < c->nelem; g++)
        c->nbr_start[g + 1] = c->nbr_start[g] + count[g];
    c->nbr = esm_calloc(c->nbr_start[c->nelem] + 1, sizeof *c->nbr);
    for (int g = 0; g < c->nelem; g++) {
        qsort(&list[g * MAX_NBR], count[g], sizeof *list, ascending);
        memcpy(&c->nbr[c->nbr_start[g]], &list[g * MAX_NBR], count[g] * sizeof *list);
    }
    free(list);
    free(count);
}

static int shares_edge(const homme_cube *c, int a, int b)
{
    int common = 0;
    for (int p = 0; p < NPTS; p++)
        for (int q = 0; q < NPTS; q++)
            common += c->node[a * NPTS + p] == c->node[b * NPTS + q];
    return common >= 2;
}

/* ---- the curve over the cube ---------------------------------------------------------- */

/* Cell (i, j) of a face under symmetry s (bit 0 swaps i and j, bit 1 mirrors i, bit 2 j). */
static int face_element(int ne, int face, int s, int cell)
{
    int i = cell % ne, j = cell / ne;
    if (s & 1) { int t = i; i = j; j = t; }
    if (s & 2) i = ne - 1 - i;
    if (s & 4) j = ne - 1 - j;
    return face * ne * ne + j * ne + i;
}

typedef struct { const homme_cube *c; const int *order; int face[6], sym[6], used; } face_path;

/* Faces in an order, each with a symmetry of its curve, such that each face's curve starts
 * next to where the previous one ended (depth-first search; a handful of steps). */
static int find_face_path(face_path *fp, int depth)
{
    int ne = fp->c->ne, last_cell = fp->order[ne * ne - 1];
    if (depth == 6)
        return 1;
    for (int f = 0; f < 6; f++) {
        if (fp->used & (1 << f))
            continue;
        for (int s = 0; s < 8; s++) {
            if (depth > 0) {
                int end = face_element(ne, fp->face[depth - 1], fp->sym[depth - 1], last_cell);
                if (!shares_edge(fp->c, end, face_element(ne, f, s, fp->order[0])))
                    continue;
            }
            fp->face[depth] = f;
            fp->sym[depth] = s;
            fp->used |= 1 << f;
            if (find_face_path(fp, depth + 1))
                return 1;
            fp->used &= ~(1 << f);
        }
    }
    return 0;
}

static void make_curve(homme_cube *c)
{
    int ne = c->ne, per_face = ne * ne;
    int *order = esm_calloc(per_face, sizeof *order);
    char name[48];
    esm_sfc_order(ne, ne, order, name, sizeof name);
    face_path fp = {.c = c, .order = order};
    /* On a 2^a 3^b 5^c side the face curve runs corner to adjacent corner and the faces can
     * be chained; otherwise (cells skipped on a larger square) take the faces as they come. */
    int chained = esm_sfc_side(ne) == ne && find_face_path(&fp, 0);
    if (!chained)
        for (int f = 0; f < 6; f++)
            fp.face[f] = f, fp.sym[f] = 0;
    c->curve = esm_calloc(c->nelem, sizeof *c->curve);
    for (int k = 0; k < 6; k++)
        for (int cell = 0; cell < per_face; cell++)
            c->curve[k * per_face + cell] = face_element(ne, fp.face[k], fp.sym[k], order[cell]);
    c->curve_breaks = 0;
    for (int k = 1; k < c->nelem; k++)
        c->curve_breaks += !shares_edge(c, c->curve[k - 1], c->curve[k]);
    snprintf(c->curve_name, sizeof c->curve_name, "cube %s", name);
    free(order);
}

void cube_create(homme_cube *c, int ne, int ranks)
{
    memset(c, 0, sizeof *c);
    c->ne = ne;
    c->nelem = 6 * ne * ne;
    c->ranks = ranks;
    number_nodes(c);
    find_neighbours(c);
    make_curve(c);
    /* Contiguous pieces of the curve whose sizes differ by at most one element. */
    c->first = esm_calloc(ranks + 1, sizeof *c->first);
    c->owner = esm_calloc(c->nelem, sizeof *c->owner);
    for (int r = 0; r <= ranks; r++)
        c->first[r] = (int)((long)r * c->nelem / ranks);
    for (int r = 0; r < ranks; r++)
        for (int k = c->first[r]; k < c->first[r + 1]; k++)
            c->owner[c->curve[k]] = r;
}

void cube_free(homme_cube *c)
{
    free(c->node); free(c->member_start); free(c->member); free(c->nbr_start); free(c->nbr);
    free(c->curve); free(c->owner); free(c->first);
    memset(c, 0, sizeof *c);
}
