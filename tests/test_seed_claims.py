"""The seeds' reference data (studies/seeds/reference/*.toml) and their evaluation: every seed's
file parses; each claim kind is evaluated on a synthetic store with exact numbers (written
through the store's own API, as the runner writes it), verdicts exact; a bad file gives one
error naming the file, the claim, its line and the fix; the report shows the section."""

import math
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import header, write_profile
from esmperf.mpi import machines
from esmperf.mpi.smpi_knobs import SMPI_NOT_SIMULATED
from esmperf.profile.read import read_profile
from esmperf.report.analysis import build_groups
from esmperf.report.html import write_report
from esmperf.report.seed_claims import (
    NOT_CHECKABLE,
    NOT_DECIDED,
    NOT_MEASURED,
    NOT_REPRODUCED,
    REPRODUCED,
    Evaluation,
    count,
    evaluate,
    summary_counts,
)
from esmperf.report.seed_evidence import load_evidence
from esmperf.report.seed_reference import (
    KINDS,
    SeedReferenceError,
    load_reference,
    load_references,
    reference_dir,
)
from esmperf.report.seed_report import claim_figures
from esmperf.store.database import Store
from esmperf.store.results import load_results
from esmperf.study.configuration import Configuration, FomSpec, RepeatPolicy
from esmperf.study.plan import PlannedRun
from test_study_fixtures import ENVIRONMENT, _repetition, profile_ranks

SEEDS = ("cesm", "esmf-redist", "homme-pop", "hycom", "pflotran")


@dataclass
class Run:
    ranks: int
    value: float
    stack: str = "smpi"
    knobs: dict[str, str] = field(default_factory=dict)
    ranks_per_node: int | None = 4
    profile: bool = False
    metrics: dict[str, float] = field(default_factory=dict)
    repetitions: tuple[float, ...] = ()  # each measured repetition's value (default: 3 x value)
    options: dict[str, str] = field(default_factory=dict)


# Simulated pop S, 4 ranks per node: GigE stops after 2 nodes, IB keeps scaling.
GIGE = {"platform": "gige"}
IB = {"platform": "ib-qdr"}
RUNS = [
    *(Run(4 * n, v, knobs=GIGE) for n, v in ((1, 10.0), (2, 18.0), (4, 19.0), (8, 18.5))),
    *(Run(4 * n, v, knobs=IB) for n, v in ((1, 10.0), (2, 20.0), (4, 40.0), (8, 76.0))),
    # measured here with profiles (profile_ranks: MPI is 10 % x ranks of the run time, 75 % of
    # it in MPI_Allreduce) and a metric, at 1, 2, 4 and 8 ranks
    *(
        Run(
            r,
            5.0 * r,
            stack="openmpi",
            ranks_per_node=None,
            profile=True,
            metrics={"model.bytes_moved": 1000.0 * r},
        )
        for r in (1, 2, 4, 8)
    ),
]


def make_claims_store(path: Path, runs: list[Run], seed: str) -> Path:
    with Store(path) as store:
        session = store.begin_session(
            ENVIRONMENT,
            {
                "name": "claims",
                "title": "claims",
                "description": "synthetic",
                "seed": seed,
                "base_ranks": None,
                "metric": "fom",
                "source": "test",
                "text": "",
            },
        )
        for position, run in enumerate(runs):
            config = Configuration(
                workload="pop",
                kind="workload",
                ranks=run.ranks,
                stack=run.stack,
                size="S",
                ranks_per_node=run.ranks_per_node,
                knobs=tuple(sorted(run.knobs.items())),
                options=tuple(sorted(run.options.items())),
                fom=FomSpec("json", "steps/s", True),
                repeats=RepeatPolicy(warmup=0, min=3, max=3),
            )
            planned = PlannedRun(config, position, argv=["pop"], cores=2, mpi_library=run.stack)
            store.save_run(planned.run_row("complete", None, session))
            fake = type("Fake", (), {"unit": "steps/s", "ranks": run.ranks})
            values = run.repetitions or (run.value,) * 3
            for rep, value in enumerate(values, start=1):
                store.add_repetition(
                    _repetition(config.key, rep, "measure", session, value, fake),
                    {"fom.value": value, **run.metrics},
                )
            if run.profile:
                profile = write_profile(
                    path.parent / f"{config.key}.jsonl", header(run.ranks), profile_ranks(run.ranks)
                )
                store.add_repetition(
                    _repetition(config.key, len(values) + 1, "profile", session, 1.0, fake),
                    {},
                    read_profile(profile),
                )
    return path


