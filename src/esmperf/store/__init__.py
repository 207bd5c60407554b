"""The DuckDB store: its tables (schema), every write and the readers (database), profiles as
rows (profile_tables), results read back (results), result keys renamed since (result_keys)."""
