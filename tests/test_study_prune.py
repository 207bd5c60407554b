"""An edited study file resumed into its store: the configurations it no longer has are kept
and said (they still show in the report and the seeds' claims), or removed with --prune, with
everything stored of them and their profile files beside the store, and nothing else."""

import io
from pathlib import Path

from rich.console import Console

from esmperf.store.database import Store, results_dir
from esmperf.study.file import load_study
from esmperf.study.orchestrate import run_study

STUDY = """
name = "edited"
[[matrix]]
name = "step"
command = ["sh", "-c", "echo 'value 7'"]
fom = {{ regex = 'value (\\d+)' }}
launcher = false
ranks = {ranks}
repeats = {{ warmup = 0, min = 2, max = 2 }}
"""


def run(tmp_path: Path, ranks: str, prune: bool = False) -> str:
    path = tmp_path / "s.toml"
    path.write_text(STUDY.format(ranks=ranks))
    out = io.StringIO()
    console = Console(file=out, width=400)
    run_study(load_study(path, workloads={}), tmp_path / "s.duckdb", [], {}, console, prune=prune)
    return out.getvalue()


def stored(tmp_path: Path) -> tuple[list[int], int, int]:
    with Store(tmp_path / "s.duckdb", read_only=True) as store:
        ranks = sorted(run["ranks"] for run in store.runs())
        reps = store.rows("SELECT count(*) AS n FROM repetition")[0]["n"]
        metrics = store.rows("SELECT count(DISTINCT run_key) AS n FROM metric")[0]["n"]
    return ranks, reps, metrics


def test_configurations_left_out_of_an_edited_study_are_kept_and_said_or_pruned(
    tmp_path: Path,
) -> None:
    assert "not in the study file" not in run(tmp_path, "[1, 2, 3]")
    assert stored(tmp_path) == ([1, 2, 3], 6, 3)

    said = " ".join(run(tmp_path, "[1]").split())
    assert "note: 2 configuration(s) of the store are not in the study file" in said
    assert "--prune removes them" in said
    assert stored(tmp_path) == ([1, 2, 3], 6, 3)  # kept: nothing lost without --prune

    pruned = " ".join(run(tmp_path, "[1]", prune=True).split())
    assert "pruned 2 configuration(s) no longer in the study file" in pruned
    assert stored(tmp_path) == ([1], 2, 1)
    assert "not in the study file" not in run(tmp_path, "[1]", prune=True)


def test_remove_runs_returns_only_the_profile_files_beside_the_store(tmp_path: Path) -> None:
    run(tmp_path, "[1, 2]")
    inside = results_dir(tmp_path / "s.duckdb") / "profiles" / "a-1.jsonl"
    outside = tmp_path / "elsewhere" / "b-1.jsonl"
    with Store(tmp_path / "s.duckdb") as store:
        keys = sorted(run["run_key"] for run in store.runs())
        store.con.execute(
            "UPDATE repetition SET profile_file = ? WHERE run_key = ? AND rep = 1",
            [str(inside), keys[0]],
        )
        store.con.execute(
            "UPDATE repetition SET profile_file = ? WHERE run_key = ? AND rep = 2",
            [str(outside), keys[0]],
        )
        assert store.remove_runs([keys[0]]) == [inside]
        assert [run["run_key"] for run in store.runs()] == [keys[1]]
        assert store.remove_runs([]) == []
