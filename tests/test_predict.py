"""Scaling models (Extra-P) of a study over ranks: `esmperf predict`, on synthetic stores whose
values follow a known law (t = 2 + 0.5 log2(p) for the figure of merit, 0.75 p seconds of
MPI_Allreduce per rank from the profiles of test_study_fixtures)."""

import math
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import esmperf
from esmperf.model.extrap_fit import fit_extrap_input, model_series, write_series_input
from esmperf.model.predict import render_lines
from esmperf.model.series import FOM, Quantity, Series, _dominant, load_series
from esmperf.store.database import Store
from test_study_fixtures import FakeRun, make_store

RANKS = (2, 4, 8, 16, 32)
SPREAD = (-0.01, 0.0, 0.01)  # the repetitions around the law


def law(ranks: int) -> float:
    return 2 + 0.5 * math.log2(ranks)


def study(path: Path, ranks=RANKS, largest_offset: float = 0.0) -> Path:
    runs = []
    for r in ranks:
        offset = largest_offset if r == max(ranks) else 0.0
        values = [law(r) + offset + d for d in SPREAD]
        runs.append(FakeRun(r, values, unit="s", higher_is_better=False, profile=True))
    return make_store(path, runs)


def modelled(path: Path, at=(256,)):
    with Store(path, read_only=True) as store:
        (series,) = load_series(store)
    return series, {m.quantity.name: m for m in model_series(series, list(at))}


def test_models_recover_the_law_and_predict_256(tmp_path: Path) -> None:
    _series, models = modelled(study(tmp_path / "law.duckdb"))
    fom = models[FOM]
    assert fom.model.constant == pytest.approx(2, abs=1e-9)
    ((term),) = fom.model.terms
    assert (term.poly, term.log) == (0, 1)
    assert term.coefficient == pytest.approx(0.5, abs=1e-9)
    assert fom.model.formula == "2 + 0.5 * log2(p)"
    (at_256,) = fom.predictions
    assert at_256.value == pytest.approx(6.0, abs=1e-9)
    # the interval: refits to the smallest and the largest repetition at each rank count
    assert (at_256.low, at_256.high) == (pytest.approx(5.99), pytest.approx(6.01))
    allreduce = models["MPI time in MPI_Allreduce"]
    ((term),) = allreduce.model.terms
    assert (term.poly, term.log) == (1, 0)
    assert term.coefficient == pytest.approx(0.75, abs=1e-9)
    assert allreduce.predictions[0].value == pytest.approx(192.0, abs=1e-6)
    # one profile per rank count: no spread, so no interval
    assert allreduce.predictions[0].low is None
    assert models["MPI share"].predictions[0].value <= 100


def test_counts_are_modelled_exactly(tmp_path: Path) -> None:
    """Each rank of the fixture's profiles makes 10 Allreduce, 100 Isend and 100 Waitall calls
    and sends 80 + 102,400 bytes at every rank count: constant models, predicted exactly, with
    no held-out error (counts hold on an oversubscribed machine where times do not)."""
    _series, models = modelled(study(tmp_path / "counts.duckdb"))
    for name, per_rank in (("MPI calls per rank", 210), ("bytes sent per rank", 102480)):
        found = models[name]
        assert found.model.terms == []
        assert found.model.constant == pytest.approx(per_rank, abs=1e-9)
        assert found.predictions[0].value == pytest.approx(per_rank, abs=1e-6)
        assert found.held_out is not None
        assert found.held_out.error == pytest.approx(0, abs=1e-9)


def test_a_function_not_called_at_a_rank_count_takes_no_time_there(tmp_path: Path) -> None:
    """A function a program does not call at some rank count (Veros: MPI_Sendrecv on 1 rank)
    has 0 s there, not a missing point: Extra-P needs every quantity at every rank count."""
    path = study(tmp_path / "missing.duckdb")
    with Store(path) as store:
        store.rows(
            "DELETE FROM profile_function WHERE function = 'MPI_Waitall' AND run_key IN "
            "(SELECT run_key FROM run WHERE ranks = 2)"
        )
    _series, models = modelled(path)
    waitall = models["MPI time in MPI_Waitall"]
    assert waitall.held_out is not None
    with Store(path, read_only=True) as store:
        (series,) = load_series(store)
    (quantity,) = [q for q in series.quantities if q.name == "MPI time in MPI_Waitall"]
    assert quantity.values[2] == [0.0]
    assert quantity.values[4] == [pytest.approx(0.2 * 4)]  # 0.2 x ranks s per rank


