"""Launchers: how the ranks of one run are started (mpirun here, srun in an allocation, Slurm
batch jobs, smpirun on a simulated cluster)."""
