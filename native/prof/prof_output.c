/* The profile file (docs/profile-format.md): JSON Lines, one line per rank written by that rank at
 * its offset (exclusive prefix sum of line lengths), header by rank 0, trailer by the last rank. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prof_bind.h"
#include "prof_files.h"
#include "prof_json.h"
#include "prof_hooks.h"
#include "prof_region.h"
#include "prof_state.h"
#include "prof_trace.h"

#define PROFILE_VERSION 1
#define DEFAULT_OUT "esmperf-profile.jsonl"

extern char **environ;

static void put_str_cb(void *b, const char *s)
{
    esm_json_string(b, s);
}
static void put_raw_cb(void *b, const char *s)
{
    esm_json_put(b, "%s", s);
}

static double seconds(uint64_t ticks)
{
    return (double)ticks / esm_ticks_per_second;
}

/* ------------------------------------------------------------ header */

static void put_command(esm_json *b)
{
    char buf[65536];
    FILE *f = fopen("/proc/self/cmdline", "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    esm_json_put(b, "[");
    for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
        esm_json_put(b, i ? "," : "");
        esm_json_string(b, buf + i);
    }
    esm_json_put(b, "]");
}

/* Environment variables that tune the MPI library or the profiler; launcher bookkeeping
 * (Open MPI's orte/ess/pmix variables, ranks, URIs) is not a knob. */
static int is_knob(const char *var)
{
    static const char *const prefixes[] = {"OMPI_MCA_", "PRTE_MCA_", "MPIR_CVAR_", "UCX_",   "FI_",
                                           "I_MPI_",    "PSP_",      "ESMPROF_",   "HYDRA_", NULL};
    static const char *const bookkeeping[] = {
        "orte_", "ess", "pmix", "initial_wdir", "shmem_RUNTIME_QUERY", "precondition", NULL};
    for (const char *const *p = prefixes; *p; p++) {
        if (strncmp(var, *p, strlen(*p)) != 0)
            continue;
        for (const char *const *x = bookkeeping; *x; x++)
            if (strstr(var + strlen(*p), *x) == var + strlen(*p))
                return 0;
        return 1;
    }
    return 0;
}

static void put_knobs(esm_json *b)
{
    int first = 1;
    esm_json_put(b, "{");
    for (char **e = environ; *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq || !is_knob(*e))
            continue;
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)(eq - *e), *e);
        esm_json_put(b, first ? "" : ",");
        esm_json_string(b, key);
        esm_json_put(b, ":");
        esm_json_string(b, eq + 1);
        first = 0;
    }
    esm_json_put(b, "}");
}

static const char *thread_level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE:
        return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
        return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
        return "MPI_THREAD_SERIALIZED";
    default:
        return "MPI_THREAD_MULTIPLE";
    }
}

/* The MPI library the profiler bound to, and the calls it exports that are not wrapped. */
static void put_binding(esm_json *b)
{
    const esm_binding *m = &esm_mpi_binding;
    esm_json_put(b, ",\"mpi_binding\":{\"library\":");
    esm_json_string(b, m->library);
    esm_json_put(b, ",\"loaded_locally\":%s,\"exported\":%d,\"wrapped\":%d",
                 m->promoted ? "true" : "false", m->exported,
                 ESM_NFUNC + 4); /* + the hand-written Init, Init_thread, Finalize, Pcontrol */
    for (int pass = 0; pass < 2; pass++) {
        esm_json_put(b, pass ? ",\"unwrapped_local\":[" : ",\"unwrapped_communicating\":[");
        for (int i = 0, first = 1; i < m->nunwrapped; i++) {
            if (esm_communicates(m->unwrapped[i]) == pass)
                continue;
            esm_json_put(b, first ? "" : ",");
            esm_json_string(b, m->unwrapped[i]);
            first = 0;
        }
        esm_json_put(b, "]");
    }
    esm_json_put(b, "}");
}

static void put_header(esm_json *b, const char *state)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    PMPI_Get_library_version(version, &len);
    const esm_fortran_check *fc = &esm_run_info.fortran;
    esm_json_put(b,
                 "{\"format\":\"esmperf-profile\",\"version\":%d,\"state\":\"%s\",\"ranks\":%d,"
                 "\"start_epoch\":%.6f,\"command\":",
                 PROFILE_VERSION, state, esm_world_size, esm_run_info.init_epoch);
    put_command(b);
    esm_json_put(b, ",\"mpi_library\":");
    esm_json_string(b, version);