CLAIMS = """
id = "synthetic"
title = "A synthetic seed"
seed_file = "none.txt"
tolerance = 0.1

[[claim]]
id = "ib-over-gige"
kind = "ratio"
text = "IB 2x GigE at 4 nodes"
source = "slide 1"
value = 2.0
at = { workload = "pop", nodes = 4, ranks_per_node = 4 }
baseline = { platform = "gige" }
compare = { platform = "ib-qdr" }

[[claim]]
id = "ib-over-gige-325"
kind = "ratio"
text = "Up to 325% higher performance than 1GigE at 4-node"
source = "slide 2"
value = 4.25
at = { workload = "pop", nodes = 4, ranks_per_node = 4 }
baseline = { platform = "gige" }
compare = { platform = "ib-qdr" }

[[claim]]
id = "ib-up-to"
kind = "ratio"
text = "IB up to +300 % over GigE"
source = "slide 2"
value = 4.0
up_to = true
at = { workload = "pop", ranks_per_node = 4 }
baseline = { platform = "gige" }
compare = { platform = "ib-qdr" }

[[claim]]
id = "ib-over-10gige"
kind = "ratio"
text = "IB over 10GigE"
source = "slide 3"
value = 1.78
at = { workload = "pop", nodes = 4, ranks_per_node = 4 }
baseline = { platform = "10gige" }
compare = { platform = "ib-qdr" }

[[claim]]
id = "gige-stops"
kind = "stops_scaling"
text = "GigE stops scaling after 2 nodes"
source = "slide 4"
value = 2
at = { workload = "pop", ranks_per_node = 4, platform = "gige" }

[[claim]]
id = "ib-stops"
kind = "stops_scaling"
text = "IB stops after 2 nodes"
source = "slide 4"
value = 2
at = { workload = "pop", ranks_per_node = 4, platform = "ib-qdr" }

[[claim]]
id = "gige-stops-16"
kind = "stops_scaling"
text = "GigE stops after 16 nodes"
source = "slide 4"
value = 16
at = { workload = "pop", ranks_per_node = 4, platform = "gige" }

[[claim]]
id = "ib-trend"
kind = "trend"
text = "InfiniBand keeps scaling"
source = "slide 5"
from_chart = true
quantity = "performance"
direction = "increases"
at = { workload = "pop", ranks_per_node = 4, platform = "ib-qdr" }

[[claim]]
id = "ib-scalability"
kind = "scalability"
text = "95 % scalability at 32"
source = "figure 2"
value = 0.95
base_ranks = 4
at = { workload = "pop", ranks = 32, ranks_per_node = 4, platform = "ib-qdr" }

[[claim]]
id = "ib-scalability-bound"
kind = "scalability"
text = "more than 97 % at 32"
source = "figure 2"
bound = "at_least"
value = 0.97
base_ranks = "smallest"
at = { workload = "pop", ranks = 32, ranks_per_node = 4, platform = "ib-qdr" }

[[claim]]
id = "allreduce-time-8"
kind = "share"
text = "MPI_Allreduce 75 % of MPI time at 8"
source = "profile"
quantity = "time_share:MPI_Allreduce"
value = 75
at = { workload = "pop", ranks = 8, stack = "openmpi" }

[[claim]]
id = "isend-calls"
kind = "share"
text = "MPI_Isend 40 % of calls"
source = "profile"
quantity = "call_share:MPI_Isend"
value = 40
at = { workload = "pop", stack = "openmpi" }

[[claim]]
id = "small-4k"
kind = "share"
text = "most messages below 1 KiB"
source = "profile"
quantity = "small_messages:1024"
bound = "at_least"
value = 50
at = { workload = "pop", ranks = 4, stack = "openmpi" }

[[claim]]
id = "allreduce-top"
kind = "value"
text = "Allreduce takes the most time"
source = "profile"
quantity = "time_rank:MPI_Allreduce"
bound = "at_most"
value = 1
at = { workload = "pop", ranks = 4, stack = "openmpi" }

[[claim]]
id = "modal-size"
kind = "value"
text = "highest concentration below 64 B"
source = "profile"
quantity = "modal_message_bytes"
bound = "at_most"
value = 64
at = { workload = "pop", ranks = 4, stack = "openmpi" }

[[claim]]
id = "crossover"
kind = "crossover"
text = "Compute time crosses over communication time at 8 ranks"
source = "profile"
value = 8
over = "ranks"
at = { workload = "pop", stack = "openmpi" }

[[claim]]
id = "crossover-early"
kind = "crossover"
text = "crosses at 2"
source = "profile"
value = 2
over = "ranks"
at = { workload = "pop", stack = "openmpi" }

[[claim]]
id = "bytes-per-rank-falls"
kind = "trend"
text = "data per rank drops"
source = "profile"
quantity = "bytes_per_rank"
direction = "decreases"
over = "ranks"
at = { workload = "pop", stack = "openmpi" }

[[claim]]
id = "bytes-moved-4"
kind = "value"
text = "Table 1: 4 processors, 4000 bytes"
source = "Table 1"
quantity = "metric:model.bytes_moved"
value = 4000
tolerance = 0
at = { workload = "pop", ranks = 4, stack = "openmpi" }

[[claim]]
id = "bytes-moved-8"
kind = "value"
text = "Table 1: 8 processors, 8001 bytes"
source = "Table 1"
quantity = "metric:model.bytes_moved"
value = 8001
tolerance = 0
at = { workload = "pop", ranks = 8, stack = "openmpi" }

[[claim]]
id = "mpi-share-simulated"
kind = "share"
text = "MPI 50 % at 4 nodes"
source = "profile"
quantity = "mpi_share"
value = 50
at = { workload = "pop", nodes = 4, ranks_per_node = 4 }

[[claim]]
id = "knem"
kind = "ratio"
text = "KNEM +4 % at 16 ranks"
source = "slide 6"
value = 1.04
at = { workload = "pop", ranks = 16, ranks_per_node = 4 }
baseline = { single_copy = "off" }
compare = { single_copy = "on" }

[[claim]]
id = "dual-rail"
kind = "ratio"
text = "dual rail up to +47 %"
source = "slide 7"
value = 1.47
up_to = true
at = { workload = "pop", ranks_per_node = 4 }
not_modelled = "dual rail is not a simulated platform"
"""


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Evaluation]]:
    directory = tmp_path_factory.mktemp("claims")
    reference_file = directory / "synthetic.toml"
    reference_file.write_text(CLAIMS)
    reference = load_reference(reference_file)
    path = make_claims_store(directory / "claims.duckdb", RUNS, "A synthetic seed")
    with Store(path, read_only=True) as store:
        results = load_results(store)
        groups = build_groups(results, None, store)
        profiles = {k: p for g in groups for k, p in g.profiles.items()}
        evaluations = evaluate(reference, load_evidence(store, results, profiles))
    by_claim: dict[str, list[Evaluation]] = {}
    for evaluation in evaluations:
        by_claim.setdefault(evaluation.claim.id, []).append(evaluation)
    assert list(by_claim) == [claim.id for claim in reference.claims]  # every claim evaluated
    return by_claim


