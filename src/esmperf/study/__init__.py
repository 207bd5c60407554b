"""Studies: what a study is (configuration), reading its file (file), and running it into a
store: plan, execute, outcome (recorded as it ends), orchestrate; their commands (cli)."""
