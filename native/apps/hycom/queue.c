/* The HYCOM proxy's kernel queue, block by block. A kernel call only queues the kernel
 * (kernel_*); hycom_flush runs the queue one block at a time, every queued kernel on that
 * block before the next block. Between two halo exchanges each block reads only its own
 * points and halo, so the order changes no result; but the fields one kernel writes and the
 * next reads (p, hu, hv, u_next ...) are then still in the cache (one block of a layer field
 * is under 1 MB) instead of making a round trip to memory. hycom.c flushes before every
 * exchange and at the end of each phase. A flush is one kernel for folding and the node
 * model (esm_fold.h), named by the kernels it runs. */
#include <stdio.h>
#include <string.h>
#include "kernels.h"

static double points(const hycom *m, esm_region r)
{
    double n = 0;
    for (int lb = 0; lb < m->d.nlocal; lb++) {
        const esm_block *b = BLOCK(m);
        n += (double)width_of(b, r) * rows_of(b, r);
    }
    return n;
}

/* Queue kernel `run` (`name`) over region r (with its argument), counting its bytes and flops. */
void hycom_defer(hycom *m, block_kernel run, const char *name, esm_region r, double arg,
                 double doubles_per_point, double flops_per_point)
{
    if (m->queued == HYCOM_QUEUE)
        hycom_flush(m);
    double n = points(m, r), bytes = n * doubles_per_point * sizeof(double);
    m->queue[m->queued++] = (queued_kernel){run, r, arg, name, n, bytes, n * flops_per_point};
    m->bytes += bytes;
}

/* The kernel (for esm_fold.h) of the mix of kernels queued now. */
static const esm_kernel *flush_kernel_of(hycom *m, double *points, double *bytes, double *flops)
{
    char name[sizeof m->flush_kernels[0]->name] = "hycom";
    *points = *bytes = *flops = 0;
    for (int k = 0; k < m->queued; k++) {
        size_t used = strlen(name);
        snprintf(name + used, sizeof name - used, ".%s", m->queue[k].name);
        *points += m->queue[k].points;
        *bytes += m->queue[k].bytes;
        *flops += m->queue[k].flops;
    }
    for (int f = 0; f < m->nflush_kernels; f++)
        if (!strcmp(m->flush_kernels[f]->name, name))
            return &m->flush_kernels[f]->kernel;
    m->flush_kernels =
        esm_realloc(m->flush_kernels, (m->nflush_kernels + 1) * sizeof *m->flush_kernels);
    flush_kernel *f = esm_calloc(1, sizeof *f);
    memcpy(f->name, name, sizeof name);
    f->kernel.name = f->name;
    m->flush_kernels[m->nflush_kernels++] = f;
    return &f->kernel;
}

void hycom_flush(hycom *m)
{
    m->flushes++;
    if (!m->queued)
        return;
    double work, bytes, flops;
    esm_kernel *kernel = flush_kernel_of(m, &work, &bytes, &flops);
    if (esm_kernel_begin_flops(kernel, work, bytes, flops)) { /* folded: run on its first calls */
        for (int lb = 0; lb < m->d.nlocal; lb++)
            for (int k = 0; k < m->queued; k++)
                m->queue[k].run(m, lb, m->queue[k].r, m->queue[k].arg);
        esm_kernel_end(kernel);
    }
    m->queued = 0;
}