#ifdef OPEN_MPI
    esm_json_put(b, ",\"abi\":\"openmpi\"");
#else
    esm_json_put(b, ",\"abi\":\"mpich\"");
#endif
    esm_json_put(
        b,
        ",\"profiler\":{\"version\":\"%s\",\"bin_width\":%.9g,\"max_bins\":%d,\"hist_buckets\":%d}",
        ESMPROF_VERSION, seconds(esm_base_bin_ticks), ESM_MAX_BINS, ESM_HIST_BUCKETS);
    esm_json_put(b, ",\"knobs\":");
    put_knobs(b);
    esm_json_put(
        b,
        ",\"fortran\":{\"bindings_loaded\":%s,\"wrappers_reached\":%s,\"library_calls_c_layer\":%s",
        fc->bindings_loaded ? "true" : "false", fc->wrappers_reached ? "true" : "false",
        fc->library_calls_c_layer ? "true" : "false");
    if (fc->bindings_loaded && !fc->wrappers_reached)
        esm_json_put(
            b,
            ",\"warning\":\"the MPI library's Fortran bindings do not reach the profiler's Fortran "
            "wrappers (static linking or direct binding?): Fortran MPI calls are not counted\"");
    esm_json_put(b, "},\"thread_level\":\"%s\"", thread_level_name(esm_run_info.thread_level));
    esm_spawn_header(put_str_cb, put_raw_cb, b);
    put_binding(b);
    esm_json_put(b, "}\n");
}

/* ------------------------------------------------------------ rank line */

static void put_calls(esm_json *b, uint64_t *total_calls, uint64_t *mpi_ticks)
{
    int first = 1;
    esm_json_put(b, "\"calls\":{");
    for (int fid = 0; fid < ESM_NFUNC; fid++) {
        esm_fstat m = {0};
        for (esm_thread *t = esm_threads; t; t = t->next) {
            const esm_fstat *f = &t->f[fid];
            if (f->calls && (m.calls == 0 || f->tmin < m.tmin))
                m.tmin = f->tmin;
            m.tmax = f->tmax > m.tmax ? f->tmax : m.tmax;
            m.calls += f->calls;
            m.calls_fortran += f->calls_fortran;
            m.ticks += f->ticks;
            m.sent += f->sent;
            m.recv += f->recv;
            m.recv_wait_calls += f->recv_wait_calls;
            m.recv_wait_ticks += f->recv_wait_ticks;
            for (int k = 0; k < ESM_HIST_BUCKETS; k++)
                m.hist[k] += f->hist[k];
        }
        if (!m.calls && !m.recv)
            continue;
        *total_calls += m.calls;
        *mpi_ticks += m.ticks;
        esm_json_put(b,
                     "%s\"%s\":{\"calls\":%llu,\"time\":%.9g,\"time_min\":%.9g,\"time_max\":%.9g,"
                     "\"sent\":%llu,\"recv\":%llu,\"hist\":[",
                     first ? "" : ",", esm_function_names[fid], (unsigned long long)m.calls,
                     seconds(m.ticks), seconds(m.tmin), seconds(m.tmax), (unsigned long long)m.sent,
                     (unsigned long long)m.recv);
        int hfirst = 1;
        for (int k = 0; k < ESM_HIST_BUCKETS; k++) {
            if (m.hist[k]) {
                esm_json_put(b, "%s[%d,%llu]", hfirst ? "" : ",", k, (unsigned long long)m.hist[k]);
                hfirst = 0;
            }
        }
        esm_json_put(b, "],\"lang\":{\"c\":%llu,\"fortran\":%llu}",
                     (unsigned long long)(m.calls - m.calls_fortran),
                     (unsigned long long)m.calls_fortran);
        if (m.recv_wait_calls)
            esm_json_put(b, ",\"recv_wait\":[%llu,%.9g]", (unsigned long long)m.recv_wait_calls,
                         seconds(m.recv_wait_ticks));
        esm_json_put(b, "}");
        first = 0;
    }
    esm_json_put(b, "}");
}

