/* Binding to the MPI library the program loaded (prof_bind.c). */
#ifndef PROF_BIND_H
#define PROF_BIND_H

typedef struct esm_binding {
    int bound;
    int promoted;               /* the library was loaded locally; the profiler made it global */
    char library[4096];         /* the file that defines PMPI_Init */
    int exported;               /* C MPI calls it exports (PMPI_ functions) */
    char **unwrapped;           /* of those, the ones the profiler does not wrap, sorted */
    int nunwrapped, cap;
} esm_binding;

extern esm_binding esm_mpi_binding;
void esm_bind_mpi(void);
void esm_scan_unwrapped(void);
void esm_report_unwrapped(void);
int esm_communicates(const char *name);

#endif
