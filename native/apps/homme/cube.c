/* The cubed sphere: GLL points, element topology, the space-filling curve over the six faces,
 * and the geometry of every element point. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cube.h"
#include "esm.h"
#include "esm_rank_state.h"

const double gll_xi[NP] = {-1.0, -0.44721359549995793928, 0.44721359549995793928, 1.0};
const double gll_w[NP] = {1.0 / 6.0, 5.0 / 6.0, 5.0 / 6.0, 1.0 / 6.0};
/* Computed by gll_init from the constants above: every rank computes the same values, so under
 * SMPI the ranks may share one copy (rewriting it changes no bit). */
double gll_deriv[NP][NP] ESM_RANK_INVARIANT;

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
static const int face_c[6][3] = {{1, 0, 0},  {0, 1, 0}, {-1, 0, 0},
                                 {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
static const int face_e1[6][3] = {{0, 1, 0}, {-1, 0, 0}, {0, -1, 0},
                                  {1, 0, 0}, {0, 1, 0},  {0, 1, 0}};
static const int face_e2[6][3] = {{0, 0, 1}, {0, 0, 1},  {0, 0, 1},
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

/* ---- topology, computed from lattice positions ----------------------------------------- */

static int axis_of(const int v[3])
{
    return v[0] ? 0 : v[1] ? 1 : 2;
}

int cube_copies(int ne, int g, int p, int copy[MAX_COPIES])
{
    int n = (NP - 1) * ne, l[3], ti, tj, count = 0;
    lattice(ne, g, p, l, &ti, &tj);
    for (int f = 0; f < 6; f++) { /* every face whose plane holds the node */
        int a = axis_of(face_c[f]), a1 = axis_of(face_e1[f]), a2 = axis_of(face_e2[f]);
        if (l[a] != (face_c[f][a] > 0 ? n : 0))
            continue;
        int i = face_e1[f][a1] > 0 ? l[a1] : n - l[a1];
        int j = face_e2[f][a2] > 0 ? l[a2] : n - l[a2];
        for (int je = (j - 1) / (NP - 1); je <= j / (NP - 1) && je < ne; je++)
            for (int ie = (i - 1) / (NP - 1); ie <= i / (NP - 1) && ie < ne; ie++) {
                int pi = i - (NP - 1) * ie, pj = j - (NP - 1) * je;
                if (pi >= 0 && pi < NP && pj >= 0 && pj < NP)
                    copy[count++] = (f * ne * ne + je * ne + ie) * NPTS + pi + NP * pj;
            }
    }
    for (int a = 1; a < count; a++) /* ascending: a handful, insertion sort */
        for (int b = a; b > 0 && copy[b - 1] > copy[b]; b--) {
            int t = copy[b];
            copy[b] = copy[b - 1];
            copy[b - 1] = t;
        }
    return count;
}

int cube_neighbours(int ne, int g, int nbr[MAX_NEIGHBOURS])
{
    int count = 0;
    for (int p = 0; p < NPTS; p++) {
        int copy[MAX_COPIES], ncopies = cube_copies(ne, g, p, copy);
        for (int k = 0; k < ncopies; k++) {
            int e = copy[k] / NPTS, at = count;
            for (int m = 0; m < count; m++)
                if (nbr[m] >= e) {
                    at = m;
                    break;
                }
            if (e == g || (at < count && nbr[at] == e))
                continue;
            memmove(&nbr[at + 1], &nbr[at], (count - at) * sizeof *nbr);
            nbr[at] = e;
            count++;
        }
    }
    return count;
}

/* Do elements a and b share an edge (two nodes or more)? */
static bool shares_edge(int ne, int a, int b)
{
    int common = 0;
    for (int p = 0; p < NPTS; p++) {
        int copy[MAX_COPIES], ncopies = cube_copies(ne, a, p, copy);
        for (int k = 0; k < ncopies; k++)
            common += copy[k] / NPTS == b;
    }
    return common >= 2;
}

/* ---- the curve over the cube ---------------------------------------------------------- */

/* Cell (i, j) of a face under symmetry s (bit 0 swaps i and j, bit 1 mirrors i, bit 2 j). */
static int face_element(int ne, int face, int s, int cell)
{
    int i = cell % ne, j = cell / ne;
    if (s & 1) {
        int t = i;
        i = j;
        j = t;
    }
    if (s & 2)
        i = ne - 1 - i;
    if (s & 4)
        j = ne - 1 - j;
    return face * ne * ne + j * ne + i;
}

/* The inverse: the cell that symmetry s takes to element g of its face. */
static int face_cell(int ne, int s, int g)
{
    int i = g % ne, j = (g / ne) % ne;
    if (s & 4)
        j = ne - 1 - j;
    if (s & 2)
        i = ne - 1 - i;
    if (s & 1) {
        int t = i;
        i = j;
        j = t;
    }
    return i + ne * j;
}

typedef struct {
    int ne;
    const int *order;
    int face[6], sym[6], used;
} face_path;

/* Faces in an order, each with a symmetry of its curve, such that each face's curve starts
 * next to where the previous one ended (depth-first search; a handful of steps). */
static int find_face_path(face_path *fp, int depth)
{
    int ne = fp->ne, last_cell = fp->order[ne * ne - 1];
    if (depth == 6)
        return 1;
    for (int f = 0; f < 6; f++) {
        if (fp->used & (1 << f))
            continue;
        for (int s = 0; s < 8; s++) {
            if (depth > 0) {
                int end = face_element(ne, fp->face[depth - 1], fp->sym[depth - 1], last_cell);
                if (!shares_edge(ne, end, face_element(ne, f, s, fp->order[0])))
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

/* The curve for ne (context: the int ne): the same on every rank. */
static void *build_curve(const void *context)
{
    int ne = *(const int *)context, per_face = ne * ne;
    homme_curve *cv = esm_calloc(1, sizeof *cv);
    cv->ne = ne;
    cv->order = esm_calloc(per_face, sizeof *cv->order);
    cv->position = esm_calloc(per_face, sizeof *cv->position);
    char name[48];
    esm_sfc_order(ne, ne, cv->order, name, sizeof name);
    for (int k = 0; k < per_face; k++)
        cv->position[cv->order[k]] = k;
    face_path fp = {.ne = ne, .order = cv->order};
    /* On a 2^a 3^b 5^c side the face curve runs corner to adjacent corner and the faces can
     * be chained; otherwise (cells skipped on a larger square) take the faces as they come. */
    int chained = esm_sfc_side(ne) == ne && find_face_path(&fp, 0);
    for (int k = 0; k < 6; k++) {
        cv->face[k] = chained ? fp.face[k] : k;
        cv->sym[k] = chained ? fp.sym[k] : 0;
        cv->slot[cv->face[k]] = k;
    }
    /* Breaks: inside a face (the same on all six: symmetries keep neighbours), and where one
     * face's curve hands over to the next. */
    int face_breaks = 0;
    for (int k = 1; k < per_face; k++) {
        int a = cv->order[k - 1], b = cv->order[k];
        face_breaks += abs(a % ne - b % ne) + abs(a / ne - b / ne) != 1;
    }
    cv->breaks = 6 * face_breaks;
    for (int k = 1; k < 6; k++)
        cv->breaks += !shares_edge(
            ne, face_element(ne, cv->face[k - 1], cv->sym[k - 1], cv->order[per_face - 1]),
            face_element(ne, cv->face[k], cv->sym[k], cv->order[0]));
    snprintf(cv->name, sizeof cv->name, "cube %s", name);
    return cv;
}

void cube_create(homme_cube *c, int ne, int ranks)
{
    memset(c, 0, sizeof *c);
    c->ne = ne;
    c->nelem = 6 * ne * ne;
    c->nnodes = 6 * (NP - 1) * (NP - 1) * ne * ne + 2; /* lattice points on the cube's surface */
    c->ranks = ranks;
    char key[64];
    snprintf(key, sizeof key, "homme.curve.ne%d", ne);
    c->curve = esm_shared(key, build_curve, &ne);
    c->curve_owned = esm_shared_owned();
    c->per_rank = c->nelem / ranks;
    c->extra = c->nelem % ranks;
}

void cube_free(homme_cube *c)
{
    if (c->curve_owned) {
        homme_curve *cv = (homme_curve *)c->curve;
        free(cv->order);
        free(cv->position);
        free(cv);
    }
    memset(c, 0, sizeof *c);
}

int cube_position(const homme_cube *c, int g)
{
    const homme_curve *cv = c->curve;
    int per_face = c->ne * c->ne, k = cv->slot[g / per_face];
    return k * per_face + cv->position[face_cell(c->ne, cv->sym[k], g)];
}

int cube_element(const homme_cube *c, int position)
{
    const homme_curve *cv = c->curve;
    int per_face = c->ne * c->ne, k = position / per_face;
    return face_element(c->ne, cv->face[k], cv->sym[k], cv->order[position % per_face]);
}

int cube_first(const homme_cube *c, int rank)
{
    int q = c->per_rank;
    return rank <= c->extra ? rank * (q + 1) : c->extra * (q + 1) + (rank - c->extra) * q;
}

int cube_owner(const homme_cube *c, int g)
{
    int q = c->per_rank, position = cube_position(c, g), bigger = c->extra * (q + 1);
    return position < bigger ? position / (q + 1) : c->extra + (position - bigger) / q;
}