def one(evaluated: dict[str, list[Evaluation]], claim: str) -> Evaluation:
    assert len(evaluated[claim]) == 1, evaluated[claim]
    return evaluated[claim][0]


def test_every_seed_reference_parses() -> None:
    references = load_references()
    assert [r.id for r in references] == list(SEEDS)
    assert {p.stem for p in reference_dir().glob("*.toml")} == set(SEEDS)
    counts = {r.id: len(r.claims) for r in references}
    assert counts == {"cesm": 18, "esmf-redist": 23, "homme-pop": 9, "hycom": 10, "pflotran": 20}
    # the seeds themselves are beside the checkout (../shared/seeds), or beside its worktrees
    root = Path(__file__).resolve().parents[1]
    seeds = next(
        (
            p
            for p in (root.parent / "shared" / "seeds", root.parent.parent / "shared" / "seeds")
            if p.is_dir()
        ),
        None,
    )
    for reference in references:
        if seeds is not None:  # every quote is in its seed (a table row is not quoted whole)
            text = " ".join((seeds / reference.seed_file).read_text().split())
            text = text.replace("\\_", "_")
            for claim in reference.claims:
                if not claim.text.startswith("Table"):
                    for piece in claim.text.split(" ... "):
                        assert piece.split(" - ")[-1] in text, (reference.id, claim.id, piece)