static void put_peers(esm_json *b)
{
    esm_peer *all = calloc((size_t)esm_world_size, sizeof *all);
    for (esm_thread *t = esm_threads; t; t = t->next) {
        for (size_t i = 0; i < t->peer_cap; i++) {
            const esm_peer *p = &t->peers[i];
            if (p->rank < 0 || p->rank >= esm_world_size)
                continue;
            esm_peer *m = &all[p->rank];
            m->sent += p->sent;
            m->sent_msgs += p->sent_msgs;
            m->recv += p->recv;
            m->recv_msgs += p->recv_msgs;
        }
    }
    for (int dir = 0; dir < 2; dir++) {
        int first = 1;
        esm_json_put(b, dir ? ",\"recv\":{" : "\"peers\":{\"sent\":{");
        for (int r = 0; r < esm_world_size; r++) {
            uint64_t bytes = dir ? all[r].recv : all[r].sent,
                     msgs = dir ? all[r].recv_msgs : all[r].sent_msgs;
            if (msgs) {
                esm_json_put(b, "%s\"%d\":[%llu,%llu]", first ? "" : ",", r,
                             (unsigned long long)bytes, (unsigned long long)msgs);
                first = 0;
            }
        }
        esm_json_put(b, "}");
    }
    esm_json_put(b, "}");
    free(all);
}

static void put_io(esm_json *b)
{
    esm_iostat m[2] = {{0}};
    for (esm_thread *t = esm_threads; t; t = t->next) {
        for (int k = 0; k < 2; k++) {
            m[k].calls += t->io[k].calls;
            m[k].bytes += t->io[k].bytes;
            m[k].ticks += t->io[k].ticks;
        }
    }
    esm_json_put(b,
                 "\"io\":{\"write\":{\"calls\":%llu,\"bytes\":%llu,\"time\":%.9g},"
                 "\"read\":{\"calls\":%llu,\"bytes\":%llu,\"time\":%.9g}}",
                 (unsigned long long)m[0].calls, (unsigned long long)m[0].bytes,
                 seconds(m[0].ticks), (unsigned long long)m[1].calls,
                 (unsigned long long)m[1].bytes, seconds(m[1].ticks));
}

/* Files with I/O: POSIX and stdio, writes and reads: [calls, bytes, seconds] each. */
static void put_files(esm_json *b)
{
    static const char *const names[] = {"write", "read", "stdio_write", "stdio_read"};
    esm_json_put(b, "\"files\":[");
    for (int f = 0, first = 1; f < esm_file_count(); f++) {
        const esm_file_stat *s = esm_file_stats(f);
        if (!s[0].calls && !s[1].calls && !s[2].calls && !s[3].calls)
            continue;
        esm_json_put(b, first ? "{\"name\":" : ",{\"name\":");
        esm_json_string(b, esm_file_name(f));
        for (int k = 0; k < 4; k++)
            if (s[k].calls)
                esm_json_put(b, ",\"%s\":[%llu,%llu,%.9g]", names[k],
                             (unsigned long long)s[k].calls, (unsigned long long)s[k].bytes,
                             seconds(s[k].ticks));
        esm_json_put(b, "}");
        first = 0;
    }
    esm_json_put(b, "]");
}

static void put_bins(esm_json *b, uint64_t end)
{
    uint64_t width = esm_base_bin_ticks;
    for (esm_thread *t = esm_threads; t; t = t->next)
        width = t->bin_ticks > width ? t->bin_ticks : width;
    esm_bin *m = calloc(ESM_MAX_BINS, sizeof *m);
    for (esm_thread *t = esm_threads; t; t = t->next) {
        uint64_t factor = width / t->bin_ticks;
        for (int i = 0; i < ESM_MAX_BINS; i++) {
            esm_bin *to = &m[(uint64_t)i / factor];
            const esm_bin *from = &t->bins[i];
            to->mpi_ticks += from->mpi_ticks;
            to->calls += from->calls;
            to->sent += from->sent;
            to->recv += from->recv;
            to->io_write += from->io_write;
            to->io_read += from->io_read;
            to->io_ticks += from->io_ticks;
        }
    }
    uint64_t span = end - esm_t0;
    int n = (int)(span / width) + 1;
    n = n < ESM_MAX_BINS ? n : ESM_MAX_BINS;
    esm_json_put(b, "\"bins\":{\"width\":%.9g", seconds(width));
    static const char *names[] = {"mpi_time", "calls",   "sent",   "recv",
                                  "io_write", "io_read", "io_time"};
    for (int field = 0; field < 7; field++) {
        esm_json_put(b, ",\"%s\":[", names[field]);
        for (int i = 0; i < n; i++) {
            const uint64_t *v = &m[i].mpi_ticks; /* fields in the order of names[] */
            if (field == 0 || field == 6)
                esm_json_put(b, "%s%.6g", i ? "," : "", seconds(v[field]));
            else
                esm_json_put(b, "%s%llu", i ? "," : "", (unsigned long long)v[field]);
        }
        esm_json_put(b, "]");
    }
    esm_json_put(b, "}");
    free(m);
}

