"""What a seed's claims are evaluated on (seed_claims.py): a study's measured runs, their
profiles and metrics; which runs match a claim's configuration (every key the claim gives is
equal; a knob a run does not set counts as its baseline value); and the quantities a claim
reads from one run (performance, MPI and function shares, message sizes, bytes, metrics), with
the confidence interval of those measured over repetitions."""

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from esmperf import stats
from esmperf.mpi import machines
from esmperf.mpi.knobs import KNOBS
from esmperf.report.profile_data import ProfileData
from esmperf.store.database import Store
from esmperf.store.result_keys import current_name
from esmperf.store.results import RunResult

PROFILE_QUANTITIES = (
    "mpi_share",
    "bytes_per_rank",
    "transfer",
    "io_write_over_read",
    "modal_message_bytes",
    "max_bytes_per_rank",
    "time_rank:",
    "time_share:",
    "call_share:",
    "small_messages:",
)


@dataclass
class Evidence:
    """What claims are evaluated on: a store's results, profiles and per-run metrics."""

    results: list[RunResult]
    profiles: dict[str, ProfileData] = field(default_factory=dict)  # by run key
    # run key -> metric name -> the measured repetitions' values
    metrics: dict[str, dict[str, list[float]]] = field(default_factory=dict)

    @property
    def measured(self) -> list[RunResult]:
        return [r for r in self.results if r.summary is not None]


def load_evidence(
    store: Store, results: list[RunResult], profiles: dict[str, ProfileData]
) -> Evidence:
    """The metrics of the measured repetitions of `results`, with the results and profiles."""
    measured = {
        (r.key, rep["rep"])
        for r in results
        for rep in r.repetitions
        if rep["kind"] == "measure" and rep["status"] == "ok"
    }
    workload = {r.key: r.workload for r in results}
    metrics: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in store.rows("SELECT run_key, rep, name, value FROM metric ORDER BY run_key, rep"):
        if (row["run_key"], row["rep"]) in measured and row["value"] is not None:
            name = current_name(workload[row["run_key"]], row["name"])  # stores before issue 14
            metrics[row["run_key"]][name].append(float(row["value"]))
    return Evidence(results, profiles, {k: dict(v) for k, v in metrics.items()})


@dataclass(frozen=True)
class Interval:
    """Where our figure lies at a stated confidence (from the measured repetitions)."""

    low: float
    high: float
    confidence: float  # the confidence it really has (stats.py: exact, may exceed the target)
    repetitions: tuple[int, ...]  # per side: (baseline, compared), or (n,) for one run


# --- matching --------------------------------------------------------------------------------


def matches(result: RunResult, config: dict[str, Any]) -> bool:
    """Whether a run has every setting of a claim's configuration."""
    for key, value in config.items():
        if key == "options":
            if any(result.options.get(k) != str(v) for k, v in value.items()):
                return False
        elif key in ("workload", "size", "stack") or key in ("ranks", "nodes"):
            if getattr(result, key) != value:
                return False
        elif key in ("ranks_per_node", "steps"):
            if result.run.get(key) != value:
                return False
        elif result.knobs.get(key, KNOBS[key].baseline) != value:
            return False
    return True


def describe(config: dict[str, Any]) -> str:
    """ "hycom, 504 ranks, 48 per node, platform=10gige"."""
    parts = [str(config[k]) for k in ("workload", "size", "stack") if k in config]
    if "ranks" in config:
        parts.append(f"{config['ranks']} ranks")
    if "nodes" in config:
        parts.append(f"{config['nodes']} nodes")
    if "ranks_per_node" in config:
        parts.append(f"{config['ranks_per_node']} per node")
    if "steps" in config:
        parts.append(f"steps={config['steps']}")
    parts += [f"{k}={v}" for k, v in config.items() if k in KNOBS]
    parts += [f"{k}={v}" for k, v in config.get("options", {}).items()]
    return ", ".join(parts) or "any configuration"


# How an interconnect is simulated: a claim that varies the platform compares each of these
# settings of one side with the other side's (GigE as TCP at both ends of its switch-buffer
# band, each against the same InfiniBand run: the claim's band, docs/seeds.md).
PLATFORM_MODEL_KNOBS = frozenset({"network_model", "switch_buffer", "tcp_kernel"})