def test_ratio_claims(evaluated: dict[str, list[Evaluation]]) -> None:
    ratio = one(evaluated, "ib-over-gige")  # 40 / 19 at 4 nodes
    assert (ratio.verdict, ratio.ours, ratio.seed) == (REPRODUCED, 40 / 19, 2.0)
    assert ratio.ratio == pytest.approx(40 / 19 / 2.0, abs=0)
    assert "16 ranks (4 nodes)" in ratio.configuration
    far = one(evaluated, "ib-over-gige-325")
    assert far.verdict == NOT_REPRODUCED and far.ours == 40 / 19
    assert "beyond the 10% tolerance" in far.why and "simulated (SimGrid SMPI" in far.why
    up_to = one(evaluated, "ib-up-to")  # the largest of 4 points: 76 / 18.5 at 8 nodes
    assert (up_to.verdict, up_to.ours) == (REPRODUCED, 76 / 18.5)
    assert "the largest of 4 points" in up_to.configuration
    missing = one(evaluated, "ib-over-10gige")
    assert missing.verdict == NOT_MEASURED and missing.ours is None
    assert missing.configuration == "pop, 4 nodes, 4 per node, platform=10gige"


def test_curve_claims(evaluated: dict[str, list[Evaluation]]) -> None:
    stops = one(evaluated, "gige-stops")  # 10, 18, 19 (< 18 x 1.1), 18.5
    assert (stops.verdict, stops.ours) == (REPRODUCED, 2)
    ib = one(evaluated, "ib-stops")
    assert (ib.verdict, ib.ours) == (NOT_REPRODUCED, 8)
    assert "still gains more than 10% at 8 nodes" in ib.why
    beyond = one(evaluated, "gige-stops-16")
    assert beyond.verdict == NOT_MEASURED and "no point beyond the seed's 16" in beyond.why
    trend = one(evaluated, "ib-trend")
    assert (trend.verdict, trend.ours) == (REPRODUCED, 7.6)
    cross = one(evaluated, "crossover")  # MPI share 10 % x ranks: 80 % at 8 ranks
    assert (cross.verdict, cross.ours) == (REPRODUCED, 8)
    early = one(evaluated, "crossover-early")
    assert (early.verdict, early.ours) == (NOT_REPRODUCED, 8)
    falls = one(evaluated, "bytes-per-rank-falls")  # every rank moves the same bytes
    assert (falls.verdict, falls.ours) == (NOT_REPRODUCED, 1.0)
    assert (count(1, "nodes"), count(2, "nodes"), count(8.0, "ranks")) == (
        "1 node",
        "2 nodes",
        "8 ranks",
    )


def test_scalability_claims(evaluated: dict[str, list[Evaluation]]) -> None:
    scalability = one(evaluated, "ib-scalability")  # (76 / 32) / (10 / 4)
    assert (scalability.verdict, scalability.ours) == (REPRODUCED, (76 / 32) / (10 / 4))
    bound = one(evaluated, "ib-scalability-bound")
    assert (bound.verdict, bound.ours) == (NOT_REPRODUCED, (76 / 32) / (10 / 4))
    assert "is below the seed's 97 %" in bound.why


def test_profile_and_metric_claims(evaluated: dict[str, list[Evaluation]]) -> None:
    share = one(evaluated, "allreduce-time-8")
    assert (share.verdict, share.ours) == (REPRODUCED, 75.0)
    calls = one(evaluated, "isend-calls")  # held at the largest profiled run: 100 of 210
    assert (calls.verdict, calls.ours) == (NOT_REPRODUCED, 100 * 100 / 210)
    assert "8 ranks" in calls.configuration
    small = one(evaluated, "small-4k")  # 10 Allreduces of 8 B, 100 Isends of 1 KiB per rank
    assert (small.verdict, small.ours) == (NOT_REPRODUCED, 100 * 10 / 110)
    assert (one(evaluated, "allreduce-top").verdict, one(evaluated, "allreduce-top").ours) == (
        REPRODUCED,
        1.0,
    )
    modal = one(evaluated, "modal-size")  # 1 KiB messages: the bucket below 2 KiB
    assert (modal.verdict, modal.ours) == (NOT_REPRODUCED, 2048.0)
    assert (one(evaluated, "bytes-moved-4").verdict, one(evaluated, "bytes-moved-4").ours) == (
        REPRODUCED,
        4000.0,
    )
    assert (one(evaluated, "bytes-moved-8").verdict, one(evaluated, "bytes-moved-8").ours) == (
        NOT_REPRODUCED,
        8000.0,
    )
    simulated = one(evaluated, "mpi-share-simulated")
    assert simulated.verdict == NOT_MEASURED
    assert "the simulated runs were not profiled" in simulated.why


