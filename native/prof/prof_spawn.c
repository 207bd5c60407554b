/* Processes started with MPI_Comm_spawn inherit the parent's ESMPROF_OUT. Each spawned job writes
 * its own profile beside the parent's, linked both ways: for a parent profile STEM.jsonl the
 * children are STEM.spawn1.jsonl, STEM.spawn2.jsonl, ... in the order their MPI_Init ran (rank 0
 * of each child job reserves the next free name with O_EXCL); a child's header names its parent,
 * the parent's header lists its children. Grandchildren nest (STEM.spawn1.spawn1.jsonl). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "esm_rank_state.h"
#include "prof_hooks.h"
#include "prof_state.h"

typedef struct {
    volatile int spawn_calls;
} spawn_state;
ESM_RANK_STATE(spawn_state, spawn)

void esm_spawned(esm_call *c)
{
    (void)c;
    __atomic_add_fetch(&spawn()->spawn_calls, 1, __ATOMIC_RELAXED);
}

/* STEM of a profile path: without its .jsonl suffix. */
static void stem_of(const char *path, char *stem, size_t size)
{
    size_t n = strlen(path);
    if (n > 6 && strcmp(path + n - 6, ".jsonl") == 0)
        n -= 6;
    snprintf(stem, size, "%.*s", (int)n, path);
}

/* Is `name` (a file name in the parent's directory) STEM.spawnN.jsonl for this base stem? */
static int is_child_name(const char *name, const char *base)
{
    size_t b = strlen(base);
    if (strncmp(name, base, b) != 0 || strncmp(name + b, ".spawn", 6) != 0)
        return 0;
    const char *p = name + b + 6;
    if (*p < '0' || *p > '9')
        return 0;
    while (*p >= '0' && *p <= '9')
        p++;
    return strcmp(p, ".jsonl") == 0;
}

typedef void (*child_fn)(const char *dir, const char *name, void *data);

static void each_child(const char *out_path, child_fn fn, void *data)
{
    char stem[4096], dirbuf[4096], basebuf[4096];
    stem_of(out_path, stem, sizeof stem);
    snprintf(dirbuf, sizeof dirbuf, "%s", stem);
    snprintf(basebuf, sizeof basebuf, "%s", stem);
    const char *dir = dirname(dirbuf), *base = basename(basebuf);
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));)
        if (is_child_name(e->d_name, base))
            fn(dir, e->d_name, data);
    closedir(d);
}

static void remove_child(const char *dir, const char *name, void *data)
{
    (void)data;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
}

/* At MPI_Init, after esm_output_path(): a spawned job takes a name of its own; a parent's rank 0
 * removes children's files left by an earlier run of the same profile. */
void esm_spawn_setup(MPI_Comm world)
{
    MPI_Comm parent = MPI_COMM_NULL;
#ifndef ESM_SIMULATED               /* SimGrid SMPI has no MPI_Comm_spawn */
    PMPI_Comm_get_parent(&parent);
#endif
    esm_run_info.spawned = parent != MPI_COMM_NULL;
    if (!esm_run_info.spawned) {
        if (esm_world_rank == 0)
            each_child(esm_run_info.out_path, remove_child, NULL);
        return;
    }
    snprintf(esm_run_info.parent_path, sizeof esm_run_info.parent_path, "%s",
             esm_run_info.out_path);
    if (esm_world_rank == 0) {
        char stem[4000];
        stem_of(esm_run_info.parent_path, stem, sizeof stem);
        for (int k = 1; k < 100000; k++) {
            snprintf(esm_run_info.out_path, sizeof esm_run_info.out_path, "%s.spawn%d.jsonl", stem,
                     k);
            int fd = open(esm_run_info.out_path, O_WRONLY | O_CREAT | O_EXCL, 0644);
            if (fd >= 0) {
                close(fd);
                break;
            }
            if (errno != EEXIST)
                break;
        }
    }
    PMPI_Bcast(esm_run_info.out_path, sizeof esm_run_info.out_path, MPI_CHAR, 0, world);
}

typedef struct names {
    char (*name)[256];
    int n, cap;
} names;

static void collect(const char *dir, const char *name, void *data)
{
    (void)dir;
    names *list = data;
    if (list->n == list->cap) {
        list->cap = list->cap ? 2 * list->cap : 8;
        list->name = realloc(list->name, sizeof *list->name * (size_t)list->cap);
    }
    snprintf(list->name[list->n++], sizeof *list->name, "%s", name);
}

static int by_number(const void *a, const void *b)
{
    const char *x = strrchr((const char *)a, 'n'), *y = strrchr((const char *)b, 'n');
    return atoi(x + 1) - atoi(y + 1);   /* ".spawnN.jsonl": the number after the last 'n' */
}

/* The header's "spawn" member: spawn calls on this rank's job, its parent, its children's files
 * (names relative to this profile's directory). */
void esm_spawn_header(void (*put_str)(void *, const char *), void (*put_raw)(void *, const char *),
                      void *b)
{
    char num[32];
    snprintf(num, sizeof num, "%d", spawn()->spawn_calls);
    put_raw(b, ",\"spawn\":{\"calls\":");
    put_raw(b, num);
    if (esm_run_info.spawned) {
        put_raw(b, ",\"parent\":");
        put_str(b, esm_run_info.parent_path);
    }
    /* A child job reserves its name right after its own MPI_Init returns, which can be after the
     * parent's spawn returned: wait (at most 10 s) until this rank's spawns all have their file. */
    names list = {0};
    for (int tries = 0;; tries++) {
        list.n = 0;
        each_child(esm_run_info.out_path, collect, &list);
        if (list.n >= spawn()->spawn_calls || tries == 1000)
            break;
        usleep(10000);
    }
    qsort(list.name, (size_t)list.n, sizeof *list.name, by_number);
    put_raw(b, ",\"children\":[");
    for (int i = 0; i < list.n; i++) {
        put_raw(b, i ? "," : "");
        put_str(b, list.name[i]);
    }
    put_raw(b, "]}");
    free(list.name);
}