def curve_key(result: RunResult, drop: set[str], drop_point: bool = False) -> str:
    """The run's identity without the settings a claim varies (and without its rank count:
    the runs of one curve share it; a claim that varies the node count varies the rank count
    with it, at the same ranks per node); varying the platform varies how it is simulated,
    SimGrid included (CM02's figures are the same to the bit under 3.32 and 4.1 up to 3,456
    ranks, docs/simulate.md "SimGrid 4.1")."""
    identity = json.loads(result.identity)
    if "platform" in drop:
        drop = drop | PLATFORM_MODEL_KNOBS
        identity.pop("simgrid", None)  # its SimGrid too (ns3 runs on `make setup-simgrid`'s)
    for key in drop:
        if key.startswith("options."):
            identity.get("options", {}).pop(key.split(".", 1)[1], None)
        elif key in KNOBS:
            identity["knobs"].pop(key, None)
        else:
            identity.pop(key, None)
    if drop_point or "nodes" in drop:
        identity.pop("ranks", None)
    return json.dumps(identity, sort_keys=True)


# The knobs whose values are the ends of a model parameter's sourced range (a band): a claim
# is held against each end, and its verdict is the band's (seed_verdicts.band_verdict). The
# switch buffer's ends are `low` and `high`; OS noise's are a source's two signatures (the seed
# studies run linux-2007-low and linux-2007-high: Tsafrir's 0.5-1.5 % of a core, mpi/noise.py);
# the host's cost per message `low` and `high`, the published figures' ends (mpi/host_overhead.py);
# the file system's `nfs-low` and `nfs-high` (mpi/file_system.py). And the workload options
# that are bands: cesm's `cost`, CESM 1.0.3's measured cost at `cesm-low` and `cesm-high`
# (docs/cesm.md "What the components cost").
BAND_KNOBS = frozenset({"switch_buffer", "noise", "host_overhead", "file_system"})
BAND_OPTIONS = {"cost": ("cesm-low", "cesm-high")}


def band_of(*runs: RunResult, drop_point: bool = False) -> tuple[str, str]:
    """(the runs' configuration without the band's knobs and options, the ends they are at)
    when one of them sets one; ("", "") otherwise."""
    ends = list(  # once each: both sides of a ratio may be at the same end
        dict.fromkeys(
            [
                f"{knob}={run.knobs[knob]}"
                for run in runs
                for knob in sorted(BAND_KNOBS & set(run.knobs))
            ]
            + [
                f"{option}={run.options[option]}"
                for run in runs
                for option, band in sorted(BAND_OPTIONS.items())
                if run.options.get(option) in band
            ]
        )
    )
    if not ends:
        return "", ""
    drop = set(BAND_KNOBS) | {f"options.{option}" for option in BAND_OPTIONS}
    key = " | ".join(curve_key(run, drop, drop_point) for run in runs)
    return key, ", ".join(ends)


def keys_of(config: dict[str, Any]) -> set[str]:
    keys = {k for k in config if k != "options"}
    return keys | {f"options.{k}" for k in config.get("options", {})}


def where(result: RunResult) -> str:
    nodes = (
        f" ({result.nodes} node{'s' if result.nodes != 1 else ''})"
        if result.simulated or result.run.get("ranks_per_node")
        else ""
    )
    return (
        f"{result.workload} {result.size}".strip() + f", {result.series_label}, "
        f"{result.ranks} rank{'s' if result.ranks != 1 else ''}{nodes}"
    )


# --- quantities ------------------------------------------------------------------------------


