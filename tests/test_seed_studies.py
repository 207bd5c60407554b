"""The seed study files (studies/seeds/*.toml) at the seeds' configurations: each expands and
plans here (what `esmperf study --dry-run` prints: nothing runs), its seed-scale blocks are
simulated on the seed's machine at the seed's rank counts, and every claim of its seed's
reference data that our simulation can check has the configurations it needs in one study of the
seed (its own, or one that adds to it on SimGrid 4.1: pflotran-ns3.toml, esmf-redist-nopack.toml)."""

import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from esmperf.mpi.stacks import discover_stacks
from esmperf.paths import SIMGRID_VARIABLE, repo_root
from esmperf.report.seed_evidence import matches
from esmperf.report.seed_reference import Claim, load_references
from esmperf.study.configuration import Configuration
from esmperf.study.file import load_study
from esmperf.study.plan import plan_study
from esmperf.workloads import load_workloads

STUDIES = Path(__file__).resolve().parents[1] / "studies" / "seeds"
# The seed-scale blocks: (workload, size, ranks per node, machine, rank counts)
SCALE = {
    "cesm": [("cesm", "1deg", 12, "dell-m610", [96, 192, 384])],
    "hycom": [("hycom", "glb0.08", 48, "dell-r815", [48, 96, 144, 192, 288, 384, 504])],
    "pflotran": [("pflotran", "100_100_100", 48, "dell-r815", [48, 96, 192, 384])],
    "homme-pop": [
        ("pop", "tenth", 8, "juropa", [271, 541, 1081, 2162, 2442]),
        ("homme", "ne120", 8, "juropa", [864, 1728, 3456, 13824]),
    ],
    "esmf-redist": [("redist", "M", 1, "none", [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048])],
}
# Claims this study cannot have data for, and why (the rest must find their configurations).
NOT_IN_STUDY = {
    (
        "esmf-redist",
        "large-grid-6-to-12-times",
    ): "the L grid's bundle is 16 GB: not run here, even folded, until redist folds",
}


def as_run(config: Configuration) -> Any:
    """A configuration seen the way seed_claims.matches sees a stored run."""
    return SimpleNamespace(
        workload=config.workload,
        size=config.size,
        stack=config.stack,
        ranks=config.ranks,
        nodes=math.ceil(config.ranks / (config.ranks_per_node or 1))
        if config.stack == "smpi"
        else config.nodes,
        run={"ranks_per_node": config.ranks_per_node, "steps": config.steps},
        knobs=dict(config.knobs),
        options=dict(config.options),
    )


@pytest.fixture(autouse=True)
def seeds_simgrid(monkeypatch: pytest.MonkeyPatch) -> None:
    """The seed studies run on `make setup-simgrid`'s SimGrid (their `simgrid` field): loaded
    as benchmarks/seed_studies.py runs them."""
    monkeypatch.setenv(SIMGRID_VARIABLE, str(repo_root() / ".venv" / "simgrid-4.1"))


def has(configurations: list[Configuration], config: dict[str, Any]) -> bool:
    return any(matches(as_run(c), config) for c in configurations)


def sides(claim: Claim) -> list[dict[str, Any]]:
    if claim.kind == "ratio":
        return [{**claim.at, **claim.baseline}, {**claim.at, **claim.compare}]
    if claim.kind == "scalability":
        base = {k: v for k, v in claim.at.items() if k not in ("ranks", "nodes")}
        return [claim.at, base | ({"ranks": claim.base_ranks} if claim.base_ranks else {})]
    return [claim.at]


@pytest.mark.parametrize("name", sorted(SCALE))
def test_seed_study_plans_at_the_seeds_scale(name: str, tmp_path: Path) -> None:
    study = load_study(STUDIES / f"{name}.toml")
    stacks = discover_stacks().stacks
    if not any(stack.id == "smpi" for stack in stacks):
        pytest.skip("SimGrid SMPI is not installed here (make setup installs it)")
    workloads = load_workloads()
    plan = plan_study(study, stacks, workloads, tmp_path / "dry.duckdb")
    simulated = [p for p in plan if p.config.stack == "smpi"]
    # the only reason to skip: fold = on for a workload that does not fold yet (issue 11)
    skipped = [(p.config.key, p.skip_reason) for p in simulated if p.skip_reason]
    assert [key for key, _ in skipped] == [
        p.config.key
        for p in simulated
        if not workloads[p.config.workload].folds and dict(p.config.knobs)["fold"] == "on"
    ]
    assert all(" does not fold (" in reason for _, reason in skipped)
    for workload, size, per_node, machine, ranks in SCALE[name]:
        block = [
            p
            for p in simulated
            if p.config.workload == workload
            and p.config.size == size
            and p.config.ranks_per_node == per_node
        ]
        assert sorted({p.config.ranks for p in block}) == ranks
        for planned in block:
            knobs = dict(planned.config.knobs)
            assert knobs.get("machine", "none") == machine
            assert knobs["fold"] == ("auto" if workload == "redist" else "on")
            assert planned.nodes == math.ceil(planned.config.ranks / per_node)
            if not planned.skip_reason:
                assert planned.argv[0].endswith("smpirun")
                assert planned.argv[planned.argv.index("-n") + 1] == str(planned.config.ranks)


def seed_studies(seed_id: str) -> list[Any]:
    """The seed's study and those that add to it (`<seed>-*.toml` naming the same seed), the
    latter loaded as on the SimGrid they name (`make setup-simgrid`'s prefix: seeds_simgrid)."""
    studies = [load_study(STUDIES / f"{seed_id}.toml")]
    studies += [load_study(path) for path in sorted(STUDIES.glob(f"{seed_id}-*.toml"))]
    assert all(study.seed == studies[0].seed for study in studies)
    return studies


@pytest.mark.parametrize("reference", load_references(), ids=lambda r: r.id)
def test_every_checkable_claim_has_its_configurations(
    reference: Any,
) -> None:
    studies = seed_studies(reference.id)
    assert reference.names(studies[0].seed)
    missing = []
    for claim in reference.claims:
        if claim.not_modelled or (reference.id, claim.id) in NOT_IN_STUDY:
            continue
        # a claim's sides are compared within one store: one study must have them all
        if not any(all(has(s.configurations, side) for side in sides(claim)) for s in studies):
            missing.append((claim.id, sides(claim)))
    assert missing == []


def test_pflotran_at_the_seeds_scale_steps_as_the_deck() -> None:
    """The seed's deck stepped with its TIME block: every seed-scale PFLOTRAN configuration runs
    the deck's time stepping (its folded runs follow the deck-stepping histories); the local S
    blocks keep fixed steps (the study file says why)."""
    configurations = load_study(STUDIES / "pflotran.toml").configurations
    steppings = {
        (config.stack, config.size, dict(config.options).get("time-stepping", "fixed"))
        for config in configurations
    }
    assert steppings == {("smpi", "100_100_100", "deck"), ("openmpi", "S", "fixed")}
