/* Killed runs keep their profile. On SIGTERM (Slurm's wall-clock limit, mpirun passing on a
 * kill), SIGINT or SIGUSR1 each rank writes what it has recorded to OUT.partial/RANK.jsonl, then
 * the signal goes on to the program's own handler or default action. With ESMPROF_SNAPSHOT_SECONDS
 * set, each rank also rewrites that file every so many seconds, so the last snapshot survives
 * even SIGKILL. Each file is written to a temporary name and renamed: a reader sees a whole line.
 *
 * esmperf, interrupted itself, first asks each rank for its line with ESM_PARTIAL_NOW (a real-time
 * signal that ends nothing, carrying the signal esmperf got), and only then passes the signal on
 * to the launcher, whose kills may be quicker than a rank's writing; the line written on request
 * is the last. A rank waiting in MPI_Finalize for peers that do not come writes its line too
 * (prof_init.c).
 *
 * The writing is done by a helper thread the profiler starts at MPI_Init: the signal handler only
 * wakes it (write to a pipe) and waits for it (poll, at most 10 s), so no allocation or stdio
 * runs in the interrupted context. The helper makes no MPI call. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "esm_rank_state.h"
#include "prof_hooks.h"
#include "prof_state.h"
#include "prof_trace.h"

#define NCAUGHT 4
#define ESM_PARTIAL_NOW (SIGRTMIN + 6) /* src/esmperf/profile/interrupt.py sends it */
typedef struct {
    int caught[NCAUGHT]; /* the last: ESM_PARTIAL_NOW, at start */
    struct sigaction previous[NCAUGHT];
    int wake_pipe[2], done_pipe[2];
    double snapshot_seconds;
    int writing; /* a handler is having the line written */
    /* Partial lines are written from MPI_Init until the complete profile is being written, and
     * not after the one written when esmperf asked for it (the run is being ended: what a signal
     * from the launcher would write next must not replace it). The lock keeps one writer at a
     * time. */
    pthread_mutex_t write_lock;
    int partial_open, partial_final;
    const char *volatile snapshot_reason;
} signals_state;
ESM_RANK_STATE(signals_state, signals, .caught = {SIGTERM, SIGINT, SIGUSR1, 0},
               .wake_pipe = {-1, -1}, .done_pipe = {-1, -1},
               .write_lock = PTHREAD_MUTEX_INITIALIZER, .snapshot_reason = "snapshot")

static void partial_path(char *out, size_t size, int temporary)
{
    snprintf(out, size, "%s.partial/%d.jsonl%s", esm_run_info.out_path, esm_world_rank,
             temporary ? ".tmp" : "");
}

/* The rank's line, marked partial with why it was written, to OUT.partial/RANK.jsonl. */
static void write_partial(const char *reason)
{
    char dir[sizeof esm_run_info.out_path + 16], tmp[sizeof dir + 32], final[sizeof dir + 32];
    snprintf(dir, sizeof dir, "%s.partial", esm_run_info.out_path);
    mkdir(dir, 0755);
    partial_path(tmp, sizeof tmp, 1);
    partial_path(final, sizeof final, 0);
    size_t len = 0;
    char *line = esm_rank_line(reason, &len);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int ok = fd >= 0;
    for (size_t off = 0; ok && off < len;) {
        ssize_t w = write(fd, line + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        ok = w > 0;
        off += ok ? (size_t)w : 0;
    }
    if (fd >= 0)
        ok = close(fd) == 0 && ok;
    if (ok)
        rename(tmp, final);
    else
        unlink(tmp);
    free(line);
    esm_trace_write(reason);
}

/* write_partial when partial lines are open; `final`: the last one (esmperf asked for it). */
static void write_partial_once(const char *reason, int final)
{
    pthread_mutex_lock(&signals()->write_lock);
    if (signals()->partial_open && !signals()->partial_final) {
        write_partial(reason);
        signals()->partial_final = final;
    }
    pthread_mutex_unlock(&signals()->write_lock);
}

/* The line now, and the later snapshots with the same reason (a rank waiting in MPI_Finalize). */
void esm_partial_write(const char *reason)
{
    signals()->snapshot_reason = reason;
    write_partial_once(reason, 0);
}

void esm_partial_close(void)
{
    pthread_mutex_lock(&signals()->write_lock);
    signals()->partial_open = 0;
    pthread_mutex_unlock(&signals()->write_lock);
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGTERM:
        return "SIGTERM";
    case SIGINT:
        return "SIGINT";
    case SIGUSR1:
        return "SIGUSR1";
    case SIGHUP:
        return "SIGHUP";
    default:
        return "requested";
    }
}

static void *helper(void *arg)
{
    (void)arg;
    esm_depth = 1;              /* the helper's own writes are not the program's I/O */
    struct pollfd p = {.fd = signals()->wake_pipe[0], .events = POLLIN};
    int timeout = signals()->snapshot_seconds > 0 ? (int)(signals()->snapshot_seconds * 1000) : -1;
    for (;;) {
        int n = poll(&p, 1, timeout);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0) {
            write_partial_once(signals()->snapshot_reason, 0);
            continue;
        }
        unsigned char why[2] = {0, 0}; /* the signal, and the reason it carries */
        if (read(signals()->wake_pipe[0], why, 2) != 2)
            continue;
        write_partial_once(signal_name(why[1]), why[0] == (unsigned char)ESM_PARTIAL_NOW);
        unsigned char done = 1;
        (void)!write(signals()->done_pipe[1], &done, 1);
    }
    return NULL;
}