def quantity(name: str, result: RunResult, evidence: Evidence) -> float | None:
    """One run's value of a claim's quantity; None when the run does not have it."""
    if result.summary is None:
        return None
    if name in ("performance", "time"):
        median = result.summary.median
        if not median:
            return None
        performance = median if result.higher_is_better else 1 / median
        return performance if name == "performance" else 1 / performance
    if name.startswith("metric:"):
        values = evidence.metrics.get(result.key, {}).get(name.split(":", 1)[1])
        return stats.median(values) if values else None
    if name == "preconnect_limit":  # the connection-memory model's, for the run's node
        node = result.knobs.get("machine", "none")
        if not result.simulated or node == "none":
            return None
        per_node = int(result.run.get("ranks_per_node") or 1)
        return float(machines.machine(node).preconnect_limit(per_node))
    profile = evidence.profiles.get(result.key)
    if profile is None:
        return None
    if name == "mpi_share":
        return profile.mpi_percent
    if name == "bytes_per_rank":
        return (
            sum(profile.bytes_per_rank) / len(profile.bytes_per_rank)
            if profile.bytes_per_rank
            else None
        )
    if name == "max_bytes_per_rank":
        return max(profile.bytes_per_rank) if profile.bytes_per_rank else None
    if name == "transfer":
        return profile.transfer
    if name == "io_write_over_read":  # writes with no read at all: infinitely more
        read, written = sum(profile.io_read_per_rank), sum(profile.io_write_per_rank)
        return written / read if read else (math.inf if written else None)
    if name == "modal_message_bytes":  # the upper limit of the most common size bucket
        if not profile.histogram:
            return None
        bucket = max(profile.histogram.items(), key=lambda item: (item[1], -item[0]))[0]
        return float(1 << bucket)
    kind, argument = name.split(":", 1)
    if kind == "time_share":
        return profile.time_share(argument) if profile.total_time else None
    if kind == "call_share":
        return profile.call_share(argument) if profile.total_calls else None
    if kind == "time_rank":  # 1: the function taking the most MPI time
        if not profile.total_time:
            return None
        order = sorted(profile.functions, key=lambda f: (-profile.functions[f]["time"], f))
        return float(order.index(argument) + 1) if argument in order else None
    messages = sum(profile.histogram.values())  # small_messages:BYTES, a power of two
    if not messages:
        return None
    limit = int(argument).bit_length() - 1  # bucket b holds [2^(b-1), 2^b): below 2^limit
    return 100 * sum(n for bucket, n in profile.histogram.items() if bucket <= limit) / messages


def samples(name: str, result: RunResult, evidence: Evidence) -> list[float] | None:
    """The quantity's value in each measured repetition (performance as a rate: 1 / time for
    a time), when it is measured over repetitions and positive; None otherwise (a profile's
    quantities, a model's)."""
    if name in ("performance", "time"):
        values = list(result.values)
        if (
            name == "performance"
            and not result.higher_is_better
            or (name == "time" and result.higher_is_better)
        ):
            values = [1 / v if v else 0.0 for v in values]
    elif name.startswith("metric:"):
        values = evidence.metrics.get(result.key, {}).get(name.split(":", 1)[1], [])
    else:
        return None
    return values if len(values) > 1 and min(values) > 0 else None


def ratio_interval(
    name: str, baseline: RunResult, compared: RunResult, evidence: Evidence, scale: float = 1.0
) -> Interval | None:
    """The confidence interval of compared's quantity over baseline's (times `scale`): the
    Hodges-Lehmann interval of the log ratio (stats.relative_change), exact at small counts."""
    a, b = samples(name, baseline, evidence), samples(name, compared, evidence)
    if a is None or b is None:
        return None
    change = stats.relative_change(a, b, higher_is_better=True)
    if change.ci_low == change.ci_high:  # no spread: the figure is all there is to say
        return None
    return Interval(
        scale * (1 + change.ci_low),
        scale * (1 + change.ci_high),
        change.confidence,
        (len(a), len(b)),
    )


def value_interval(name: str, result: RunResult, evidence: Evidence) -> Interval | None:
    """The confidence interval of one run's median quantity (order statistics, stats.py)."""
    values = samples(name, result, evidence)
    if values is None:
        return None
    summary = stats.summarise(values)
    if summary.ci_low == summary.ci_high:
        return None
    return Interval(summary.ci_low, summary.ci_high, summary.confidence, (summary.n,))


def needs_profile(name: str) -> bool:
    return name.startswith(PROFILE_QUANTITIES)
