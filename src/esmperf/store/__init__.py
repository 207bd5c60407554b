"""The DuckDB store: its tables (schema), every write and the readers (database, with the Slurm
jobs' in slurm_tables), profiles as rows (profile_tables), results read back (results), result
keys renamed since (result_keys)."""
