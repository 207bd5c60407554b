/* The profiler is LD_PRELOADed into every process, mpirun and its daemons included, where the MPI
 * library is not loaded. Functions bind lazily, but data objects bind at load time: every MPI
 * object the profiler names through mpi.h macros is declared weak so those processes still start.
 * (MPICH names handles as integer constants and needs only the Fortran sentinels.) */
#ifndef ESM_WEAK_H
#define ESM_WEAK_H
#ifdef OPEN_MPI
#pragma weak ompi_mpi_comm_world
#pragma weak ompi_mpi_comm_self
#pragma weak ompi_mpi_comm_null
#pragma weak ompi_mpi_byte
#pragma weak ompi_mpi_datatype_null
#pragma weak ompi_request_null
#pragma weak ompi_message_null
#pragma weak ompi_mpi_win_null
#pragma weak ompi_mpi_group_null
#pragma weak ompi_mpi_info_null
#pragma weak ompi_message_no_proc
#pragma weak ompi_mpi_char
#pragma weak ompi_mpi_int
#pragma weak ompi_mpi_long_long_int
#pragma weak ompi_mpi_op_min
#pragma weak ompi_mpi_op_sum
#endif
#pragma weak MPI_F_STATUS_IGNORE
#pragma weak MPI_F_STATUSES_IGNORE
#endif
