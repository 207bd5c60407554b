/* POSIX and stdio I/O on regular files and block devices, outside MPI calls: bytes, calls, time
 * per file (prof_files.c), POSIX totals, and the "I/O over time" bins. Sockets and pipes (the MPI
 * library's own traffic, stdout to the launcher) are not disk I/O and pass through uncounted.
 * stdio calls are counted at the stdio call (bytes handed to the stream); the writes glibc makes
 * when it flushes a stream do not go through these symbols, so nothing counts twice. Fortran
 * runtime I/O goes through write/read. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "esm_rank_state.h"
#include "prof_files.h"
#include "prof_state.h"

/* POSIX calls: totals and bins */
void esm_io_record(int kind, uint64_t bytes, uint64_t t0, uint64_t t1)
{
    esm_thread *t = esm_self();
    t->io[kind].calls++;
    t->io[kind].bytes += bytes;
    t->io[kind].ticks += t1 - t0;
    esm_bin *b = esm_bin_at(t, t1);
    if (kind == ESM_IO_WRITE)
        b->io_write += bytes;
    else
        b->io_read += bytes;
    b->io_ticks += t1 - t0;
}

/* stdio I/O: in the time bins (the POSIX totals are POSIX calls only) */
void esm_io_bin(int kind, uint64_t bytes, uint64_t t0, uint64_t t1)
{
    esm_bin *b = esm_bin_at(esm_self(), t1);
    if (kind == ESM_IO_WRITE)
        b->io_write += bytes;
    else
        b->io_read += bytes;
    b->io_ticks += t1 - t0;
}

#ifndef ESM_SIMULATED     /* simulated runs: SimGrid's own I/O is not the program's */
/* The file an fd names when it is a counted one (profiling on, outside MPI, a disk file). */
static int counted(int fd, int *file)
{
    if (!esm_enter())
        return 0;
    int saved = errno;
    *file = esm_file_of_fd(fd);
    errno = saved;
    return *file >= 0;
}

static void record(int file, int layer, int kind, ssize_t result, uint64_t t0)
{
    int saved = errno;
    uint64_t t1 = esm_now(), bytes = result > 0 ? (uint64_t)result : 0;
    esm_file_record(file, layer, kind, bytes, t1 - t0);
    if (layer == ESM_LAYER_POSIX)
        esm_io_record(kind, bytes, t0, t1);
    else
        esm_io_bin(kind, bytes, t0, t1);
    errno = saved;
}

#define REAL(name)                                                                                 \
    static __typeof__(name) *real ESM_RANK_INVARIANT; /* the same in every rank */                 \
    if (!real)                                                                                     \
    real = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

#define IO_WRAPPER(kind, ret, name, params, args)                                                  \
    ret name params                                                                                \
    {                                                                                              \
        REAL(name);                                                                                \
        int file;                                                                                  \
        if (!counted(fd, &file))                                                                   \
            return real args;                                                                      \
        uint64_t t0 = esm_now();                                                                   \
        ret result = real args;                                                                    \
        record(file, ESM_LAYER_POSIX, kind, result, t0);                                           \
        return result;                                                                             \
    }

IO_WRAPPER(ESM_IO_WRITE, ssize_t, write, (int fd, const void *buf, size_t n), (fd, buf, n))
IO_WRAPPER(ESM_IO_WRITE, ssize_t, pwrite, (int fd, const void *buf, size_t n, off_t o),
           (fd, buf, n, o))
IO_WRAPPER(ESM_IO_WRITE, ssize_t, pwrite64, (int fd, const void *buf, size_t n, off64_t o),
           (fd, buf, n, o))
IO_WRAPPER(ESM_IO_WRITE, ssize_t, writev, (int fd, const struct iovec *v, int n), (fd, v, n))
IO_WRAPPER(ESM_IO_READ, ssize_t, read, (int fd, void *buf, size_t n), (fd, buf, n))
IO_WRAPPER(ESM_IO_READ, ssize_t, pread, (int fd, void *buf, size_t n, off_t o), (fd, buf, n, o))
IO_WRAPPER(ESM_IO_READ, ssize_t, pread64, (int fd, void *buf, size_t n, off64_t o), (fd, buf, n, o))
IO_WRAPPER(ESM_IO_READ, ssize_t, readv, (int fd, const struct iovec *v, int n), (fd, v, n))

/* A closed fd may come back naming another file. */
int close(int fd)
{
    REAL(close);
    esm_file_forget_fd(fd);
    return real(fd);
}

/* ------------------------------------------------------------ stdio */

static int stream_counted(FILE *stream, int *file)
{
    int saved = errno, fd = esm_enter() && stream ? fileno(stream) : -1;
    errno = saved;
    return fd >= 0 && counted(fd, file);
}

int fclose(FILE *stream)
{
    REAL(fclose);
    int saved = errno, fd = stream ? fileno(stream) : -1;
    errno = saved;
    if (fd >= 0)
        esm_file_forget_fd(fd);
    return real(stream);
}

size_t fwrite(const void *ptr, size_t size, size_t n, FILE *stream)
{
    REAL(fwrite);
    int file;
    if (!stream_counted(stream, &file))
        return real(ptr, size, n, stream);
    uint64_t t0 = esm_now();
    size_t items = real(ptr, size, n, stream);
    record(file, ESM_LAYER_STDIO, ESM_IO_WRITE, (ssize_t)(items * size), t0);
    return items;
}

size_t fread(void *ptr, size_t size, size_t n, FILE *stream)
{
    REAL(fread);
    int file;
    if (!stream_counted(stream, &file))
        return real(ptr, size, n, stream);
    uint64_t t0 = esm_now();
    size_t items = real(ptr, size, n, stream);
    record(file, ESM_LAYER_STDIO, ESM_IO_READ, (ssize_t)(items * size), t0);
    return items;
}

int fputs(const char *s, FILE *stream)
{
    REAL(fputs);
    int file;
    if (!stream_counted(stream, &file))
        return real(s, stream);
    uint64_t t0 = esm_now();
    int rc = real(s, stream);
    record(file, ESM_LAYER_STDIO, ESM_IO_WRITE, rc >= 0 ? (ssize_t)strlen(s) : 0, t0);
    return rc;
}

char *fgets(char *s, int size, FILE *stream)
{
    REAL(fgets);
    int file;
    if (!stream_counted(stream, &file))
        return real(s, size, stream);
    uint64_t t0 = esm_now();
    char *got = real(s, size, stream);
    record(file, ESM_LAYER_STDIO, ESM_IO_READ, got ? (ssize_t)strlen(got) : 0, t0);
    return got;
}

int vfprintf(FILE *stream, const char *format, va_list ap)
{
    REAL(vfprintf);
    int file;
    if (!stream_counted(stream, &file))
        return real(stream, format, ap);
    uint64_t t0 = esm_now();
    int n = real(stream, format, ap);
    record(file, ESM_LAYER_STDIO, ESM_IO_WRITE, n, t0);
    return n;
}

int fprintf(FILE *stream, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    int n = vfprintf(stream, format, ap);
    va_end(ap);
    return n;
}
#endif
