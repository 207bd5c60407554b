/* I/O per file. An fd's file is found once, at its first counted call (fstat: a regular file or a
 * block device; readlink of /proc/self/fd/N: its path), and cached until the fd is closed. Files
 * are keyed by path; each keeps calls, bytes and time of POSIX and stdio reads and writes. The
 * table is shared under a lock: I/O calls are system calls, the lock is not what they cost. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prof_files.h"
#include "esm_rank_state.h"
#include "prof_state.h"

#define FD_CACHE 4096
#define MAX_FILES 4096              /* past that, one entry "(other files)" takes the rest */

typedef struct file_entry {
    char *name;
    esm_file_stat stat[4];
} file_entry;

typedef struct {
    pthread_mutex_t lock;
    int *
        fd_file; /* FD_CACHE, made at the first call: 0 unknown, -1 not a disk file, k + 1 file k */
    file_entry *files;
    int nfiles, cap;
    int other; /* the entry "(other files)" + 1, 0 before it is needed */
} files_state;
ESM_RANK_STATE(files_state, files_of_rank, .lock = PTHREAD_MUTEX_INITIALIZER)

/* Grow the table without freeing the old one: the signal helper may be reading it (retired
 * arrays add up to less than the final one). */
static void grow(void)
{
    if (files_of_rank()->nfiles < files_of_rank()->cap)
        return;
    int bigger = files_of_rank()->cap ? 2 * files_of_rank()->cap : 64;
    file_entry *grown = calloc((size_t)bigger, sizeof *grown);
    if (!grown)
        abort();
    if (files_of_rank()->files)
        memcpy(grown, files_of_rank()->files,
               sizeof *files_of_rank()->files * (size_t)files_of_rank()->nfiles);
    files_of_rank()->files = grown;
    files_of_rank()->cap = bigger;
}

static int file_id_other(void);

static int file_id(const char *name)
{
    for (int i = 0; i < files_of_rank()->nfiles; i++) /* linear: once per fd opened, not per call */
        if (strcmp(files_of_rank()->files[i].name, name) == 0)
            return i;
    if (files_of_rank()->nfiles == MAX_FILES)
        return file_id_other();
    grow();
    files_of_rank()->files[files_of_rank()->nfiles] = (file_entry){strdup(name), {{0}}};
    __atomic_store_n(&files_of_rank()->nfiles, files_of_rank()->nfiles + 1, __ATOMIC_RELEASE);
    return files_of_rank()->nfiles - 1;
}

static int lookup(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)))
        return -1;
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        snprintf(path, sizeof path, "(fd %d)", fd);
    else
        path[n] = 0;
    pthread_mutex_lock(&files_of_rank()->lock);
    int id = file_id(path);
    pthread_mutex_unlock(&files_of_rank()->lock);
    return id;
}

static int file_id_other(void)
{
    files_state *f = files_of_rank();
    if (!f->other) {
        grow();
        f->files[f->nfiles] = (file_entry){strdup("(other files)"), {{0}}};
        f->other = f->nfiles + 1;
        __atomic_store_n(&f->nfiles, f->nfiles + 1, __ATOMIC_RELEASE);
    }
    return f->other - 1;
}

/* The fd cache, made by the first call of any thread. */
static int *fd_cache(files_state *f)
{
    int *cache = __atomic_load_n(&f->fd_file, __ATOMIC_ACQUIRE);
    if (!cache) {
        int *made = esm_xcalloc(FD_CACHE, sizeof *made);
        if (__atomic_compare_exchange_n(&f->fd_file, &cache, made, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            cache = made;
        else
            free(made);
    }
    return cache;
}

int esm_file_of_fd(int fd)
{
    if (fd < 0)
        return -1;
    if (fd >= FD_CACHE)
        return lookup(fd);
    int *fd_file = fd_cache(files_of_rank());
    int cached = __atomic_load_n(&fd_file[fd], __ATOMIC_RELAXED);
    if (cached)
        return cached > 0 ? cached - 1 : -1;
    int id = lookup(fd);
    __atomic_store_n(&fd_file[fd], id >= 0 ? id + 1 : -1, __ATOMIC_RELAXED);
    return id;
}

void esm_file_forget_fd(int fd)
{
    if (fd >= 0 && fd < FD_CACHE)
        __atomic_store_n(&fd_cache(files_of_rank())[fd], 0, __ATOMIC_RELAXED);
}

void esm_file_record(int file, int layer, int kind, uint64_t bytes, uint64_t ticks)
{
    pthread_mutex_lock(&files_of_rank()->lock);
    esm_file_stat *s = &files_of_rank()->files[file].stat[layer * 2 + kind];
    s->calls++;
    s->bytes += bytes;
    s->ticks += ticks;
    pthread_mutex_unlock(&files_of_rank()->lock);
}

int esm_file_count(void)
{
    return files_of_rank()->nfiles;
}
const char *esm_file_name(int file)
{
    return files_of_rank()->files[file].name;
}
const esm_file_stat *esm_file_stats(int file)
{
    return files_of_rank()->files[file].stat;
}