static const char *in_call_name(int fid)
{
    return fid == ESM_FN_FINALIZE ? "MPI_Finalize" : esm_function_names[fid];
}

/* The calls in progress at `end` (a partial line), one per thread in a call: read once, as the
 * threads may leave them meanwhile. Their time so far counts as MPI time. */
typedef struct in_calls {
    int n, fid[64];
    uint64_t t0[64], ticks;
} in_calls;

static void read_in_calls(in_calls *in, uint64_t end)
{
    in->n = 0;
    in->ticks = 0;
    for (esm_thread *t = esm_threads; t && in->n < 64; t = t->next) {
        int fid1 = t->in_call.fid1;
        uint64_t t0 = t->in_call.t0;
        if (fid1 <= 0 || fid1 > ESM_FN_FINALIZE + 1 || fid1 == ESM_FN_SELF + 1 || t0 > end)
            continue;
        in->fid[in->n] = fid1 - 1;
        in->t0[in->n++] = t0;
        in->ticks += end - t0;
    }
}

/* function, start (seconds after MPI_Init), time so far */
static void put_in_calls(esm_json *b, const in_calls *in, uint64_t end)
{
    esm_json_put(b, ",\"in_call\":[");
    for (int i = 0; i < in->n; i++)
        esm_json_put(b, "%s{\"function\":\"%s\",\"start\":%.9g,\"seconds\":%.9g}", i ? "," : "",
                     in_call_name(in->fid[i]), seconds(in->t0[i] - esm_t0),
                     seconds(end - in->t0[i]));
    esm_json_put(b, "]");
}

static void put_rank(esm_json *b, const char *partial, uint64_t end)
{
    char host[256] = "";
    uint64_t calls = 0, mpi_ticks = 0;
#ifdef ESM_SIMULATED
    int len = 0;
    PMPI_Get_processor_name(host, &len); /* the simulated host */
#else
    gethostname(host, sizeof host - 1);
#endif
    esm_json_put(b, "{\"rank\":%d,", esm_world_rank);
    if (partial)
        esm_json_put(b, "\"partial\":\"%s\",", partial);
    esm_json_put(b, "\"host\":");
    esm_json_string(b, host);
    esm_json_put(b, ",\"pid\":%d,\"command\":", (int)getpid());
    put_command(b); /* MPMD: each rank's own program and arguments */
    esm_json_put(b, ",\"appnum\":%d,\"init_epoch\":%.6f,\"wall\":%.9g,", esm_run_info.appnum,
                 esm_run_info.init_epoch, seconds(end - esm_run_info.init_ticks));
    put_calls(b, &calls, &mpi_ticks);
    in_calls in = {0};
    if (partial)
        read_in_calls(&in, end);
    esm_json_put(b, ",\"mpi_time\":%.9g,", seconds(mpi_ticks + in.ticks));
    put_peers(b);
    esm_json_put(b, ",");
    esm_comms_json(b, esm_ticks_per_second);
    esm_json_put(b, ",");
    put_io(b);
    esm_json_put(b, ",");
    put_files(b);
    esm_json_put(b, ",");
    esm_region_json(put_raw_cb, b, end);
    esm_json_put(b, ",");
    put_bins(b, end);
    if (partial)
        put_in_calls(b, &in, end);
    char *sites = esm_callsites_json();
    if (sites)
        esm_json_put(b, ",\"callsites\":%s", sites);
    free(sites);
    esm_json_put(b, ",\"overhead\":{\"ns_per_call\":%.3f,\"calls\":%llu,\"seconds\":%.9g}}\n",
                 esm_run_info.ns_per_call, (unsigned long long)calls,
                 1e-9 * esm_run_info.ns_per_call * (double)calls);
}

