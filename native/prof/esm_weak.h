/* The profiler is LD_PRELOADed into every process, mpirun and its daemons included, and into
 * programs that load the MPI library late and locally (Python's extensions with RTLD_LOCAL,
 * dlopen). It therefore names no MPI data object at load time: Open MPI's predefined handles are
 * addresses of library objects (ompi_mpi_comm_world, ...), which the profiler looks up when the
 * program calls MPI_Init (esm_bind_mpi, prof_bind.c) and reads from esm_ompi. MPICH names its
 * handles as integer constants. Reading esm_ompi costs the one load a GOT entry did. */
#ifndef ESM_WEAK_H
#define ESM_WEAK_H
#ifdef OPEN_MPI
typedef struct esm_ompi_objects {
    void *comm_world, *comm_self, *comm_null, *byte, *datatype_null, *request_null, *message_null,
        *message_no_proc, *win_null, *char_, *int_, *long_long_int, *op_min, *op_sum, *info_null;
} esm_ompi_objects;
extern esm_ompi_objects esm_ompi __attribute__((visibility("hidden")));
#undef MPI_COMM_WORLD
#undef MPI_COMM_SELF
#undef MPI_COMM_NULL
#undef MPI_BYTE
#undef MPI_DATATYPE_NULL
#undef MPI_REQUEST_NULL
#undef MPI_MESSAGE_NULL
#undef MPI_MESSAGE_NO_PROC
#undef MPI_WIN_NULL
#undef MPI_CHAR
#undef MPI_INT
#undef MPI_LONG_LONG
#undef MPI_MIN
#undef MPI_SUM
#undef MPI_INFO_NULL
#define MPI_COMM_WORLD ((MPI_Comm)esm_ompi.comm_world)
#define MPI_COMM_SELF ((MPI_Comm)esm_ompi.comm_self)
#define MPI_COMM_NULL ((MPI_Comm)esm_ompi.comm_null)
#define MPI_BYTE ((MPI_Datatype)esm_ompi.byte)
#define MPI_DATATYPE_NULL ((MPI_Datatype)esm_ompi.datatype_null)
#define MPI_REQUEST_NULL ((MPI_Request)esm_ompi.request_null)
#define MPI_MESSAGE_NULL ((MPI_Message)esm_ompi.message_null)
#define MPI_MESSAGE_NO_PROC ((MPI_Message)esm_ompi.message_no_proc)
#define MPI_WIN_NULL ((MPI_Win)esm_ompi.win_null)
#define MPI_CHAR ((MPI_Datatype)esm_ompi.char_)
#define MPI_INT ((MPI_Datatype)esm_ompi.int_)
#define MPI_LONG_LONG ((MPI_Datatype)esm_ompi.long_long_int)
#define MPI_MIN ((MPI_Op)esm_ompi.op_min)
#define MPI_SUM ((MPI_Op)esm_ompi.op_sum)
#define MPI_INFO_NULL ((MPI_Info)esm_ompi.info_null)
#endif
/* MPI_F_STATUS(ES)_IGNORE are library variables too: looked up at MPI_Init (prof_fortran.c). */
#endif