def test_claims_the_simulation_cannot_check(evaluated: dict[str, list[Evaluation]]) -> None:
    # the study also has pop runs measured here (where single_copy exists), so the missing
    # run is only not measured; a run without the knob has its baseline (on)
    knem = one(evaluated, "knem")
    assert knem.verdict == NOT_MEASURED
    assert knem.configuration == "pop, 16 ranks, 4 per node, single_copy=off"
    rail = one(evaluated, "dual-rail")
    assert (rail.verdict, rail.why) == (NOT_CHECKABLE, "dual rail is not a simulated platform.")
    counts = summary_counts([e for items in evaluated.values() for e in items])
    assert counts == {
        REPRODUCED: 9,
        NOT_REPRODUCED: 9,
        NOT_DECIDED: 0,
        NOT_MEASURED: 4,
        NOT_CHECKABLE: 1,
    }


def test_a_knob_smpi_does_not_simulate_is_not_checkable(tmp_path: Path) -> None:
    reference_file = tmp_path / "knem.toml"
    start = CLAIMS.index('[[claim]]\nid = "knem"')
    end = CLAIMS.index('[[claim]]\nid = "dual-rail"')
    reference_file.write_text(CLAIMS[: CLAIMS.index("[[claim]]")] + CLAIMS[start:end])
    path = make_claims_store(tmp_path / "s.duckdb", RUNS[:8], "A synthetic seed")
    with Store(path, read_only=True) as store:
        results = load_results(store)
        [knem] = evaluate(load_reference(reference_file), load_evidence(store, results, {}))
    assert (knem.verdict, knem.why) == (NOT_CHECKABLE, SMPI_NOT_SIMULATED["single_copy"] + ".")


def test_a_preconnect_limit_comes_from_the_run_s_node_model(tmp_path: Path) -> None:
    """ "Beyond 8000 cores the memory cannot hold all connections": the rank count above which
    pre-connected ranks stop fitting the simulated node (machines.py), not a figure of merit."""
    reference_file = tmp_path / "connections.toml"
    reference_file.write_text(
        CLAIMS[: CLAIMS.index("[[claim]]")]
        + """[[claim]]
id = "preconnect"
kind = "value"
text = "beyond 8000 cores the memory cannot hold all connections"
source = "section 1"
value = 8000
at = { workload = "pop", ranks_per_node = 8, machine = "juropa" }
quantity = "preconnect_limit"
"""
    )
    juropa = {"platform": "ib-qdr", "machine": "juropa"}
    runs = [Run(r, 1.0 * r, knobs=juropa, ranks_per_node=8) for r in (64, 128)]
    path = make_claims_store(tmp_path / "s.duckdb", runs, "A synthetic seed")
    with Store(path, read_only=True) as store:
        results = load_results(store)
        [claim] = evaluate(load_reference(reference_file), load_evidence(store, results, {}))
    limit = machines.machine("juropa").preconnect_limit(8)  # 24 GB / 8 ranks / 0.55 MB + 1
    assert limit == 5455
    assert (claim.verdict, claim.ours) == (NOT_REPRODUCED, float(limit))


def evaluate_one(tmp_path: Path, claim: str, runs: list[Run]) -> list[Evaluation]:
    """One claim (its [[claim]] table) of the synthetic seed held against a store of `runs`."""
    reference_file = tmp_path / "one.toml"
    reference_file.write_text(CLAIMS[: CLAIMS.index("[[claim]]")] + claim)
    path = make_claims_store(tmp_path / "s.duckdb", runs, "A synthetic seed")
    with Store(path, read_only=True) as store:
        results = load_results(store)
        profiles = {k: p for g in build_groups(results, None, store) for k, p in g.profiles.items()}
        return evaluate(load_reference(reference_file), load_evidence(store, results, profiles))


def test_writes_with_no_read_are_more_writes_than_reads(tmp_path: Path) -> None:
    """The profiled runs write 200 B (rank 0) and read nothing: infinitely more writes than
    reads, which a claim of "more writes than reads" holds; the unprofiled run has no
    figure and is not held."""
    found = evaluate_one(
        tmp_path,
        """
[[claim]]
id = "more-writes"
kind = "value"
text = "more writes than reads"
source = "slide 11"
quantity = "io_write_over_read"
bound = "at_least"
value = 1
at = { workload = "pop" }
""",
        [Run(2, 1.0, stack="openmpi", ranks_per_node=None, profile=True), Run(8, 2.0, knobs=IB)],
    )
    assert [(e.verdict, e.ours) for e in found] == [(REPRODUCED, math.inf)]
    assert "ours ∞ is at least the seed's 1" in found[0].why