/* This rank's line as recorded so far, marked partial (why: a signal's name, "snapshot" or
 * "finalize"); the caller frees it. Makes no MPI call (the signal helper thread uses it). */
char *esm_rank_line(const char *partial, size_t *len)
{
    esm_json b = {0};
    put_rank(&b, partial, esm_now());
    *len = b.len;
    return b.p;
}

/* ------------------------------------------------------------ files */

void esm_output_path(void)
{
    const char *out = getenv("ESMPROF_OUT");
    if (!out || !*out)
        out = DEFAULT_OUT;
    char cwd[2048] = ".";
    if (out[0] != '/' && getcwd(cwd, sizeof cwd))
        snprintf(esm_run_info.out_path, sizeof esm_run_info.out_path, "%s/%s", cwd, out);
    else
        snprintf(esm_run_info.out_path, sizeof esm_run_info.out_path, "%s", out);
}

static int write_all(int fd, const char *p, size_t n, off_t offset)
{
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, offset);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return 0;
        p += w;
        n -= (size_t)w;
        offset += w;
    }
    return 1;
}

void esm_write_running_marker(void)
{
    if (esm_world_rank != 0)
        return;
    esm_json b = {0};
    put_header(&b, "running");
    int fd = open(esm_run_info.out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || !write_all(fd, b.p, b.len, 0))
        fprintf(stderr, "esmprof: cannot write the profile %s: %s\n", esm_run_info.out_path,
                strerror(errno));
    if (fd >= 0)
        close(fd);
    free(b.p);
}

/* Where this rank's line starts: the sum of the lengths of the lines before it. SimGrid's
 * MPI_Exscan is linear (rank r waits for r messages: quadratic in the simulator at hundreds of
 * ranks), so simulated runs take log2(P) rounds of recursive doubling instead. */
static long long exclusive_sum(long long mine, MPI_Comm comm)
{
#ifdef ESM_SIMULATED
    long long inclusive = mine;
    for (int d = 1; d < esm_world_size; d <<= 1) {
        long long got = 0;
        int to = esm_world_rank + d < esm_world_size ? esm_world_rank + d : MPI_PROC_NULL;
        int from = esm_world_rank >= d ? esm_world_rank - d : MPI_PROC_NULL;
        PMPI_Sendrecv(&inclusive, 1, MPI_LONG_LONG, to, 0, &got, 1, MPI_LONG_LONG, from, 0, comm,
                      MPI_STATUS_IGNORE);
        inclusive += from == MPI_PROC_NULL ? 0 : got;
    }
    return inclusive - mine;
#else
    long long offset = 0;
    PMPI_Exscan(&mine, &offset, 1, MPI_LONG_LONG, MPI_SUM, comm);
    return esm_world_rank == 0 ? 0 : offset;
#endif
}

void esm_write_profile(MPI_Comm comm)
{
    PMPI_Bcast(esm_run_info.out_path, sizeof esm_run_info.out_path, MPI_CHAR, 0, comm);
    char part[sizeof esm_run_info.out_path + 8];
    snprintf(part, sizeof part, "%s.part", esm_run_info.out_path);
    esm_json b = {0};
    if (esm_world_rank == 0)
        put_header(&b, "complete");
    put_rank(&b, NULL, esm_run_info.final_ticks);
    if (esm_world_rank == esm_world_size - 1)
        esm_json_put(&b, "{\"end\":\"esmperf-profile\",\"ranks\":%d}\n", esm_world_size);
    long long offset = exclusive_sum((long long)b.len, comm);
    int fd = -1;
    if (esm_world_rank == 0)
        fd = open(part, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    PMPI_Barrier(comm);
    if (esm_world_rank != 0)
        fd = open(part, O_WRONLY);
    int ok = fd >= 0 && write_all(fd, b.p, b.len, (off_t)offset);
    int err = ok ? 0 : errno;
    if (fd >= 0 && close(fd) != 0)
        ok = 0;
    int all_ok = 0;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok)
        fprintf(stderr, "esmprof: rank %d cannot write %s: %s\n", esm_world_rank, part,
                strerror(err));
    if (esm_world_rank == 0) {
        if (all_ok && rename(part, esm_run_info.out_path) == 0)
            fprintf(stderr, "esmprof: profile written to %s\n", esm_run_info.out_path);
        else
            unlink(part);
    }
    free(b.p);
}
