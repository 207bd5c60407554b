/* Binding to the MPI library the program actually loaded, and what it exports that the
 * profiler does not wrap.
 *
 * The wrappers call PMPI_X through the PLT, bound lazily on first call in the global scope. A
 * program linked with MPI has libmpi there. A program that loads MPI late and locally (Python
 * imports mpi4py's extension with RTLD_LOCAL, a plugin opened with dlopen) does not: its libmpi
 * is only in the extension's own scope, and the first PMPI_ lookup fails ("symbol lookup error:
 * undefined symbol: PMPI_Init_thread"). So the first MPI_Init(_thread) finds the loaded object
 * that defines PMPI_Init and promotes it to the global scope (dlopen RTLD_NOLOAD|RTLD_GLOBAL):
 * every later PMPI_ lookup then binds once through the PLT as before, and a wrapped call costs
 * what it did. Open MPI's predefined handles (library objects, esm_weak.h) are looked up here. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "esm_rank_state.h"
#include "prof_bind.h"
#include "prof_state.h"

#ifdef OPEN_MPI
esm_ompi_objects esm_ompi;
#endif
esm_binding esm_mpi_binding ESM_RANK_INVARIANT; /* the process's MPI library: every rank's */

static int find_pmpi(struct dl_phdr_info *info, size_t size, void *data)
{
    char *path = data;
    if (!info->dlpi_name || !info->dlpi_name[0])
        return 0;
    void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return 0;
    void *sym = dlsym(h, "PMPI_Init");
    Dl_info where;
    int found = sym && dladdr(sym, &where) && where.dli_fname;
    if (found)
        snprintf(path, 4096, "%s", where.dli_fname);
    dlclose(h);
    return found;
}

#ifdef OPEN_MPI
static void *ompi_object(const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    if (!p) {
        fprintf(stderr,
                "esmprof: the MPI library has no %s: the profiler was built for Open MPI, "
                "the program runs another MPI (esmperf profile --stack picks the build)\n",
                name);
        abort();
    }
    return p;
}
#endif

void esm_bind_mpi(void)
{
    if (esm_mpi_binding.bound)
        return;
    void *init = dlsym(RTLD_DEFAULT, "PMPI_Init");
    if (!init) {
        char path[4096] = "";
        dl_iterate_phdr(find_pmpi, path);
        void *h = path[0] ? dlopen(path, RTLD_LAZY | RTLD_NOLOAD | RTLD_GLOBAL) : NULL;
        init = h ? dlsym(RTLD_DEFAULT, "PMPI_Init") : NULL;
        if (!init) {
            fprintf(stderr,
                    "esmprof: MPI_Init was called but no loaded library defines PMPI_Init "
                    "(a statically linked MPI?): link the program with the shared MPI library\n");
            abort();
        }
        esm_mpi_binding.promoted = 1;
    }
    Dl_info where;
    if (dladdr(init, &where) && where.dli_fname)
        snprintf(esm_mpi_binding.library, sizeof esm_mpi_binding.library, "%s", where.dli_fname);
#ifndef OPEN_MPI
    if (dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world")) {
        fprintf(stderr,
                "esmprof: the program runs Open MPI (%s) but the profiler was built for "
                "the MPICH ABI: profile with the Open MPI stack (esmperf profile --stack), "
                "or make the program load the MPI its launcher belongs to (mpi4py: "
                "MPI4PY_LIBMPI)\n",
                esm_mpi_binding.library);
        abort();
    }
#else
    esm_ompi = (esm_ompi_objects){
        ompi_object("ompi_mpi_comm_world"),    ompi_object("ompi_mpi_comm_self"),
        ompi_object("ompi_mpi_comm_null"),     ompi_object("ompi_mpi_byte"),
        ompi_object("ompi_mpi_datatype_null"), ompi_object("ompi_request_null"),
        ompi_object("ompi_message_null"),      ompi_object("ompi_message_no_proc"),
        ompi_object("ompi_mpi_win_null"),      ompi_object("ompi_mpi_char"),
        ompi_object("ompi_mpi_int"),           ompi_object("ompi_mpi_long_long_int"),
        ompi_object("ompi_mpi_op_min"),        ompi_object("ompi_mpi_op_sum"),
        ompi_object("ompi_mpi_info_null")};
#endif
    esm_mpi_binding.bound = 1;
}

/* ------------------------------------------------------------ exports not wrapped */

static const char *const hand_written[] = {"MPI_Init", "MPI_Init_thread", "MPI_Finalize",
                                           "MPI_Pcontrol", NULL};

static int wrapped(const char *name)
{
    for (int i = 0; i < ESM_NFUNC; i++)
        if (strcmp(esm_function_names[i], name) == 0)
            return 1;
    for (const char *const *h = hand_written; *h; h++)
        if (strcmp(*h, name) == 0)
            return 1;
    return 0;
}

/* Calls that move data, synchronise or complete requests: missing one of them changes the
 * profile's figures. The rest (datatype, info, attribute, group, query calls) are local. */
