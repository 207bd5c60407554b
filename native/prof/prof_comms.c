/* Communicators: each one the program uses, registered on first sight with its size, its
 * ranks' world ranks (unless it is the world), how it was created and its name; an id for the
 * per-thread statistics (esm_commstat); a per-thread cache of the last one looked up,
 * invalidated when any communicator is freed. The profile's "comms" of a rank (esm_comms_json)
 * name each one's members by world rank: distinct communicators made by the same call are told
 * apart by their members. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof_handles.h"
#include "esm_rank_state.h"
#include "prof_json.h"
#include "prof_state.h"

typedef struct {
    pthread_mutex_t comms_lock;
    table comm_table; /* handle -> index into comms (in slot.rank) */
    esm_comm **comms;
    int ncomms, comms_cap;
    volatile unsigned comm_generation;
} comms_state;
ESM_RANK_STATE(comms_state, comms_of_rank, .comms_lock = PTHREAD_MUTEX_INITIALIZER)
typedef struct {
    uint64_t cached_key;
    unsigned cached_generation;
    esm_comm *cached;
} comms_thread_state;
ESM_THREAD_STATE(comms_thread_state, comms_of_thread)

/* The world rank of each rank of `group` (MPI_UNDEFINED: a rank of another job). */
static int *world_ranks(MPI_Group group, MPI_Group world, int size)
{
    int *ranks = esm_xcalloc((size_t)size + 1, sizeof(int)),
        *out = esm_xcalloc((size_t)size + 1, sizeof(int));
    for (int i = 0; i < size; i++)
        ranks[i] = i;
    PMPI_Group_translate_ranks(group, size, ranks, world, out);
    free(ranks);
    return out;
}

static esm_comm *comm_register(MPI_Comm comm, uint64_t key, int created_by)
{
    esm_comm *e = esm_xcalloc(1, sizeof *e);
    MPI_Group group, local, world;
    int inter = 0, result;
    PMPI_Comm_test_inter(comm, &inter);
    e->inter = inter;
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    if (inter) {
        PMPI_Comm_remote_size(comm, &e->size);
        PMPI_Comm_remote_group(comm, &group);
        PMPI_Comm_group(comm, &local);
        PMPI_Group_size(local, &e->nlocal);
        e->local = world_ranks(local, world, e->nlocal);
        PMPI_Group_free(&local);
    } else {
        PMPI_Comm_size(comm, &e->size);
        PMPI_Comm_group(comm, &group);
    }
    PMPI_Group_compare(group, world, &result);
    if (result != MPI_IDENT) {
        e->world = world_ranks(group, world, e->size);
        e->nworld = e->size;
    }
    PMPI_Group_free(&group);
    PMPI_Group_free(&world);
    if (created_by == ESM_CREATED_UNKNOWN) {
        PMPI_Comm_compare(comm, MPI_COMM_WORLD, &result);
        if (result == MPI_IDENT)
            created_by = ESM_CREATED_WORLD;
        PMPI_Comm_compare(comm, MPI_COMM_SELF, &result);
        if (result == MPI_IDENT)
            created_by = ESM_CREATED_SELF;
    }
    e->created_by = created_by;
    int len = 0;
    char name[MPI_MAX_OBJECT_NAME] = "";
    PMPI_Comm_get_name(comm, name, &len);
    snprintf(e->name, sizeof e->name, "%s", name);
    if (comms_of_rank()->ncomms == comms_of_rank()->comms_cap) {
        comms_of_rank()->comms_cap =
            comms_of_rank()->comms_cap ? 2 * comms_of_rank()->comms_cap : 16;
        esm_comm **grown = esm_xcalloc((size_t)comms_of_rank()->comms_cap, sizeof *grown);
        if (comms_of_rank()->comms)
            memcpy(grown, comms_of_rank()->comms, sizeof *grown * (size_t)comms_of_rank()->ncomms);
        comms_of_rank()->comms =
            grown;  /* the old array is retired, not freed: a snapshot may read it */
    }
    e->id = comms_of_rank()->ncomms;
    comms_of_rank()->comms[comms_of_rank()->ncomms++] = e;
    esm_table_insert(&comms_of_rank()->comm_table, key)->rank = e->id;
    return e;
}

static esm_comm *comm_lookup(MPI_Comm comm, int created_by)
{
    uint64_t key = esm_handle_key(&comm, sizeof comm);
    pthread_mutex_lock(&comms_of_rank()->comms_lock);
    slot *s = esm_table_find(&comms_of_rank()->comm_table, key);
    esm_comm *e = s ? comms_of_rank()->comms[s->rank] : comm_register(comm, key, created_by);
    pthread_mutex_unlock(&comms_of_rank()->comms_lock);
    return e;
}

