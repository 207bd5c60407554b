"""The profile reader: read a profile file (read), summarise it (summary), print it (render)."""
