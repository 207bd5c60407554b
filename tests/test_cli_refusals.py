"""Issue 26, item 7: bad input refused with one clear message (no traceback, nothing run), and
a study none of whose configurations completed exits non-zero with a one-line summary."""

from pathlib import Path

import pytest

from conftest import header, small_ranks, write_profile
from esmperf.store.database import Store
from test_cli import assert_fails_with, esmperf


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            ["profile", "--callsites", "99", "--", "true"],
            "argument --callsites: expected a depth of 1 to 8 return addresses (the profiler "
            "records at most 8), got '99'",
        ),
        (["profile", "--callsites", "0", "--", "true"], "expected a depth of 1 to 8"),
        (
            ["trace", "p.jsonl", "--speed", "0"],
            "argument --speed: expected flop/s above 0, e.g. --speed 1e+09, got '0'",
        ),
        (["trace", "p.jsonl", "--speed=-5e9"], "expected flop/s above 0"),
        (
            ["trace", "p.jsonl", "--replay", "gige", "--ranks-per-node", "0"],
            "argument --ranks-per-node: expected 1 or more ranks per node, e.g. "
            "--ranks-per-node 2, got '0'",
        ),
        (
            ["simulate", "pop", "--ranks-per-node", "0", "--dry-run"],
            "--ranks-per-node 0: give 1 or more ranks per node, e.g. --ranks-per-node 2",
        ),
    ],
)
def test_bad_arguments_are_refused(tmp_path: Path, arguments: list[str], message: str) -> None:
    arguments = [str(tmp_path / a) if a == "p.jsonl" else a for a in arguments]
    assert_fails_with(esmperf(*arguments), message)


@pytest.mark.parametrize("command", ["report", "export"])
def test_a_profile_given_for_a_store_names_the_fix(tmp_path: Path, command: str) -> None:
    profile = write_profile(tmp_path / "prof.jsonl", header(3), small_ranks())
    before = profile.read_bytes()
    assert_fails_with(
        esmperf(command, str(profile)),
        f"{profile} is a profile, not a study store: print it with `esmperf show {profile}`",
    )
    assert profile.read_bytes() == before
    assert_fails_with(
        esmperf("compare", str(profile), str(profile)), "is a profile, not a study store"
    )
    text = tmp_path / "notes.txt"
    text.write_text("not a store\n")
    assert_fails_with(
        esmperf(command, str(text)),
        f"{text} is not an esmperf study store (not a DuckDB file): give the store a study wrote",
    )


STUDY = """
name = "{name}"
[defaults]
launcher = false
ranks = 1
repeats = {{ warmup = 0, min = 1, max = 1 }}
[[matrix]]
name = "fails"
command = ["sh", "-c", "echo 'no input deck' >&2; exit 3"]
[[matrix]]
name = "{second}"
command = {command}
fom = {{ regex = 'rate: (\\S+)', unit = "steps/s" }}
"""


def study(tmp_path: Path, name: str, second: str, command: str) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(STUDY.format(name=name, second=second, command=command))
    return path


def test_a_study_where_nothing_completed_fails_with_a_summary(tmp_path: Path) -> None:
    path = study(tmp_path, "nothing", "also-fails", '["sh", "-c", "exit 4"]')
    store = tmp_path / "nothing.duckdb"
    result = esmperf("study", str(path), "--out", str(store))
    assert_fails_with(
        result,
        f"error: study nothing: none of its 2 configurations completed (2 failed): the "
        f"reasons are above and in {store}",
    )
    assert "exit code 3: no input deck" in " ".join(result.stdout.split())
    with Store(store, read_only=True) as opened:  # every reason kept
        assert sorted(r["reason"] for r in opened.runs()) == [
            "exit code 3: no input deck",
            "exit code 4",
        ]
    again = esmperf("study", str(path), "--out", str(store))  # resumed: still nothing
    assert_fails_with(again, "none of its 2 configurations completed (2 failed)")


def test_a_study_with_one_completed_configuration_exits_0(tmp_path: Path) -> None:
    path = study(tmp_path, "some", "works", '["sh", "-c", "echo \'rate: 42.5\'"]')
    result = esmperf("study", str(path), "--out", str(tmp_path / "some.duckdb"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 complete, 1 failed" in result.stdout


def test_a_run_whose_one_configuration_failed_fails(tmp_path: Path) -> None:
    store = tmp_path / "run.duckdb"
    result = esmperf(
        "run",
        "--command",
        "sh -c 'exit 2'",
        "--name",
        "broken",
        "--no-launcher",
        "--ranks",
        "1",
        "--repeats",
        "1",
        "--warmup",
        "0",
        "--out",
        str(store),
    )
    assert_fails_with(
        result,
        f"its one configuration did not complete (1 failed): the reasons are above and in {store}",
    )
