/* The linear solve by PETSc's KSP, as a cross-check of krylov.c and blockmat.c: the same
 * Jacobian copied into a PETSc MPIBAIJ matrix (block size 4), solved with KSPGMRES or KSPBCGS
 * and PCBJACOBI with ILU(0) on each rank's block (PETSc's defaults in parallel) or PCNONE, the same
 * tolerances. Built only where the system has PETSc (pkg-config petsc) for the MPI it was
 * compiled with (Debian's PETSc: Debian's Open MPI); elsewhere these are stubs and
 * --library petsc ends the run with a message naming the fix. PETSc options in the
 * environment (PETSC_OPTIONS, e.g. "-ksp_view") are honoured. */
#include <stdlib.h>
#include "pflotran.h"

#ifdef ESM_HAVE_PETSC
#include <petscksp.h>

struct petsc_solver {
    const grid *g;
    Mat A;
    Vec b, x;
    KSP ksp;
    PetscInt first;     /* this rank's first block row */
    PetscInt *columns;  /* work: block columns of one row */
    PetscScalar *values;
};

bool petsc_built(void)
{
    return true;
}

void petsc_start(void)
{
    PetscCallAbort(PETSC_COMM_WORLD, PetscInitializeNoArguments());
}

void petsc_stop(void)
{
    PetscFinalize();
}

petsc_solver *petsc_solver_create(const grid *g, krylov_settings settings)
{
    petsc_solver *p = esm_calloc(1, sizeof *p);
    p->g = g;
    p->first = (PetscInt)grid_cells_before(g, esm_rank()); /* consecutive block rows per rank */
    PetscInt n = (PetscInt)g->ncells * NS;
    PetscCallAbort(PETSC_COMM_WORLD,
                   MatCreateBAIJ(PETSC_COMM_WORLD, NS, n, n, PETSC_DETERMINE, PETSC_DETERMINE,
                                 BLOCKS, NULL, FACES, NULL, &p->A));
    PetscCallAbort(PETSC_COMM_WORLD,
                   VecCreateMPIWithArray(PETSC_COMM_WORLD, NS, n, PETSC_DECIDE, NULL, &p->b));
    PetscCallAbort(PETSC_COMM_WORLD,
                   VecCreateMPIWithArray(PETSC_COMM_WORLD, NS, n, PETSC_DECIDE, NULL, &p->x));
    PetscCallAbort(PETSC_COMM_WORLD, KSPCreate(PETSC_COMM_WORLD, &p->ksp));
    KSPSetType(p->ksp, settings.method == SOLVER_GMRES ? KSPGMRES : KSPBCGS);
    if (settings.method == SOLVER_GMRES)
        KSPGMRESSetRestart(p->ksp, settings.restart);
    KSPSetTolerances(p->ksp, settings.rtol, settings.atol, settings.dtol, settings.max_iterations);
    PC pc;
    KSPGetPC(p->ksp, &pc);
    /* block Jacobi, sub-solver ILU(0) (PETSc's default), or PCNONE (--pc none) */
    PCSetType(pc, settings.pc == PC_NONE ? PCNONE : PCBJACOBI);
    KSPSetFromOptions(p->ksp);
    p->columns = esm_calloc(BLOCKS, sizeof *p->columns);
    p->values = esm_calloc(BLOCKS * BLOCK_SIZE, sizeof *p->values);
    return p;
}

/* Global block column of the cell across face f of local cell (i, j, k), or -1. */
static PetscInt column_across(const grid *g, int f, int i, int j, int k)
{
    int at[3] = {g->i0 + i, g->j0 + j, g->k0 + k}, n[3] = {g->nx, g->ny, g->nz};
    if (f < FACES) {
        at[f / 2] += f % 2 ? 1 : -1;
        if (at[f / 2] < 0 || at[f / 2] >= n[f / 2])
            return -1;
    }
    long local;
    int owner = grid_owner(g, at[0], at[1], at[2], &local);
    return (PetscInt)(grid_cells_before(g, owner) + local);
}

krylov_outcome petsc_solve(petsc_solver *p, const block_matrix *A, const double *b, double *x)
{
    const grid *g = p->g;
    for (int k = 0; k < g->mz; k++)
        for (int j = 0; j < g->my; j++)
            for (int i = 0; i < g->mx; i++) {
                long c = grid_cell(g, i, j, k);
                PetscInt row = p->first + c, ncolumns = 0;
                const double *blocks = A->block + c * BLOCKS * BLOCK_SIZE;
                PetscInt which[BLOCKS];
                for (int f = 0; f < BLOCKS; f++) {
                    PetscInt column = column_across(g, f, i, j, k);
                    if (column < 0)
                        continue;
                    which[ncolumns] = f;
                    p->columns[ncolumns++] = column;
                }
                /* row-oriented values of the NS x (ncolumns NS) strip */
                for (int s = 0; s < NS; s++)
                    for (PetscInt b = 0; b < ncolumns; b++)
                        for (int q = 0; q < NS; q++)
                            p->values[(s * ncolumns + b) * NS + q] =
                                blocks[which[b] * BLOCK_SIZE + s * NS + q];
                MatSetValuesBlocked(p->A, 1, &row, ncolumns, p->columns, p->values, INSERT_VALUES);
            }
    PetscCallAbort(PETSC_COMM_WORLD, MatAssemblyBegin(p->A, MAT_FINAL_ASSEMBLY));
    PetscCallAbort(PETSC_COMM_WORLD, MatAssemblyEnd(p->A, MAT_FINAL_ASSEMBLY));
    KSPSetOperators(p->ksp, p->A, p->A);
    VecPlaceArray(p->b, b);
    VecPlaceArray(p->x, x);
    PetscCallAbort(PETSC_COMM_WORLD, KSPSolve(p->ksp, p->b, p->x));
    VecResetArray(p->b);
    VecResetArray(p->x);
    PetscInt iterations;
    KSPConvergedReason reason;
    PetscReal rnorm;
    KSPGetIterationNumber(p->ksp, &iterations);
    KSPGetConvergedReason(p->ksp, &reason);
    KSPGetResidualNorm(p->ksp, &rnorm);
    return (krylov_outcome){
        .iterations = (int)iterations,
        .converged = reason > 0,
        .reason = reason == KSP_CONVERGED_RTOL   ? "rtol"
                  : reason == KSP_CONVERGED_ATOL ? "atol"
                  : reason == KSP_DIVERGED_ITS   ? "max_it"
                  : reason > 0                   ? "converged"
                                                 : "diverged",
        .rnorm = rnorm,
    };
}

void petsc_solver_free(petsc_solver *p)
{
    if (!p)
        return;
    KSPDestroy(&p->ksp);
    VecDestroy(&p->b);
    VecDestroy(&p->x);
    MatDestroy(&p->A);
    free(p->columns);
    free(p->values);
    free(p);
}

#else /* built without PETSc */

bool petsc_built(void)
{
    return false;
}
void petsc_start(void) {}
void petsc_stop(void) {}
petsc_solver *petsc_solver_create(const grid *g, krylov_settings settings)
{
    (void)g, (void)settings;
    return NULL;
}
krylov_outcome petsc_solve(petsc_solver *p, const block_matrix *A, const double *b, double *x)
{
    (void)p, (void)A, (void)b, (void)x;
    return (krylov_outcome){.reason = "no PETSc"};
}
void petsc_solver_free(petsc_solver *p)
{
    (void)p;
}
#endif
