"""Studies: what a study is (configuration), reading its file (file: the study, matrix: a
block's axes and their product, block_settings: the rest of a block), and running it into a
store: plan, execute, outcome (recorded as it ends), orchestrate; their commands (cli, with
cli_simulate, cli_results, cli_catalog and what they share, cli_common)."""
