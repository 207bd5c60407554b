"""Every user error of libesmredist ends with the same clear status and message on every rank,
never a hang (native/redist/tests/redist_check.c `error all`: the cases run one after another in
one launch, so each also shows the library stays usable after an error); and redist-bench's bad
command lines end with one message on rank 0 and status 1 on every rank."""

import re
import subprocess

import pytest

from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import discover_stacks

DEBIAN = [s for s in discover_stacks().stacks if s.id in ("openmpi", "mpich")]

# case: (status, what the message must say)
CASES = {
    "blocks_gap": (
        "ESM_ERR_TILING",
        "cuts of dimension 0 run from 0 to 11: they must run from 0 to 12",
    ),
    "blocks_overlap": ("ESM_ERR_TILING", "cuts of dimension 0 decrease"),
    "blocks_parts": ("ESM_ERR_ARGUMENT", "choose parts whose product is"),
    "boxes_overlap": ("ESM_ERR_TILING", "the boxes overlap: rank 0's box"),
    "boxes_gap": ("ESM_ERR_TILING", "the boxes leave gaps: they hold 110 of the 120 elements"),
    "box_outside": ("ESM_ERR_ARGUMENT", "does not fit the index space 12x10"),
    "indices_duplicate": ("ESM_ERR_TILING", "rank 0 lists index 0 twice"),
    "indices_outside": ("ESM_ERR_ARGUMENT", "rank 0's index -1 (entry 0) is outside"),
    "indices_overlap": ("ESM_ERR_TILING", "global index 0 is held by ranks 0 and 1"),
    "indices_gap": ("ESM_ERR_TILING", "global index 19 is held by no rank"),
    "size_mismatch": (
        "ESM_ERR_MISMATCH",
        "the source index space is 12x10 (120 elements), the destination 10x12",
    ),
    "fields_mismatch": (
        "ESM_ERR_MISMATCH",
        "the source bundle has 2 double fields, the destination 3 double fields",
    ),
    "type_mismatch": ("ESM_ERR_MISMATCH", "the destination 2 float fields"),
    "inconsistent_fields": ("ESM_ERR_INCONSISTENT", "ranks passed different fields or options"),
    "inconsistent_options": ("ESM_ERR_INCONSISTENT", "ranks passed different fields or options"),
    "inconsistent_layout": ("ESM_ERR_INCONSISTENT", "ranks passed different block layouts"),
    "bad_options": ("ESM_ERR_ARGUMENT", "options.pack is 7"),
    "run_end_first": ("ESM_ERR_STATE", "no run in progress"),
    "layout_only": ("ESM_ERR_UNSUPPORTED", "use esm_route_store_as"),
}


def launch(stack, ranks: int, program, *args: str) -> subprocess.CompletedProcess:
    if not program.is_file():
        pytest.skip(f"{program} not built: run `make build`")
    command = mpirun_command(stack, ranks, [str(program), *args])
    return subprocess.run(
        command, env=run_environment(stack), capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("stack", DEBIAN, ids=lambda s: s.id)
def test_every_error_on_every_rank(stack):
    ranks = (
        3 if stack.family == "openmpi" else 2
    )  # MPICH spins when oversubscribed: slow, not wrong
    run = launch(stack, ranks, build_dir(stack) / "redist" / "redist_check", "error", "all")
    assert run.returncode == 0, run.stdout + run.stderr
    lines = {}
    for line in run.stdout.splitlines():
        match = re.match(r"rank (\d+): (\w+): (ESM_\w+): (.*)", line)
        if match:
            lines[(int(match[1]), match[2])] = (match[3], match[4])
    for case, (status, words) in CASES.items():
        messages = set()
        for rank in range(ranks):
            got = lines.get((rank, case))
            assert got, f"rank {rank} printed nothing for {case}:\n{run.stdout}"
            assert got[0] == status, (rank, case, got)
            assert words in got[1], (rank, case, got)
            messages.add(re.sub(r" \(found by rank \d+\)$", "", got[1]))
        assert len(messages) == 1, f"{case}: ranks disagree: {messages}"  # one message everywhere


BENCH_ERRORS = [  # esm_cli.h's wording, as every workload's (docs/workloads.md)
    (["--size", "XL"], "error: unknown size 'XL': use one of M, S, L"),
    (["--comm", "fast"], "error: invalid value --comm fast: use one of {async,sync,persistent}"),
    (["--frobnicate", "1"], "error: unknown option --frobnicate (see redist-bench --help)"),
    (["--src-parts", "2x2"], "error: give both --src-parts and --dst-parts"),
    (["--src-parts", "3x1", "--dst-parts", "1x2"], "layout 3x1x1 has 3 blocks for 2 ranks"),
    (["--grid", "1x1024x16"], "the source layout has 2 blocks along dimension 0 of only 1 points"),
    (["--grid", "12x3"], "invalid value --grid 12x3: give three sizes, e.g. 512x1024x16"),
    (["--src-parts", "2x0", "--dst-parts", "1x2"], "invalid value --src-parts 2x0: give blocks"),
    (["--store-ranks", "4,x", "--mode", "store-scaling"], "invalid value --store-ranks 4,x"),
    (["--steps", "0"], "error: invalid value --steps 0: use an integer in [1, 1000000]"),
    (
        ["--peers", "alltoallw,mtc"],
        "error: invalid value --peers alltoallw,mtc: use all, none or a comma-separated list of "
        "alltoallw, petsc, mct",
    ),
]


@pytest.mark.parametrize("stack", DEBIAN, ids=lambda s: s.id)
def test_bench_command_line_errors(stack):
    bench = build_dir(stack) / "apps" / "redist" / "redist-bench"
    if not bench.is_file():
        pytest.skip(f"{bench} not built: run `make build`")
    # all at once: Open MPI takes a second or two to wind up a job that exits with an error
    runs = [
        subprocess.Popen(
            mpirun_command(stack, 2, [str(bench), *args]),
            env=run_environment(stack),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for args, _ in BENCH_ERRORS
    ]
    for run, (args, words) in zip(runs, BENCH_ERRORS):
        stdout, stderr = run.communicate(timeout=60)
        assert run.returncode != 0, args
        errors = [line for line in stderr.splitlines() if line.startswith("redist-bench:")]
        assert len(errors) == 1 and words in errors[0], (args, stderr)  # once, from rank 0
        assert "{" not in stdout  # no result line
    run = launch(stack, 2, bench, "--help")
    assert run.returncode == 0 and run.stdout.count("usage: redist-bench") == 1
    assert all(
        f"--{option} " in run.stdout
        for option in (
            "size",
            "steps",
            "repeats",
            "grid",
            "fields",
            "type",
            "src-parts",
            "dst-parts",
            "comm",
            "pack",
            "bundle",
            "local",
            "single-copy",
            "peers",
            "verify",
            "memory",
            "mode",
            "store-ranks",
        )
    )
