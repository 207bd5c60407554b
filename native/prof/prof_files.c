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
#include "prof_state.h"

#define FD_CACHE 4096
#define MAX_FILES 4096              /* past that, one entry "(other files)" takes the rest */

typedef struct file_entry {
    char *name;
    esm_file_stat stat[4];
} file_entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int fd_file[FD_CACHE];      /* 0 unknown, -1 not a disk file, k + 1 file k */
static file_entry *files;
static int nfiles, cap;

/* Grow the table without freeing the old one: the signal helper may be reading it (retired
 * arrays add up to less than the final one). */
static void grow(void)
{
    if (nfiles < cap)
        return;
    int bigger = cap ? 2 * cap : 64;
    file_entry *grown = calloc((size_t)bigger, sizeof *grown);
    if (!grown)
        abort();
    if (files)
        memcpy(grown, files, sizeof *files * (size_t)nfiles);
    files = grown;
    cap = bigger;
}

static int file_id_other(void);

static int file_id(const char *name)
{
    for (int i = 0; i < nfiles; i++)        /* linear: once per fd opened, not per call */
        if (strcmp(files[i].name, name) == 0)
            return i;
    if (nfiles == MAX_FILES)
        return file_id_other();
    grow();
    files[nfiles] = (file_entry){strdup(name), {{0}}};
    __atomic_store_n(&nfiles, nfiles + 1, __ATOMIC_RELEASE);
    return nfiles - 1;
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
    pthread_mutex_lock(&lock);
    int id = file_id(path);
    pthread_mutex_unlock(&lock);
    return id;
}

static int file_id_other(void)
{
    static int other = -1;
    if (other < 0) {
        grow();
        files[nfiles] = (file_entry){strdup("(other files)"), {{0}}};
        other = nfiles;
        __atomic_store_n(&nfiles, nfiles + 1, __ATOMIC_RELEASE);
    }
    return other;
}

int esm_file_of_fd(int fd)
{
    if (fd < 0)
        return -1;
    if (fd >= FD_CACHE)
        return lookup(fd);
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
        __atomic_store_n(&fd_file[fd], 0, __ATOMIC_RELAXED);
}

void esm_file_record(int file, int layer, int kind, uint64_t bytes, uint64_t ticks)
{
    pthread_mutex_lock(&lock);
    esm_file_stat *s = &files[file].stat[layer * 2 + kind];
    s->calls++;
    s->bytes += bytes;
    s->ticks += ticks;
    pthread_mutex_unlock(&lock);
}

int esm_file_count(void)
{
    return nfiles;
}
const char *esm_file_name(int file)
{
    return files[file].name;
}
const esm_file_stat *esm_file_stats(int file)
{
    return files[file].stat;
}
