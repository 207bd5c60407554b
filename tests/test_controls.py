"""A knob compared where it cannot act is a control (report/conditions.py): transport on one
rank must show no effect. One that shows an effect flags the whole study's measurements as
unreliable at the top of the report; one that shows none is said as a control, not as a
finding about the knob. Every comparison says the conditions it was measured under: its
interleaved rounds, the load, and the drift across rounds."""

import math
from pathlib import Path

import pytest

from esmperf.report.analysis import build_groups
from esmperf.report.conditions import drift
from esmperf.report.findings import all_findings
from esmperf.report.html import write_report
from esmperf.store.database import Store
from esmperf.store.results import load_results
from test_study_fixtures import FakeRun, make_store

SHM = {"transport": "shm"}
TCP = {"transport": "tcp"}
STEADY = [5.0, 5.1, 4.9, 5.05, 4.95, 5.02, 4.98]


def findings(tmp_path: Path, runs: list[FakeRun]) -> tuple[list, str]:
    store = make_store(tmp_path / "s.duckdb", runs)
    with Store(store, read_only=True) as opened:
        results = load_results(opened)
        groups = build_groups(results, 1, opened)
    page = write_report(store, tmp_path / "report").read_text()
    return all_findings(groups, results, 2), page


def test_a_control_that_shows_an_effect_flags_the_study(tmp_path: Path) -> None:
    # at 1 rank no message crosses the transport, yet tcp measured 2.5x slower: drift
    runs = [FakeRun(1, STEADY, knobs=SHM), FakeRun(1, [v / 2.5 for v in STEADY], knobs=TCP)]
    found, page = findings(tmp_path, runs)
    alarms = [f for f in found if f.alarm]
    assert len(alarms) == 1
    text = alarms[0].text
    assert text.startswith("Measurements unreliable: pop S: transport=tcp against transport=shm")
    assert "at 1 rank on openmpi, where it cannot act (no message crosses the transport" in text
    assert "measured in blocks, not interleaved" in text
    assert not [f for f in found if f.topic == "knob"]  # not a finding about the knob
    assert page.index("class='alarm'") < page.index("id='overview'")


def test_a_quiet_control_is_said_as_such(tmp_path: Path) -> None:
    runs = [
        FakeRun(1, STEADY, knobs=SHM, rounds=True),
        FakeRun(1, list(reversed(STEADY)), knobs=TCP, rounds=True),
        FakeRun(2, STEADY, knobs=SHM, rounds=True),
        FakeRun(2, [v / 2 for v in STEADY], knobs=TCP, rounds=True),
    ]
    found, page = findings(tmp_path, runs)
    assert not [f for f in found if f.alarm] and "class='alarm'" not in page
    controls = [f.text for f in found if f.text.startswith("Control:")]
    assert len(controls) == 1 and controls[0].endswith("as it must.")
    assert (
        "7 interleaved rounds, 0.1-0.7 cores busy with other work, load average 0.2-6.2"
        in controls[0]
    )
    knob = [f.text for f in found if f.topic == "knob"]
    assert len(knob) == 1 and "at 2 ranks on openmpi" in knob[0]
    assert "at 1 rank" not in knob[0]  # the control is not compared as the knob
    assert (
        "7 interleaved rounds, 0.1-0.7 cores busy with other work, load average 0.2-6.2; drift"
        in knob[0]
    )


def test_drift_is_the_theil_sen_change_from_first_to_last_round() -> None:
    reps = [{"round_number": r, "fom": 10.0 * 1.1**r} for r in range(1, 6)]
    assert drift(reps) == pytest.approx(1.1**4 - 1)
    reps[2]["fom"] = 1000.0  # one outlier does not move the median slope
    assert drift(reps) == pytest.approx(1.1**4 - 1)
    assert drift(reps[:2]) is None  # too few to say
    assert drift([{"round_number": None, "fom": 1.0}] * 5) is None
    assert math.isclose(drift([{"round_number": r, "fom": 3.0} for r in range(4)]), 0.0)