def test_a_ratio_over_node_counts_pairs_the_runs_of_one_curve(tmp_path: Path) -> None:
    """Nodes 2 over nodes 1 at 4 ranks per node: the two runs differ in their rank count too."""
    [ib] = evaluate_one(
        tmp_path,
        """
[[claim]]
id = "ib-doubles"
kind = "ratio"
text = "IB doubles from 1 to 2 nodes"
source = "slide 9"
value = 2.0
at = { workload = "pop", ranks_per_node = 4, platform = "ib-qdr" }
baseline = { nodes = 1 }
compare = { nodes = 2 }
""",
        RUNS[:8],
    )
    assert (ib.verdict, ib.ours) == (REPRODUCED, 2.0)  # 20 over 10 steps/s


IB_OVER_GIGE = """
[[claim]]
id = "ib-over-gige"
kind = "ratio"
text = "IB 2x GigE at 2 nodes"
source = "slide 9"
value = 2.0
at = { workload = "pop", nodes = 2, ranks_per_node = 4 }
baseline = { platform = "gige" }
compare = { platform = "ib-qdr" }
"""


def band_evaluations(tmp_path: Path, low: float, high: float) -> list[Evaluation]:
    """ "IB 2x GigE at 2 nodes" held against GigE simulated as TCP (network_model = cm02-tcp)
    at both ends of the switch-buffer band (performance `low` and `high`), IB as CM02 (20)."""
    tcp = {"platform": "gige", "network_model": "cm02-tcp"}
    runs = [
        Run(8, high, knobs={**tcp, "switch_buffer": "high"}),
        Run(8, low, knobs={**tcp, "switch_buffer": "low"}),
        Run(8, 20.0, knobs=IB),
    ]
    return evaluate_one(
        tmp_path,
        IB_OVER_GIGE,
        runs,
    )


def test_an_interconnect_claim_holds_each_end_of_the_tcp_band(tmp_path: Path) -> None:
    """A claim that varies the platform pairs each GigE end with the same IB run (how a
    platform is simulated is part of it), one evaluation each; the claim is reproduced only
    if it holds across the band."""
    found = band_evaluations(tmp_path, low=5.0, high=10.0)
    assert sorted((e.ours, e.verdict) for e in found) == [
        (2.0, REPRODUCED),
        (4.0, NOT_REPRODUCED),
    ]
    # one end reproduces: the band reaches both verdicts, the switch buffer decides
    assert summary_counts(found)[NOT_DECIDED] == 1
    assert {e.band[1] for e in found} == {"switch_buffer=low", "switch_buffer=high"}
    assert len({e.band[0] for e in found}) == 1


def test_an_offload_claim_holds_each_end_of_the_noise_band(tmp_path: Path) -> None:
    """ "FCA 2x at 2 nodes" against runs at both ends of the OS-noise band: each end's offloaded
    run is paired with the same end's CPU run, the two pairs are one band; a run with no
    offloaded counterpart (no noise) is not paired."""
    low, high = {**IB, "noise": "linux-2007-low"}, {**IB, "noise": "linux-2007-high"}
    runs = [
        Run(8, 10.0, knobs=low),
        Run(8, 12.0, knobs={**low, "offload": "fca"}),
        Run(8, 9.0, knobs=high),
        Run(8, 15.0, knobs={**high, "offload": "fca"}),
        Run(8, 11.0, knobs=IB),
    ]
    found = evaluate_one(
        tmp_path,
        """
[[claim]]
id = "fca-gain"
kind = "ratio"
text = "FCA 2x at 2 nodes"
source = "slide 10"
value = 2.0
at = { workload = "pop", nodes = 2, ranks_per_node = 4, platform = "ib-qdr" }
baseline = { offload = "none" }
compare = { offload = "fca" }
""",
        runs,
    )
    assert sorted(round(e.ours, 4) for e in found) == [1.2, round(15 / 9, 4)]
    assert {e.band[1] for e in found} == {"noise=linux-2007-low", "noise=linux-2007-high"}
    assert len({e.band[0] for e in found}) == 1
    # both ends below the seed's x2 by more than its 10 %: the band agrees
    assert summary_counts(found)[NOT_REPRODUCED] == 1


