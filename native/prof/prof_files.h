/* I/O per file (prof_files.c): which file an fd names, and what each file saw. */
#ifndef PROF_FILES_H
#define PROF_FILES_H

#include <stdint.h>

enum { ESM_LAYER_POSIX, ESM_LAYER_STDIO };

int esm_file_of_fd(int fd);         /* file id, or -1 when the fd is not a disk file */
void esm_file_forget_fd(int fd);
void esm_file_record(int file, int layer, int kind, uint64_t bytes, uint64_t ticks);
void esm_io_bin(int kind, uint64_t bytes, uint64_t t0, uint64_t t1);   /* prof_core.c */

/* for output */
typedef struct esm_file_stat {
    uint64_t calls, bytes, ticks;
} esm_file_stat;
int esm_file_count(void);
const char *esm_file_name(int file);
const esm_file_stat *esm_file_stats(int file);   /* [layer * 2 + kind] */

#endif
