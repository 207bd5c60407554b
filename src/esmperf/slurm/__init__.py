"""Slurm as esmperf uses it: the [slurm] options and sbatch (batch), a job's batch script
(batch_script) and the finalize grace inside it (finalize_watch), squeue and sacct (jobs),
srun's MPI plug-ins (mpi), a study as batch jobs (campaign) and each job's files: what it runs
and what it wrote back (job_files)."""
