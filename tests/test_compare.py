"""`esmperf compare`: per configuration, the change with its CI and test; a significant
regression beyond the threshold makes the exit status non-zero."""

import json
from pathlib import Path

import pytest

from conftest import esmperf
from esmperf.report.compare import compare_stores
from test_study_fixtures import FakeRun, make_store

QUIET = [1.0, 1.01, 0.99, 1.005, 0.995, 1.002]


def level(value: float) -> list[float]:
    return [value * q for q in QUIET]


@pytest.fixture
def stores(tmp_path: Path) -> tuple[Path, Path]:
    before = make_store(
        tmp_path / "before.duckdb",
        [
            FakeRun(1, level(10.0)),
            FakeRun(2, level(20.0)),
            FakeRun(4, level(30.0)),
            FakeRun(8, level(40.0)),
        ],
        name="before",
    )
    after = make_store(
        tmp_path / "after.duckdb",
        [
            FakeRun(1, level(10.0)[::-1]),
            FakeRun(2, level(16.0)),
            FakeRun(4, level(36.0)),
            FakeRun(16, level(50.0)),
        ],
        name="after",
    )
    return before, after


def test_changes_with_statistics(stores: tuple[Path, Path]) -> None:
    comparison = compare_stores(*stores, threshold=0.05)
    by_ranks = {change.label.split(" · ")[-1]: change for change in comparison.changes}
    assert by_ranks["1 rank"].verdict == "no significant change"
    assert by_ranks["1 rank"].change == pytest.approx(0.0)
    regression = by_ranks["2 ranks"]
    assert regression.regression and regression.change == pytest.approx(-0.2)
    assert regression.p_value == pytest.approx(2 / 924)  # exact U test, 6 against 6
    assert by_ranks["4 ranks"].improvement and by_ranks["4 ranks"].change == pytest.approx(0.2)
    assert comparison.only_before == ["pop S · openmpi · 8 ranks"]
    assert comparison.only_after == ["pop S · openmpi · 16 ranks"]
    assert len(comparison.regressions) == 1


def test_exit_status_for_ci(stores: tuple[Path, Path]) -> None:
    before, after = map(str, stores)
    regressed = esmperf("compare", before, after)
    assert regressed.returncode == 3
    assert "1 significant regression beyond 5%" in " ".join(regressed.stdout.split())
    assert esmperf("compare", before, after, "--threshold", "25").returncode == 0
    assert esmperf("compare", before, before).returncode == 0
    as_json = json.loads(esmperf("compare", before, after, "--json").stdout)
    assert as_json["regressions"] == 1
    assert {c["verdict"] for c in as_json["changes"]} == {
        "REGRESSION",
        "improvement",
        "no significant change",
    }


def test_nothing_in_common(tmp_path: Path) -> None:
    one = make_store(tmp_path / "one.duckdb", [FakeRun(1, level(1.0))])
    other = make_store(tmp_path / "other.duckdb", [FakeRun(1, level(1.0), workload="hycom")])
    result = esmperf("compare", str(one), str(other))
    assert result.returncode == 1 and "no configuration in common" in result.stderr