def test_the_six_with_the_most_mpi_time_at_the_largest_rank_count_are_modelled() -> None:
    """docs/predict.md: of the regions (and, ranked apart, of the functions) the 6 with the most
    MPI time at the largest rank count, each with at least 1 % of the first one's; the smaller
    rank counts do not rank them, and one with no MPI time there is left out."""
    at_8 = {"a": 100.0, "b": 50.0, "c": 40.0, "d": 30.0, "e": 20.0, "f": 10.0, "g": 5.0}
    regions = {
        f"region {name}": Quantity(f"MPI time in region {name}", "s", {4: [1.0], 8: [time]})
        for name, time in (at_8 | {"h": 0.9, "i": 0.0}).items()
    }
    regions["region h"].values[4] = [1000.0]  # the most at 4 ranks, under 1 % at 8
    chosen = [q.name for q in _dominant(regions, 8)]
    assert chosen == [f"MPI time in region {name}" for name in "abcdef"]
    few = {name: regions[name] for name in ("region a", "region g", "region h", "region i")}
    assert [q.name for q in _dominant(few, 8)] == ["MPI time in region a", "MPI time in region g"]


def test_a_rate_predicted_below_zero_is_clamped_and_said(tmp_path: Path) -> None:
    """A falling figure of merit (10 - 1.5 log2(p) steps/s, never measured below 0) modelled to
    256 ranks, where its law is -2: the prediction is 0 and says it is clamped."""
    runs = [
        FakeRun(r, [10 - 1.5 * math.log2(r) + d for d in SPREAD], unit="steps/s") for r in RANKS
    ]
    series, models = modelled(make_store(tmp_path / "falling.duckdb", runs))
    (at_256,) = models[FOM].predictions
    assert (at_256.value, at_256.clamped) == (0.0, True)
    text = "\n".join(render_lines(series, list(models.values())))
    assert "at 256: 0 [0, 0] steps/s (clamped: the model leaves the range there)" in text


def test_held_out_error(tmp_path: Path) -> None:
    """The largest rank count measured 0.3 s above the law: the model fitted without it
    predicts the law there, 4.5 s, against 4.8 s measured: -6.25 %."""
    _series, models = modelled(study(tmp_path / "held.duckdb", largest_offset=0.3))
    held = models[FOM].held_out
    assert held is not None
    assert held.ranks == 32
    assert held.predicted == pytest.approx(4.5, abs=1e-9)
    assert held.measured == pytest.approx(4.8, abs=1e-12)
    assert held.error == pytest.approx(100 * (4.5 - 4.8) / 4.8, abs=1e-6)


def test_extrap_reads_our_input(tmp_path: Path) -> None:
    """Our JSON Lines input, read back by Extra-P's own reader: every repetition kept."""
    series, _models = modelled(study(tmp_path / "input.duckdb"))
    path = write_series_input(series, tmp_path / "series.jsonl")
    from extrap.fileio.file_reader.jsonlines_file_reader import read_jsonlines_file

    experiment = read_jsonlines_file(str(path))
    assert [c[0] for c in experiment.coordinates] == list(RANKS)
    by_callpath = {cp.name: ms for (cp, _metric), ms in experiment.measurements.items()}
    assert [m.median for m in by_callpath[FOM]] == pytest.approx([law(r) for r in RANKS])
    assert [m.repetitions for m in by_callpath[FOM]] == [3] * len(RANKS)
    assert fit_extrap_input(path)[FOM].formula == "2 + 0.5 * log2(p)"


def test_predict_command(tmp_path: Path) -> None:
    store = study(tmp_path / "cli.duckdb", largest_offset=0.3)
    done = esmperf("predict", str(store), "--ranks", "256")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("pop S · openmpi  (ranks 2,4,8,16,32; interval: models")
    assert (
        "  figure of merit: 0.2893 + 1.888 * p^0.25" in lines
    )  # Extra-P's pick, off the law at 32
    assert "held out 32 ranks: predicted 4.5, measured 4.8 s, error -6.2 %" in done.stdout
    assert "  MPI time in MPI_Allreduce: 0 + 0.75 * p" in lines


@pytest.mark.parametrize(
    ("ranks", "shown"), [((4,), "[4]"), ((4, 8), "[4, 8]")], ids=["one", "two"]
)
def test_no_rank_axis_is_one_clear_error(tmp_path: Path, ranks, shown: str) -> None:
    store = study(tmp_path / "flat.duckdb", ranks=ranks)
    done = esmperf("predict", str(store), "--ranks", "256")
    assert done.returncode == 1
    message = " ".join(done.stderr.split())
    assert message.startswith("error: no series of the store has 3 or more rank counts")
    assert f"pop S · openmpi: {shown}" in message
    assert "--ranks 4,8,16,32,64" in message
    assert "Traceback" not in done.stderr


