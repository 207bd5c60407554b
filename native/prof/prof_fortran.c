/* Fortran support: the library's Fortran sentinels, argument conversion for the accounting,
 * the Fortran MPI_Init/MPI_Finalize entry points and the start-up self-check. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "esm_rank_state.h"
#include "prof_bind.h"
#include "prof_hooks.h"
#include "prof_state.h"

/* The library's sentinels, found at start: the same in every rank */
static const void *f_in_place ESM_RANK_INVARIANT, *f_bottom ESM_RANK_INVARIANT,
    *f08_in_place ESM_RANK_INVARIANT, *f08_bottom ESM_RANK_INVARIANT;
static const MPI_Fint *f_status_ignore ESM_RANK_INVARIANT, *f_statuses_ignore ESM_RANK_INVARIANT,
    *f08_status_ignore ESM_RANK_INVARIANT, *f08_statuses_ignore ESM_RANK_INVARIANT;
static const MPI_Fint *c_f_status_ignore ESM_RANK_INVARIANT,
    *c_f_statuses_ignore ESM_RANK_INVARIANT; /* MPI_F_STATUS(ES)_IGNORE */

esm_fptr esm_fsym(const char *name)
{
    esm_bind_mpi();                 /* a library loaded locally is made global first */
    esm_fptr f = (esm_fptr)dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr,
                "esmprof: the MPI library has no Fortran symbol %s: was the profiler built "
                "for another MPI? (esmperf profile picks the right build)\n",
                name);
        abort();
    }
    return f;
}

/* The sentinels are common blocks of the library's mpif.h; their addresses are what Fortran
 * callers pass for MPI_IN_PLACE, MPI_BOTTOM and MPI_STATUS(ES)_IGNORE. */
static void capture_sentinels(void)
{
    MPI_Fint *const *c_ignore = dlsym(RTLD_DEFAULT, "MPI_F_STATUS_IGNORE");
    MPI_Fint *const *c_ignores = dlsym(RTLD_DEFAULT, "MPI_F_STATUSES_IGNORE");
    c_f_status_ignore = c_ignore ? *c_ignore : NULL;
    c_f_statuses_ignore = c_ignores ? *c_ignores : NULL;
#ifdef OPEN_MPI
    f_in_place = dlsym(RTLD_DEFAULT, "mpi_fortran_in_place_");
    f_bottom = dlsym(RTLD_DEFAULT, "mpi_fortran_bottom_");
    f_status_ignore = dlsym(RTLD_DEFAULT, "mpi_fortran_status_ignore_");
    f_statuses_ignore = dlsym(RTLD_DEFAULT, "mpi_fortran_statuses_ignore_");
#else   /* MPICH: COMMON /MPIPRIV1/ MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE, /MPIPRIV2/ ... */
    const MPI_Fint *priv1 = dlsym(RTLD_DEFAULT, "mpipriv1_");
    const MPI_Fint *priv2 = dlsym(RTLD_DEFAULT, "mpipriv2_");
    if (priv1) {
        f_bottom = priv1;
        f_in_place = priv1 + 1;
        f_status_ignore = priv1 + 2;
    }
    if (priv2)
        f_statuses_ignore = priv2;
    f08_in_place = dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_IN_PLACE");     /* use mpi_f08 */
    f08_bottom = dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_BOTTOM");
    f08_status_ignore = dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_STATUS_IGNORE_OBJ");
    f08_statuses_ignore = dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_STATUSES_IGNORE_OBJ");
#endif
}

/* A choice buffer as C sees it; `descriptor`: MPICH's mpi_f08 passes a TS 29113 descriptor,
 * whose first member is the base address. */
const void *esm_fbuf(const void *fbuf, int descriptor)
{
    if (descriptor && fbuf)
        fbuf = *(const void *const *)fbuf;
    if (fbuf && (fbuf == f_in_place || fbuf == f08_in_place))
        return MPI_IN_PLACE;
    if (fbuf && (fbuf == f_bottom || fbuf == f08_bottom))
        return MPI_BOTTOM;
    return fbuf;
}

int esm_fstatus_ignored(const MPI_Fint *f)
{
    return f && (f == f_status_ignore || f == f08_status_ignore ||
                 (c_f_status_ignore && f == c_f_status_ignore));
}

int esm_fstatuses_ignored(const MPI_Fint *f)
{
    return f && (f == f_statuses_ignore || f == f08_statuses_ignore ||
                 (c_f_statuses_ignore && f == c_f_statuses_ignore));
}

