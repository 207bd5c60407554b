/* POSIX I/O on regular files and block devices, outside MPI calls: bytes, calls, time, and the
 * "I/O over time" bins. Sockets and pipes (the MPI library's own traffic, stdout to the launcher)
 * are not disk I/O and pass through uncounted. Calls inside glibc (stdio's buffered writes) do
 * not go through these symbols; Fortran runtime I/O does. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "prof_state.h"

static int is_disk(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode));
}

static int counted(int fd)
{
    int saved = errno, yes = esm_enter() && is_disk(fd);
    errno = saved;
    return yes;
}

static void record(int kind, ssize_t result, uint64_t t0)
{
    int saved = errno;
    esm_io_record(kind, result > 0 ? (uint64_t)result : 0, t0, esm_now());
    errno = saved;
}

#define REAL(name) static __typeof__(name) *real; if (!real) real = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

#define IO_WRAPPER(kind, ret, name, params, args)            \
    ret name params                                          \
    {                                                        \
        REAL(name);                                          \
        if (!counted(fd))                                    \
            return real args;                                \
        uint64_t t0 = esm_now();                             \
        ret result = real args;                              \
        record(kind, result, t0);                            \
        return result;                                       \
    }

IO_WRAPPER(ESM_IO_WRITE, ssize_t, write, (int fd, const void *buf, size_t n), (fd, buf, n))
IO_WRAPPER(ESM_IO_WRITE, ssize_t, pwrite, (int fd, const void *buf, size_t n, off_t o), (fd, buf, n, o))
IO_WRAPPER(ESM_IO_WRITE, ssize_t, pwrite64, (int fd, const void *buf, size_t n, off64_t o), (fd, buf, n, o))
IO_WRAPPER(ESM_IO_WRITE, ssize_t, writev, (int fd, const struct iovec *v, int n), (fd, v, n))
IO_WRAPPER(ESM_IO_READ, ssize_t, read, (int fd, void *buf, size_t n), (fd, buf, n))
IO_WRAPPER(ESM_IO_READ, ssize_t, pread, (int fd, void *buf, size_t n, off_t o), (fd, buf, n, o))
IO_WRAPPER(ESM_IO_READ, ssize_t, pread64, (int fd, void *buf, size_t n, off64_t o), (fd, buf, n, o))
IO_WRAPPER(ESM_IO_READ, ssize_t, readv, (int fd, const struct iovec *v, int n), (fd, v, n))