def test_the_hosts_cost_per_message_is_a_band_paired_end_with_end(tmp_path: Path) -> None:
    """ "IB 2x GigE at 2 nodes" with the host's cost per message at both ends of its published
    figures: each IB end is paired with the GigE runs at the same end (at both switch-buffer
    ends), never across ends; the four pairs are one band, with the runs without the cost (the
    plain IB run and its GigE counterparts) a band of their own."""
    tcp = {"platform": "gige", "network_model": "cm02-tcp"}
    eager = {"eager_limit": "mpi", "collectives": "ompi"}
    runs = [Run(8, 20.0, knobs=IB), Run(8, 10.0, knobs={**tcp, "switch_buffer": "low"})]
    for end, ib, gige in (("low", 18.0, 9.0), ("high", 16.0, 4.0)):
        runs.append(Run(8, ib, knobs={**IB, **eager, "host_overhead": end}))
        for buffer in ("low", "high"):
            gige_knobs = {**tcp, **eager, "switch_buffer": buffer, "host_overhead": end}
            runs.append(Run(8, gige, knobs=gige_knobs))
    found = evaluate_one(
        tmp_path,
        IB_OVER_GIGE,
        runs,
    )
    with_cost = [e for e in found if "host_overhead" in e.band[1]]
    assert sorted(e.ours for e in with_cost) == [2.0, 2.0, 4.0, 4.0]  # 18/9 twice, 16/4 twice
    assert {e.band[1] for e in with_cost} == {
        f"host_overhead={h}, switch_buffer={b}" for b in ("low", "high") for h in ("low", "high")
    }
    assert len({e.band[0] for e in with_cost}) == 1
    assert [e.ours for e in found if "host_overhead" not in e.band[1]] == [2.0]


def test_a_workload_option_and_the_file_system_are_bands(tmp_path: Path) -> None:
    """ "IB 2x GigE at 2 nodes" with cesm's measured cost (`cost`, a workload option whose
    values cesm-low and cesm-high are a band's ends) and the file system's band: each IB run is
    paired with the GigE run at the same ends; the four pairs are one band, and a run at the
    proxy's own cost (not a band end) is a configuration of its own."""
    runs = []
    for cost, ib, gige in (("cesm-low", 20.0, 10.0), ("cesm-high", 16.0, 4.0), ("proxy", 9, 9)):
        for fs in ("nfs-low", "nfs-high") if cost != "proxy" else ("none",):
            knobs = {"file_system": fs} if fs != "none" else {}
            runs.append(Run(8, ib, knobs={**IB, **knobs}, options={"cost": cost}))
            runs.append(Run(8, gige, knobs={"platform": "gige", **knobs}, options={"cost": cost}))
    found = evaluate_one(tmp_path, IB_OVER_GIGE, runs)
    banded = [e for e in found if e.band[0]]
    assert sorted(e.ours for e in banded) == [2.0, 2.0, 4.0, 4.0]
    assert {e.band[1] for e in banded} == {
        f"file_system={fs}, cost={cost}"
        for fs in ("nfs-low", "nfs-high")
        for cost in ("cesm-low", "cesm-high")
    }
    assert len({e.band[0] for e in banded}) == 1
    assert [e.ours for e in found if not e.band[0]] == [1.0]
    # the band: one end reproduces (x2), the other not (x4), not decided; the proxy's x1 misses
    assert summary_counts([e for e in found if e.band[0]])[NOT_DECIDED] == 1
    assert summary_counts(found)[NOT_REPRODUCED] == 1


@pytest.mark.parametrize(
    ("low", "high", "verdict"),
    [
        (10.0, 10.0, REPRODUCED),  # x2 at both ends
        (2.0, 40.0, NOT_DECIDED),  # x10 and x0.5: the seed's x2 lies between the ends
        (4.0, 8.0, NOT_REPRODUCED),  # x5 and x2.5: both above
        (20.0, 9.0, NOT_DECIDED),  # x1 and x2.2 (within 10 %): one end reproduces
    ],
)
def test_a_band_is_decided_only_when_its_ends_agree(
    tmp_path: Path, low: float, high: float, verdict: str
) -> None:
    found = band_evaluations(tmp_path, low, high)
    assert summary_counts(found)[verdict] == 1


def test_every_kind_is_covered() -> None:
    kinds = {line.split('"')[1] for line in CLAIMS.splitlines() if line.startswith("kind")}
    assert kinds == set(KINDS)


