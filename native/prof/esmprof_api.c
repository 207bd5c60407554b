/* The Fortran side of esmprof_api.h: `call esmprof_region_begin('name')` and
 * `call esmprof_region_end('name')` under every Fortran name mangling. Like the C functions they
 * are MPI_Pcontrol(+-1, name), so a program linked with this small library runs with or without
 * the profiler. Trailing blanks of the Fortran string are not part of the name. */
#include <mpi.h>
#include <stddef.h>

#define ESMPROF_NAME 64

static void call_pcontrol(int level, const char *name, size_t len)
{
    char buf[ESMPROF_NAME];
    while (len > 0 && name[len - 1] == ' ')
        len--;
    if (len >= sizeof buf)
        len = sizeof buf - 1;
    for (size_t i = 0; i < len; i++)
        buf[i] = name[i];
    buf[len] = 0;
    MPI_Pcontrol(level, buf);
}

void esmprof_region_begin_(const char *name, size_t len)
{
    call_pcontrol(1, name, len);
}
void esmprof_region_end_(const char *name, size_t len)
{
    call_pcontrol(-1, name, len);
}
void esmprof_region_begin(const char *, size_t) __attribute__((alias("esmprof_region_begin_")));
void esmprof_region_begin__(const char *, size_t) __attribute__((alias("esmprof_region_begin_")));
void ESMPROF_REGION_BEGIN(const char *, size_t) __attribute__((alias("esmprof_region_begin_")));
void esmprof_region_end(const char *, size_t) __attribute__((alias("esmprof_region_end_")));
void esmprof_region_end__(const char *, size_t) __attribute__((alias("esmprof_region_end_")));
void ESMPROF_REGION_END(const char *, size_t) __attribute__((alias("esmprof_region_end_")));