def test_extrap_is_headless() -> None:
    """Extra-P fits without Qt (no PySide6 installed or loaded) and with numpy 2."""
    code = (
        "import sys, numpy, tempfile, pathlib\n"
        "from esmperf.model.extrap_fit import fit_extrap_input, write_extrap_input\n"
        "path = pathlib.Path(tempfile.mkdtemp()) / 'in.jsonl'\n"
        "write_extrap_input([('t', p, 3.0 * p) for p in (2, 4, 8, 16, 32)], path)\n"
        "print(fit_extrap_input(path)['t'].formula)\n"
        "print(int(numpy.__version__.split('.')[0]) >= 2)\n"
        "print(sorted(m for m in sys.modules if m.startswith(('PySide', 'shiboken'))))\n"
        "import importlib.util\n"
        "print(importlib.util.find_spec('PySide6'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "QT_QPA_PLATFORM": ""},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:4] == ["0 + 3 * p", "True", "[]", "None"]


def test_report_shows_models_held_out_error_and_next_scales(tmp_path: Path) -> None:
    from esmperf.report.html import write_report

    page = write_report(study(tmp_path / "rep.duckdb"), tmp_path / "report").read_text()
    section = page[page.index("<section id='scaling-models'>") :]
    assert "<code>2 + 0.5 * log2(p)</code>" in section
    assert "held out 32 ranks: predicted 4.5, measured 4.5 s, error +0.0 %" in section
    assert "<th>at 64 ranks</th><th>at 128 ranks</th>" in section
    assert "<a href='#scaling-models'>Scaling models</a>" in page
    assert "<td>5 [4.99, 5.01] s</td><td>5.5 [5.49, 5.51] s</td>" in section
    flat = write_report(study(tmp_path / "flat.duckdb", ranks=(4,)), tmp_path / "flat").read_text()
    assert "scaling-models" not in flat
    few = write_report(study(tmp_path / "few.duckdb", ranks=(2, 4, 8)), tmp_path / "few")
    page = few.read_text()
    section = page[page.index("<section id='scaling-models'>") :]
    section = section[: section.index("</section>")]
    assert "1 series with fewer than 5 rank counts" in section and "<table>" not in section


def test_few_rank_counts_warned_and_times_never_negative(tmp_path: Path) -> None:
    """3 rank counts: a model with a warning and no held-out check; a time falling with ranks
    (3 - 0.5 log2(p) s) is predicted 0 s where its model goes below 0, not -1 s."""
    falling = Quantity(
        "MPI time in MPI_Wait", "s", {p: [3 - 0.5 * math.log2(p)] for p in (2, 4, 8)}
    )
    series = Series("pop S · openmpi", [falling])
    (found,) = model_series(series, [256])
    assert found.model.formula == "3 - 0.5 * log2(p)"
    assert found.predictions[0].value == 0.0
    assert found.held_out is None
    lines = render_lines(series, [found])
    assert (
        lines[1]
        == "  only 3 rank counts (Extra-P recommends 5): the model is a guess through few points"
    )
    assert lines[-1] == "    held-out check: needs one more rank count"


def test_constant_model_has_no_r2() -> None:
    """Extra-P gives a constant model an adjusted R^2 of 1 by convention: shown as n/a."""
    flat = Quantity(FOM, "s", {p: [5.0, 5.2] for p in (2, 4, 8, 16, 32)})
    (found,) = model_series(Series("pop S · openmpi", [flat]), [256])
    assert (found.model.formula, found.model.terms, found.model.ar2) == ("5.1", [], None)
    assert render_lines(Series("x", [flat]), [found])[2].startswith(
        "    adjusted R^2 n/a (constant), SMAPE 0.00 %; at 256: 5.1 [5, 5.2] s"
    )


def test_bad_rank_counts_are_one_clear_error(tmp_path: Path) -> None:
    store = study(tmp_path / "law.duckdb")
    done = esmperf("predict", str(store), "--ranks", "0,abc")
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "error: --ranks 0,abc: give positive whole rank counts, e.g. --ranks 256,1024"
    )


def test_from_ranks_leaves_the_smaller_runs_out(tmp_path: Path) -> None:
    """--from-ranks 4: the series is modelled on 4-32 ranks (a serial run, which exchanges
    nothing, can be left out); the law still holds there, so the model is the same."""
    store = study(tmp_path / "law.duckdb")
    with Store(store, read_only=True) as opened:
        (series,) = load_series(opened, from_ranks=4)
    assert series.ranks == [4, 8, 16, 32]
    done = esmperf("predict", str(store), "--ranks", "256", "--from-ranks", "4")
    assert done.returncode == 0, done.stderr
    assert "(ranks 4,8,16,32;" in done.stdout
    assert "figure of merit: 2 + 0.5 * log2(p)" in done.stdout
    refused = esmperf("predict", str(store), "--ranks", "256", "--from-ranks", "0")
    assert refused.returncode == 1
    assert refused.stderr.strip() == "error: --from-ranks 0: give a positive rank count, e.g. 2"
