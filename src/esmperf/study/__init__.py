"""Studies: the study file (file), running it into a store (orchestrate), their commands (cli)."""