esm_comm *esm_comm_of(MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL)
        return NULL;
    uint64_t key = esm_handle_key(&comm, sizeof comm);
    if (comms_of_thread()->cached && comms_of_thread()->cached_key == key &&
        comms_of_thread()->cached_generation == comms_of_rank()->comm_generation)
        return comms_of_thread()->cached;
    esm_comm *e = comm_lookup(comm, ESM_CREATED_UNKNOWN);
    comms_of_thread()->cached_key = key;
    comms_of_thread()->cached_generation = comms_of_rank()->comm_generation;
    return comms_of_thread()->cached = e;
}

void esm_comm_created(esm_call *c, MPI_Comm comm)
{
    if (comm != MPI_COMM_NULL)
        comm_lookup(comm, c->fid);
}

/* The handle is already freed: look it up, never register it (that would query MPI with it). */
void esm_comm_freed(esm_call *c, MPI_Comm comm)
{
    pthread_mutex_lock(&comms_of_rank()->comms_lock);
    slot *s = esm_table_find(&comms_of_rank()->comm_table, esm_handle_key(&comm, sizeof comm));
    if (s) {
        c->comm = comms_of_rank()->comms[s->rank];
        esm_table_remove(&comms_of_rank()->comm_table, s);
    }
    comms_of_rank()->comm_generation++;
    pthread_mutex_unlock(&comms_of_rank()->comms_lock);
}

void esm_comm_named(MPI_Comm comm, const char *name)
{
    esm_comm *e = esm_comm_of(comm);
    if (e)
        snprintf(e->name, sizeof e->name, "%s", name);
}

void esm_comm_register_world(void)
{
    esm_comm_of(MPI_COMM_WORLD);
    esm_comm_of(MPI_COMM_SELF);
}

int esm_comm_count(void)
{
    return comms_of_rank()->ncomms;
}
esm_comm *esm_comm_get(int id)
{
    return comms_of_rank()->comms[id];
}

/* Ranks as ranges of world ranks, "0-3,8" (MPI_UNDEFINED: "?"); `ranks` NULL: 0..n-1. */
static void put_ranks(esm_json *b, const int *ranks, int n)
{
    esm_json_put(b, "\"");
    for (int i = 0; i < n;) {
        int first = ranks ? ranks[i] : i, j = i + 1;
        while (j < n && first >= 0 && (ranks ? ranks[j] : j) == first + (j - i))
            j++;
        esm_json_put(b, i ? "," : "");
        if (first < 0)
            esm_json_put(b, "?");
        else if (j - i == 1)
            esm_json_put(b, "%d", first);
        else
            esm_json_put(b, "%d-%d", first, first + (j - i - 1));
        i = j;
    }
    esm_json_put(b, "\"");
}

static const char *created_by_name(int created_by)
{
    switch (created_by) {
    case ESM_CREATED_WORLD:
        return "MPI_COMM_WORLD";
    case ESM_CREATED_SELF:
        return "MPI_COMM_SELF";
    case ESM_CREATED_UNKNOWN:
        return "unknown";
    default:
        return esm_function_names[created_by];
    }
}

/* The rank's communicators (docs/profile-format.md): members, the remote group's of an
 * intercommunicator, and what the threads recorded on each. */
void esm_comms_json(esm_json *b, double ticks_per_second)
{
    esm_json_put(b, "\"comms\":[");
    for (int id = 0; id < comms_of_rank()->ncomms; id++) {
        esm_commstat m = {0};
        for (esm_thread *t = esm_threads; t; t = t->next) {
            if (id < t->comm_cap) {
                m.calls += t->comms[id].calls;
                m.ticks += t->comms[id].ticks;
                m.bytes += t->comms[id].bytes;
            }
        }
        const esm_comm *c = comms_of_rank()->comms[id];
        esm_json_put(b, "%s{\"id\":%d,\"size\":%d,\"name\":", id ? "," : "", id, c->size);
        esm_json_string(b, c->name);
        esm_json_put(b, ",\"created_by\":\"%s\",\"members\":", created_by_name(c->created_by));
        if (c->inter) {
            put_ranks(b, c->local, c->nlocal);
            esm_json_put(b, ",\"remote_members\":");
        }
        put_ranks(b, c->world, c->size);
        esm_json_put(b, ",\"calls\":%llu,\"time\":%.9g,\"bytes\":%llu}",
                     (unsigned long long)m.calls, (double)m.ticks / ticks_per_second,
                     (unsigned long long)m.bytes);
    }
    esm_json_put(b, "]");
}
