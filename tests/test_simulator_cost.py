"""What a simulated run costs the simulator, per message (docs/simulate.md, "What a simulation
costs"): the counter preloaded into SimGrid's simulator counts every message its network model
carries, collectives' included, exactly; the study runner stores the count, the simulated and
CPU seconds and CPU per message as columns of the repetition, prints them on the run's line and
the report shows them. The ping-pong tests are skipped without SimGrid."""

import io
from pathlib import Path

import duckdb
from rich.console import Console

from esmperf.launch.smpirun import counter_arguments, message_counter, simulated_messages
from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import Stack, discover_stacks
from esmperf.report.analysis import build_groups
from esmperf.report.html_sections import group_html
from esmperf.store.database import Store
from esmperf.store.results import SIMULATOR_COST_COLUMNS, load_results, simulator_cost_text
from esmperf.study.file import study_from_dict
from esmperf.study.orchestrate import run_study
from esmperf.workloads import load_workloads
from ocean_smpi import smpi_built
from test_study_fixtures import FakeRun, make_store


def pingpong_block(stack: Stack, rounds: int) -> dict[str, object]:
    """bench/pingpong on 2 simulated nodes, one message size (0 B), network only."""
    return {
        "name": f"pingpong-{rounds}",
        "command": [str(build_dir(stack) / "bench" / "pingpong"), str(rounds), "0"],
        "stack": "smpi",
        "ranks": [2],
        "knobs": {"platform": ["ib-qdr"], "computation": ["off"]},
        "repeats": {"warmup": 0, "min": 1, "max": 1},
    }


def test_a_simulated_run_stores_its_exact_message_count_and_cost(tmp_path: Path) -> None:
    stack = smpi_built(Path("simcount") / "libesmsimcount.so")
    study = study_from_dict(
        {"name": "cost", "matrix": [pingpong_block(stack, 1), pingpong_block(stack, 3)]}, "test"
    )
    console_text = io.StringIO()
    console = Console(file=console_text, width=400)
    store_path = tmp_path / "cost.duckdb"
    outcome = run_study(study, store_path, discover_stacks().stacks, load_workloads(), console)
    assert outcome.complete == 2
    with Store(store_path, read_only=True) as store:
        reps = store.rows(
            "SELECT r.*, run.label FROM repetition r JOIN run USING (run_key) ORDER BY run.label"
        )
        results = load_results(store)
    # per message size: SMPI's default barrier on 2 ranks (2 messages), the synchronising round
    # trip and `rounds` timed ones (2 each); then one reduction (1): 2 + 2 x (1 + rounds) + 1
    assert [r["simulator_messages"] for r in reps] == [7, 11]
    for rep in reps:
        assert f"Simulated time: {rep['simulated_seconds']:g} seconds" in rep["stderr"]
        assert rep["simulator_cpu_seconds"] > 0
        assert rep["simulator_cpu_per_message"] == (
            rep["simulator_cpu_seconds"] / rep["simulator_messages"]
        )
    # the configuration's console line and the report's results table say it
    assert "simulator: 7 messages" in console_text.getvalue()
    assert "simulator: 11 messages" in console_text.getvalue()
    html = "".join(group_html(group, []) for group in build_groups(results, None))
    assert "; 7 messages, " in html and "us CPU per message" in html


def test_the_message_count_is_read_from_the_simulators_last_line() -> None:
    stderr = "esmsim: 12 messages\n[0.1] [smpi_utils/INFO] Simulated time: 0.1 seconds.\n"
    assert simulated_messages(stderr) == 12
    assert simulated_messages("[0.1] Simulated time: 0.1 seconds.\n") is None
    stack = discover_stacks().by_id("smpi")
    if stack is not None and message_counter(stack).is_file():
        # preloaded into the simulator alone: smpirun's -wrapper runs only smpimain
        assert counter_arguments(stack) == ["-wrapper", f"env LD_PRELOAD={message_counter(stack)}"]


def test_the_console_text_gives_medians_and_microseconds_per_message() -> None:
    reps = [
        {
            "kind": "measure",
            "status": "ok",
            "simulator_messages": 1000,
            "simulated_seconds": 0.5,
            "simulator_cpu_seconds": cpu,
            "simulator_cpu_per_message": cpu / 1000,
        }
        for cpu in (0.1, 0.2, 0.3)
    ] + [{"kind": "warmup", "status": "ok", "simulator_messages": 9}]
    assert simulator_cost_text(reps) == (
        "1,000 messages, 0.5 s simulated, 0.2 s CPU, 200 us CPU per message"
    )
    assert simulator_cost_text([{"kind": "measure", "status": "ok"}]) == ""
    slow = [{"kind": "measure", "status": "ok", "simulator_cpu_per_message": 3.8765e-3}]
    assert simulator_cost_text(slow) == "3,876 us CPU per message"


def test_a_store_from_before_gains_the_simulator_cost_columns(tmp_path: Path) -> None:
    path = make_store(tmp_path / "s.duckdb", [FakeRun(1, [10.0])])
    con = duckdb.connect(str(path))
    for column in SIMULATOR_COST_COLUMNS:
        con.execute(f"ALTER TABLE repetition DROP COLUMN {column}")
    con.close()
    with Store(path) as store:  # opened for writing: the columns are added, NULL in old rows
        reps = store.repetitions(store.runs()[0]["run_key"])
    assert [reps[0][column] for column in SIMULATOR_COST_COLUMNS] == [None] * 4