BAD = [
    ("valu = 2.0", "unknown key 'valu' in a claim (did you mean 'value'?)"),
    ('value = "two"', "`value` must be a number"),
    ('kind = "ratios"', "`kind` must be one of ratio, share"),
    (
        'baseline = { platform = "gigE" }',
        "baseline.platform = 'gigE' is not a value of the knob platform",
    ),
    ('baseline = { interconnect = "gige" }', "unknown key 'interconnect' in `baseline`"),
    ('quantity = "time_share"', "unknown quantity 'time_share'"),
    ("tolerance = 10", "tolerance must be a fraction between 0 and 1"),
    ("compare = { ranks = 8 }", "`baseline` and `compare` must set the same keys"),
]


@pytest.mark.parametrize("line, message", BAD)
def test_bad_reference_data_gives_one_clear_error(tmp_path: Path, line: str, message: str) -> None:
    good = (
        'id = "x"\ntitle = "X"\nseed_file = "x.txt"\n\n[[claim]]\nid = "first"\n'
        'kind = "ratio"\n'
        'text = "t"\nsource = "s"\nvalue = 2.0\nat = { nodes = 4 }\n'
        'baseline = { platform = "gige" }\ncompare = { platform = "ib-qdr" }\n'
    )
    key = line.split(" =")[0]
    lines = [
        ln for ln in good.splitlines() if not ln.startswith(key + " =") or ln.startswith("id =")
    ]
    if key == "valu":
        lines = [ln for ln in lines if not ln.startswith("value =")]
    lines.insert(9, line)
    path = tmp_path / "bad.toml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(SeedReferenceError) as error:
        load_reference(path)
    text = str(error.value)
    assert text.startswith(f"{path}: claim 'first' (line 6): "), text
    assert message in text


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text("id = \n")
    with pytest.raises(SeedReferenceError, match=f"{path} is not valid TOML"):
        load_reference(path)


def test_report_holds_the_study_against_its_seed(tmp_path: Path) -> None:
    path = make_claims_store(
        tmp_path / "hycom.duckdb",
        RUNS,
        "HYCOM Performance Benchmark and Profiling, HPC Advisory Council, January 2011",
    )
    page = write_report(path).read_text()
    assert "<section id='seed-claims'><h2>The seed's claims</h2>" in page
    assert "10 claims of “HYCOM Performance Benchmark and Profiling" in page
    assert "“GigE stops scaling after 2 nodes (Extremely slow with 3+ nodes)”" in page
    # dual rail is simulated since the rails knob (docs/simulate.md, "Links as built")
    assert "not checkable by our simulation: dual rail" not in page
    assert "“Dual InfiniBand Cards enable up to 9% better performance”" in page
    other = make_claims_store(tmp_path / "other.duckdb", RUNS, "no such seed")
    page = write_report(other).read_text()
    assert "names the seed “no such seed”, which has no reference data" in page
    page = write_report(make_claims_store(tmp_path / "none.duckdb", RUNS, "")).read_text()
    assert "seed-claims" not in page  # a study that names no seed has no such section


def test_a_broken_reference_file_is_said_in_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import esmperf.report.seed_report as seed_report

    def broken() -> None:
        raise SeedReferenceError("studies/seeds/reference/x.toml: claim 'y' (line 3): bad")

    monkeypatch.setattr(seed_report, "load_references", broken)
    path = make_claims_store(tmp_path / "s.duckdb", RUNS[:2], "hycom")
    page = write_report(path).read_text()
    assert (
        "<p class='bad'>studies/seeds/reference/x.toml: claim &#x27;y&#x27; (line 3): bad" in page
    )


def test_the_seeds_figures_beside_ours(tmp_path: Path) -> None:
    (tmp_path / "synthetic.toml").write_text(CLAIMS)
    reference = load_reference(tmp_path / "synthetic.toml")
    path = make_claims_store(tmp_path / "claims.duckdb", RUNS, "A synthetic seed")
    with Store(path, read_only=True) as store:
        results = load_results(store)
        evidence = load_evidence(store, results, {})
        figures = claim_figures(reference, evaluate(reference, evidence), evidence)
    assert [f.id for f in figures] == [
        "seed-synthetic-claims",
        "seed-synthetic-gains",
        "seed-synthetic-pop-scalability",
    ]
    gains = figures[1].svg.decode()
    for label in ("+100%", "+111%", "+325%", "+300%", "+311%", "the seed's (stated)"):
        assert label in gains, label
    scalability = figures[2].svg.decode()
    assert "seed (stated)" in scalability
    assert "ours: smpi · platform=ib-qdr (base 4)" in scalability
