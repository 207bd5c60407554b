"""Result keys renamed to the workloads' one vocabulary (docs/workloads.md, "Result keys"):
stores written before keep the old names in their metric table; readers ask current_name."""

RENAMED: dict[tuple[str, str], str] = {
    ("hycom", "params.layers"): "params.nz",
    ("hycom", "params.tiles"): "params.blocks",
    ("hycom", "params.land_tiles_dropped"): "params.land_blocks",
    ("hycom", "params.tiles_per_rank_min"): "params.blocks_per_rank_min",
    ("hycom", "params.tiles_per_rank_max"): "params.blocks_per_rank_max",
    ("homme", "stream.megabytes"): "stream.megabytes_per_array",
    ("homme", "stream.fraction"): "kernels.tendency.fraction",
    ("pflotran", "stream.megabytes"): "stream.megabytes_per_array",
    ("pflotran", "kernels.matvec.fraction_of_triad"): "kernels.matvec.fraction",
    ("pflotran", "kernels.pc_apply.fraction_of_triad"): "kernels.pc_apply.fraction",
}


def current_name(workload: str, name: str) -> str:
    """The name a metric has today: "params.tiles" of hycom is "params.blocks"."""
    return RENAMED.get((workload, name), name)