MPI_Status *esm_fstatuses(esm_call *c, const MPI_Fint *f, int n)
{
    MPI_Status *s = esm_tmp(c, sizeof(MPI_Status) * (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; i++)
        PMPI_Status_f2c(f + (size_t)i * ESM_F_STATUS_SIZE, &s[i]);
    return s;
}

int *esm_findices(esm_call *c, const MPI_Fint *f, int n)
{
    int *idx = esm_tmp(c, sizeof(int) * (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; i++)
        idx[i] = f[i] - 1;          /* Fortran indices are 1-based */
    return idx;
}

char *esm_fstr(esm_call *c, const char *f, size_t len)
{
    while (len > 0 && f[len - 1] == ' ')
        len--;
    char *s = esm_tmp(c, len + 1);
    memcpy(s, f, len);
    return s;
}

/* ------------------------------------------------------------ self-check */

void esm_fortran_selfcheck(esm_fortran_check *out)
{
    memset(out, 0, sizeof *out);
    capture_sentinels();
    esm_fptr library = (esm_fptr)dlsym(RTLD_NEXT, "pmpi_comm_rank_");
    esm_fptr entry = (esm_fptr)dlsym(RTLD_DEFAULT, "mpi_comm_rank_");
    out->bindings_loaded = library != NULL;
    if (!library || !entry)
        return;
    esm_fstat *f = &esm_self()->f[ESM_MPI_Comm_rank];
    MPI_Fint world = MPI_Comm_c2f(MPI_COMM_WORLD), rank = 0, ierr = 0;
    int was_on = esm_on;
    esm_on = 1;
    uint64_t fortran_calls = f->calls_fortran;
    entry(&world, &rank, &ierr);                    /* what a Fortran program calls */
    out->wrappers_reached = f->calls_fortran > fortran_calls;
    uint64_t c_calls = f->calls - f->calls_fortran;
    library(&world, &rank, &ierr);                  /* the library's own Fortran layer */
    out->library_calls_c_layer = f->calls - f->calls_fortran > c_calls;
    esm_on = was_on;
    memset(f, 0, sizeof *f);                        /* the probe is not the program's */
}

/* ------------------------------------------------------------ Init and Finalize */

#define FORTRAN_ENTRY(low, up, params, body)                                                       \
    void low##_ params                                                                             \
    {                                                                                              \
        static esm_fptr real ESM_RANK_INVARIANT;                                                   \
        if (!real)                                                                                 \
            real = esm_fsym("p" #low "_");                                                         \
        body                                                                                       \
    }                                                                                              \
    void low params __attribute__((alias(#low "_")));                                              \
    void low##__ params __attribute__((alias(#low "_")));                                          \
    void up params __attribute__((alias(#low "_")));

static void f_init(esm_fptr real, MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    MPI_Fint own = 0;
    if (!ierr)
        ierr = &own;
    esm_depth++;                    /* MPICH's Fortran init may call the C MPI_Init */
    if (required)
        real(required, provided, ierr);
    else
        real(ierr);
    esm_depth--;
    if (*ierr == MPI_SUCCESS)
        esm_init_hook();
}

static void f_finalize(esm_fptr real, MPI_Fint *ierr)
{
    MPI_Fint own = 0;
    esm_finalize_hook();
    esm_depth++;
    real(ierr ? ierr : &own);
    esm_depth--;
}

FORTRAN_ENTRY(mpi_init, MPI_INIT, (MPI_Fint * ierr), f_init(real, NULL, NULL, ierr);)
FORTRAN_ENTRY(mpi_init_thread, MPI_INIT_THREAD,
              (MPI_Fint * required, MPI_Fint *provided, MPI_Fint *ierr),
              f_init(real, required, provided, ierr);)
FORTRAN_ENTRY(mpi_finalize, MPI_FINALIZE, (MPI_Fint * ierr), f_finalize(real, ierr);)

/* mpi_f08: the library's own symbol of the same name (both families call PMPI_ from there) */
void mpi_init_f08_(MPI_Fint *ierr)
{
    static esm_fptr real ESM_RANK_INVARIANT;
    if (!real)
        real = esm_fsym("mpi_init_f08_");
    f_init(real, NULL, NULL, ierr);
}

void mpi_init_thread_f08_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    static esm_fptr real ESM_RANK_INVARIANT;
    if (!real)
        real = esm_fsym("mpi_init_thread_f08_");
    f_init(real, required, provided, ierr);
}

void mpi_finalize_f08_(MPI_Fint *ierr)
{
    static esm_fptr real ESM_RANK_INVARIANT;
    if (!real)
        real = esm_fsym("mpi_finalize_f08_");
    f_finalize(real, ierr);
}