int esm_communicates(const char *name)
{
    static const char *const prefixes[] = {"MPI_Send",
                                           "MPI_Bsend",
                                           "MPI_Ssend",
                                           "MPI_Rsend",
                                           "MPI_Recv",
                                           "MPI_Isend",
                                           "MPI_Ibsend",
                                           "MPI_Issend",
                                           "MPI_Irsend",
                                           "MPI_Irecv",
                                           "MPI_Sendrecv",
                                           "MPI_Isendrecv",
                                           "MPI_Start",
                                           "MPI_Psend",
                                           "MPI_Precv",
                                           "MPI_Pready",
                                           "MPI_Parrived",
                                           "MPI_Probe",
                                           "MPI_Iprobe",
                                           "MPI_Mprobe",
                                           "MPI_Improbe",
                                           "MPI_Mrecv",
                                           "MPI_Imrecv",
                                           "MPI_Wait",
                                           "MPI_Test",
                                           "MPI_Barrier",
                                           "MPI_Ibarrier",
                                           "MPI_Bcast",
                                           "MPI_Ibcast",
                                           "MPI_Reduce",
                                           "MPI_Ireduce",
                                           "MPI_Allreduce",
                                           "MPI_Iallreduce",
                                           "MPI_Gather",
                                           "MPI_Igather",
                                           "MPI_Allgather",
                                           "MPI_Iallgather",
                                           "MPI_Scatter",
                                           "MPI_Iscatter",
                                           "MPI_Alltoall",
                                           "MPI_Ialltoall",
                                           "MPI_Scan",
                                           "MPI_Iscan",
                                           "MPI_Exscan",
                                           "MPI_Iexscan",
                                           "MPI_Neighbor_",
                                           "MPI_Ineighbor_",
                                           "MPI_Put",
                                           "MPI_Rput",
                                           "MPI_Get_accumulate",
                                           "MPI_Rget",
                                           "MPI_Accumulate",
                                           "MPI_Raccumulate",
                                           "MPI_Fetch_and_op",
                                           "MPI_Compare_and_swap",
                                           "MPI_File_read",
                                           "MPI_File_write",
                                           "MPI_File_iread",
                                           "MPI_File_iwrite",
                                           "MPI_Win_fence",
                                           "MPI_Win_lock",
                                           "MPI_Win_unlock",
                                           "MPI_Win_flush",
                                           "MPI_Win_post",
                                           "MPI_Win_start",
                                           "MPI_Win_complete",
                                           "MPI_Win_wait",
                                           "MPI_Win_sync",
                                           "MPI_Comm_spawn",
                                           "MPI_Sendrecv_replace",
                                           NULL};
    static const char *const local[] = {"MPI_Reduce_local", "MPI_Reduce_local_c",
                                        "MPI_Test_cancelled", "MPI_Status_set_cancelled", NULL};
    for (const char *const *l = local; *l; l++)
        if (strcmp(*l, name) == 0)
            return 0;
    if (strcmp(name, "MPI_Get") == 0 || strcmp(name, "MPI_Get_c") == 0)
        return 1;
    for (const char *const *p = prefixes; *p; p++)
        if (strncmp(name, *p, strlen(*p)) == 0)
            return 1;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The C MPI calls the library file exports (its PMPI_ functions), read from its dynamic symbol
 * table on disk, less those the profiler wraps. */
void esm_scan_unwrapped(void)
{
    esm_binding *b = &esm_mpi_binding;
    int fd = b->library[0] ? open(b->library, O_RDONLY) : -1;
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
        if (fd >= 0)
            close(fd);
        return;
    }
    const unsigned char *img = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (img == MAP_FAILED)
        return;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    size_t size = (size_t)st.st_size;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > size) {
        munmap((void *)img, size);
        return;
    }
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Sym *sym = (const Elf64_Sym *)(img + sh[i].sh_offset);
        const char *strtab = (const char *)(img + sh[sh[i].sh_link].sh_offset);
        size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
        for (size_t k = 0; k < n; k++) {
            const char *name = strtab + sym[k].st_name;
            if (sym[k].st_shndx == SHN_UNDEF || ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC ||
                strncmp(name, "PMPI_", 5) != 0)
                continue;
            char call[128];
            snprintf(call, sizeof call, "%s", name + 1);
            b->exported++;
            if (wrapped(call))
                continue;
            int dup = 0;
            for (int j = 0; j < b->nunwrapped && !dup; j++)
                dup = strcmp(b->unwrapped[j], call) == 0;
            if (dup)
                continue;
            if (b->nunwrapped == b->cap) {
                b->cap = b->cap ? 2 * b->cap : 256;
                b->unwrapped = realloc(b->unwrapped, sizeof(char *) * (size_t)b->cap);
            }
            b->unwrapped[b->nunwrapped++] = strdup(call);
        }
    }
    munmap((void *)img, size);
    qsort(b->unwrapped, (size_t)b->nunwrapped, sizeof(char *), by_name);
}

/* Rank 0 says at start-up which exported calls that communicate are not wrapped. */
void esm_report_unwrapped(void)
{
    const esm_binding *b = &esm_mpi_binding;
    int communicating = 0;
    for (int i = 0; i < b->nunwrapped; i++)
        communicating += esm_communicates(b->unwrapped[i]);
    if (esm_world_rank != 0 || !communicating)
        return;
    fprintf(stderr,
            "esmprof: %s exports %d MPI calls that communicate and are not wrapped "
            "(not counted; listed in the profile header):",
            b->library, communicating);
    for (int i = 0; i < b->nunwrapped; i++)
        if (esm_communicates(b->unwrapped[i]))
            fprintf(stderr, " %s", b->unwrapped[i]);
    fprintf(stderr, "\n");
}
