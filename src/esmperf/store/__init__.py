"""The DuckDB store: its tables and every write (database), results read back (results)."""