/* ESM_PARTIAL_NOW carries, queued by esmperf, the signal esmperf got (SIGINT, SIGTERM, SIGHUP). */
static int reason_of(int sig, const siginfo_t *info)
{
    if (sig != ESM_PARTIAL_NOW)
        return sig;
    int carried = info && info->si_code == SI_QUEUE ? info->si_value.sival_int : 0;
    return carried == SIGINT || carried == SIGTERM || carried == SIGHUP ? carried : 0;
}

static void on_signal(int sig, siginfo_t *info, void *context)
{
    int saved = errno, slot = 0;
    while (slot < NCAUGHT && signals()->caught[slot] != sig)
        slot++;
    if (signals()->partial_open &&
        __atomic_exchange_n(&signals()->writing, 1, __ATOMIC_ACQ_REL) == 0) {
        unsigned char why[2] = {(unsigned char)sig, (unsigned char)reason_of(sig, info)}, done;
        if (write(signals()->wake_pipe[1], why, 2) == 2) {
            struct pollfd p = {.fd = signals()->done_pipe[0], .events = POLLIN};
            if (poll(&p, 1, 10000) == 1)
                (void)!read(signals()->done_pipe[0], &done, 1);
        }
        __atomic_store_n(&signals()->writing, 0, __ATOMIC_RELEASE);
    } else {
        /* A signal another thread is handling is writing the line (mpirun sends SIGTERM twice,
         * and the second lands on one of the library's threads): it ends the rank only once the
         * line is written, at most 10 s later. */
        const struct timespec ms = {0, 1000000};
        for (int i = 0; i < 10000 && __atomic_load_n(&signals()->writing, __ATOMIC_ACQUIRE); i++)
            nanosleep(&ms, NULL);
    }
    errno = saved;
    /* then what the signal would have done without the profiler; esmperf's request for a partial
     * line ends nothing */
    struct sigaction *old = &signals()->previous[slot];
    if (old->sa_flags & SA_SIGINFO) {
        if (old->sa_sigaction)
            old->sa_sigaction(sig, info, context);
    } else if (old->sa_handler == SIG_DFL) {
        if (sig == ESM_PARTIAL_NOW)
            return;
        sigaction(sig, old, NULL);
        raise(sig);
    } else if (old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
    }
}

/* A rank that exits without MPI_Finalize (exit(1) after an error) writes what it had: the rank
 * that failed is named too, not only the peers it left waiting. */
static void on_exit_without_finalize(void)
{
    write_partial_once("exit", 1);
}

/* At MPI_Init (after the output path is known). ESMPROF_SIGNALS=0 leaves signals alone. */
void esm_signals_start(void)
{
#ifdef ESM_SIMULATED
    return; /* simulated ranks share one process: no helper thread, no signals */
#endif
    const char *off = getenv("ESMPROF_SIGNALS");
    const char *every = getenv("ESMPROF_SNAPSHOT_SECONDS");
    signals()->snapshot_seconds = every ? atof(every) : 0;
    int handle = !(off && strcmp(off, "0") == 0);
    signals()->caught[NCAUGHT - 1] = ESM_PARTIAL_NOW;
    signals()->partial_open = 1;
    atexit(on_exit_without_finalize);
    char stale[sizeof esm_run_info.out_path + 64];
    partial_path(stale, sizeof stale, 0);
    unlink(stale); /* left by an earlier run of the same profile */
    if (!handle && signals()->snapshot_seconds <= 0)
        return;
    if (pipe2(signals()->wake_pipe, O_CLOEXEC) != 0 || pipe2(signals()->done_pipe, O_CLOEXEC) != 0)
        return;
    pthread_t thread;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old); /* the helper takes no signals */
    int started = pthread_create(&thread, NULL, helper, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!started)
        return;
    if (handle) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        /* a second signal (the launcher's kill) waits until this line is written */
        sigemptyset(&sa.sa_mask);
        for (int i = 0; i < NCAUGHT; i++)
            sigaddset(&sa.sa_mask, signals()->caught[i]);
        for (int i = 0; i < NCAUGHT; i++)
            sigaction(signals()->caught[i], &sa, &signals()->previous[i]);
        /* how esmperf finds the ranks whose handlers are in place (profile/interrupt.py) */
        pthread_setname_np(thread, "esmprof-signals");
    }
    pthread_detach(thread);
}

/* At MPI_Finalize, once the complete profile is written: the partial files are stale. */
void esm_signals_finished(void)
{
    char final[sizeof esm_run_info.out_path + 64], dir[sizeof esm_run_info.out_path + 16];
    partial_path(final, sizeof final, 0);
    unlink(final);
    snprintf(dir, sizeof dir, "%s.partial", esm_run_info.out_path);
    rmdir(dir); /* the last rank's rmdir succeeds */
}
