/* libesmworld: proof that a run's ranks formed one MPI world of the size asked, for the
 * repetitions the profiler is not in (docs/studies.md, "A run proves it ran as asked").
 *
 * Preloaded by the study runner, it wraps only MPI initialisation (C, Fortran, mpi_f08), so a
 * measured run pays nothing per MPI call. When the program's MPI_Init returns, each process
 * writes one file into $ESMPERF_WORLD_DIR: its rank, the size of its MPI_COMM_WORLD and the
 * first line of the MPI library that initialised (MPI_Get_library_version). The runner counts
 * the files: one world of 2 is two processes of ranks 0 and 1 that both see 2; an Open
 * MPI-linked program started by MPICH's launcher leaves two files of rank 0 in a world of 1.
 *
 * It includes no mpi.h and links no MPI, so one build serves every ABI: the library is the one
 * the process loaded (found as the profiler finds it, prof_bind.c), MPI_COMM_WORLD is Open
 * MPI's object when the library has one, else the MPICH ABI's constant. These are not
 * profiler wrappers (those come from mpi.spec): nothing here is measured. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MPICH_COMM_WORLD ((intptr_t)0x44000000) /* MPI_COMM_WORLD in the MPICH ABI */
#define VERSION_CHARS 8192                      /* MPICH's MPI_MAX_LIBRARY_VERSION_STRING */

typedef void (*fortran_init)(int *, ...);
static int reported;

/* The loaded object that defines PMPI_Init (Python's mpi4py loads MPI locally: not global). */
static int find_mpi(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    if (!info->dlpi_name || !info->dlpi_name[0])
        return 0;
    void *handle = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (handle && dlsym(handle, "PMPI_Init")) {
        *(void **)data = handle;
        return 1;
    }
    if (handle)
        dlclose(handle);
    return 0;
}

static void *mpi_library(void)
{
    void *handle = NULL;
    dl_iterate_phdr(find_mpi, &handle);
    return handle;
}

static void *mpi_symbol(const char *name)
{
    void *symbol = dlsym(RTLD_NEXT, name);
    if (!symbol) {
        void *library = mpi_library();
        symbol = library ? dlsym(library, name) : NULL;
    }
    if (!symbol) {
        fprintf(stderr, "esmworld: no loaded library defines %s (a statically linked MPI?)\n",
                name);
        _exit(70);
    }
    return symbol;
}

/* After the program's MPI has initialised: this process's line of the world's census. */
static void report(void)
{
    const char *dir = getenv("ESMPERF_WORLD_DIR");
    if (reported || !dir)
        return;
    void *library = mpi_library();
    if (!library)
        return;
    reported = 1;
    int (*comm_rank)(intptr_t, int *) = (int (*)(intptr_t, int *))dlsym(library, "PMPI_Comm_rank");
    int (*comm_size)(intptr_t, int *) = (int (*)(intptr_t, int *))dlsym(library, "PMPI_Comm_size");
    int (*get_version)(char *, int *) =
        (int (*)(char *, int *))dlsym(library, "PMPI_Get_library_version");
    /* A C program using MPI_COMM_WORLD holds Open MPI's object by copy relocation: the global
     * lookup finds that copy, the one the library uses; a local library keeps its own. */
    void *ompi_world = dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world");
    if (!ompi_world)
        ompi_world = dlsym(library, "ompi_mpi_comm_world");
    intptr_t world = ompi_world ? (intptr_t)ompi_world : MPICH_COMM_WORLD;
    int rank = -1, size = -1, length = 0;
    static char version[VERSION_CHARS + 1];
    if (comm_rank && comm_size) {
        comm_rank(world, &rank);
        comm_size(world, &size);
    }
    if (get_version)
        get_version(version, &length);
    version[strcspn(version, "\n")] = '\0';
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    char path[4096], line[VERSION_CHARS + 64];
    snprintf(path, sizeof path, "%s/%s-%ld", dir, host, (long)getpid());
    int n = snprintf(line, sizeof line, "%d %d %s\n", rank, size, version);
    mkdir(dir, 0755); /* the runner's scratch directory holds it; made by the first process */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        ssize_t written = write(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        (void)written;
        close(fd);
    }
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = ((int (*)(int *, char ***))mpi_symbol("MPI_Init"))(argc, argv);
    if (rc == 0) /* MPI_SUCCESS in every ABI */
        report();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int (*real)(int *, char ***, int, int *) =
        (int (*)(int *, char ***, int, int *))mpi_symbol("MPI_Init_thread");
    int rc = real(argc, argv, required, provided);
    if (rc == 0)
        report();
    return rc;
}

/* Fortran: each compiler's spelling of MPI_INIT and MPI_INIT_THREAD (mpif.h, use mpi) and
 * mpi_f08's own symbols. Every entry forwards to the next definition of its own name, not to the
 * PMPI_ one, so a tool the user preloads after this library still sees the program's call. */
#define FORTRAN_INIT(name, real_name, params, args)                                                \
    void name params                                                                               \
    {                                                                                              \
        static void(*real) params;                                                                 \
        if (!real)                                                                                 \
            real = (void(*) params)mpi_symbol(real_name);                                          \
        real args;                                                                                 \
        if (*ierr == 0)                                                                            \
            report();                                                                              \
    }

FORTRAN_INIT(mpi_init_, "mpi_init_", (int *ierr), (ierr))
FORTRAN_INIT(mpi_init_thread_, "mpi_init_thread_", (int *required, int *provided, int *ierr),
             (required, provided, ierr))
FORTRAN_INIT(mpi_init_f08_, "mpi_init_f08_", (int *ierr), (ierr))
FORTRAN_INIT(mpi_init_thread_f08_, "mpi_init_thread_f08_",
             (int *required, int *provided, int *ierr), (required, provided, ierr))
void mpi_init(int *ierr) __attribute__((alias("mpi_init_")));
void mpi_init__(int *ierr) __attribute__((alias("mpi_init_")));
void MPI_INIT(int *ierr) __attribute__((alias("mpi_init_")));
void mpi_init_thread(int *, int *, int *) __attribute__((alias("mpi_init_thread_")));
void mpi_init_thread__(int *, int *, int *) __attribute__((alias("mpi_init_thread_")));
void MPI_INIT_THREAD(int *, int *, int *) __attribute__((alias("mpi_init_thread_")));
