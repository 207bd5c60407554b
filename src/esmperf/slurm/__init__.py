"""Slurm as esmperf uses it: the [slurm] options and batch script (batch), squeue and sacct
(jobs), srun's MPI plug-ins (mpi), a study as batch jobs (campaign) and each job's files: what
it runs and what it wrote back (job_files)."""
