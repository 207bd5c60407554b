"""The measured results of a study store, one summarised record per configuration: what the
report, the findings, `esmperf compare` and the CLI tables read."""

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from esmperf import stats
from esmperf.stats import SECONDS_PER_DAY
from esmperf.store.database import Store

# a simulated repetition's cost to the simulator, columns of the repetition table (schema.py;
# filled by study/simulator_cost.py)
SIMULATOR_COST_COLUMNS = (
    "simulator_messages",  # messages started in the network model, collectives' included
    "simulated_seconds",  # SimGrid's "Simulated time" of the whole run
    "simulator_cpu_seconds",  # user + system CPU of smpirun and the simulator it waited for
    "simulator_cpu_per_message",  # seconds: the CPU seconds over the messages
)


@dataclass
class RunResult:
    """One configuration: its settings, its measured values and their summary."""

    run: dict[str, Any]
    values: list[float]  # the metric of each measured, successful repetition
    walls: list[float]
    unit: str
    higher_is_better: bool
    summary: stats.Summary | None
    repetitions: list[dict[str, Any]] = field(default_factory=list)
    profile_rep: int | None = None  # the repetition whose profile represents the run
    peak_rss: list[float] = field(default_factory=list)  # bytes, each measured repetition's

    @property
    def key(self) -> str:
        return str(self.run["run_key"])

    @property
    def label(self) -> str:
        return str(self.run["label"])

    @property
    def workload(self) -> str:
        return str(self.run["workload"])

    @property
    def size(self) -> str:
        return self.run["size"] or ""

    @property
    def ranks(self) -> int:
        return int(self.run["ranks"])

    @property
    def nodes(self) -> int:
        return int(self.run["nodes"] or 1)

    @property
    def stack(self) -> str:
        return str(self.run["stack"])

    @property
    def knobs(self) -> dict[str, str]:
        return json.loads(self.run["knobs"] or "{}")

    @property
    def options(self) -> dict[str, str]:
        return json.loads(self.run["options"] or "{}")

    @property
    def status(self) -> str:
        return str(self.run["status"])

    @property
    def oversubscribed(self) -> bool:
        return bool(self.run["oversubscribed"])

    @property
    def simulated(self) -> bool:
        """Run on a simulated cluster (SimGrid SMPI, stack smpi): times are simulated."""
        return self.stack == "smpi"

    @property
    def folded(self) -> bool:
        """Simulated folded (esm_fold.h): fields shared between simulated ranks, kernels
        sampled then charged; its figures are simulated, its numbers unverified."""
        return "ESM_FOLD" in json.loads(self.run.get("knob_env") or "{}")

    @property
    def simulator_cost(self) -> tuple[float, float | None] | None:
        """(median real seconds, peak resident bytes) of the simulation of a simulated run."""
        if not self.simulated:
            return None
        elapsed = [
            float(r["elapsed"])
            for r in self.repetitions
            if r["kind"] == "measure" and r["status"] == "ok" and r["elapsed"]
        ]
        if not elapsed:
            return None
        return stats.median(elapsed), max(self.peak_rss) if self.peak_rss else None

    @property
    def on_cluster_nodes(self) -> bool:
        """Its ranks were placed on a cluster's nodes: simulated ones, or real ones through
        Slurm (srun inside an allocation, or batch jobs); not this machine's ranks_per_node
        bookkeeping."""
        return self.simulated or self.run.get("launched_by") in ("srun", "slurm")

    @property
    def identity(self) -> str:
        """What was run, as canonical JSON: equal across stores for the same configuration."""
        return str(self.run["identity"])

    @property
    def series_label(self) -> str:
        """The configuration without workload, size and ranks: a curve's legend entry."""
        parts = [self.stack, *(f"{k}={v}" for k, v in {**self.options, **self.knobs}.items())]
        if self.run["steps"] is not None:
            parts.append(f"steps={self.run['steps']}")
        return " · ".join(parts)

    @property
    def group(self) -> tuple[str, str]:
        """(workload, size): the runs one figure compares."""
        return self.workload, self.size

    @property
    def max_load(self) -> float | None:
        loads = [
            r["load_before"]
            for r in self.repetitions
            if r["kind"] == "measure" and r["load_before"] is not None
        ]
        return max(loads) if loads else None

    @property
    def max_busy(self) -> float | None:
        """The most cores other processes kept busy before a measured repetition."""
        busy = [
            r["busy_cores_before"]
            for r in self.repetitions
            if r["kind"] == "measure" and r.get("busy_cores_before") is not None
        ]
        return max(busy) if busy else None

    @property
    def jobs_per_day(self) -> float | None:
        return stats.jobs_per_day(stats.median(self.walls)) if self.walls else None


def load_results(store: Store, metric: str | None = None) -> list[RunResult]:
    """Every configuration of the store, in study order, with its summary (None when nothing
    was measured). `metric`: "fom" (default: the study's) or "jobs_per_day"."""
    metric = metric or str(store.study_info().get("metric") or "fom")
    repetitions: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in store.rows("SELECT * FROM repetition ORDER BY run_key, rep"):
        repetitions[row["run_key"]].append(row)
    profiled = {
        (row["run_key"], row["rep"]) for row in store.rows("SELECT run_key, rep FROM profile")
    }
    peak_rss: dict[str, list[float]] = defaultdict(list)
    for row in store.rows(
        "SELECT run_key, value FROM metric WHERE name = 'peak_rss_bytes' ORDER BY run_key, rep"
    ):
        peak_rss[row["run_key"]].append(float(row["value"]))
    results = []
    for run in store.runs():
        reps = repetitions.get(run["run_key"], [])
        measured = [
            r
            for r in reps
            if r["kind"] == "measure" and r["status"] == "ok" and r["fom"] is not None
        ]
        walls = [float(r["wall"]) for r in measured if r["wall"]]
        confidence = float(json.loads(run["repeats"] or "{}").get("confidence", 0.95))
        if metric == "jobs_per_day":
            values = [SECONDS_PER_DAY / w for w in walls if w > 0]
            unit, higher = "jobs/day", True
        else:
            values = [float(r["fom"]) for r in measured]
            unit = next((r["fom_unit"] for r in measured if r["fom_unit"]), run["fom_unit"] or "")
            higher = bool(run["higher_is_better"])
        summary = stats.summarise(values, confidence) if values else None
        candidates = [r["rep"] for r in reps if (run["run_key"], r["rep"]) in profiled]
        profile_kind = [
            r["rep"]
            for r in reps
            if r["kind"] == "profile" and (run["run_key"], r["rep"]) in profiled
        ]
        profile_rep = (profile_kind or candidates or [None])[-1]
        results.append(
            RunResult(
                run,
                values,
                walls,
                unit,
                higher,
                summary,
                reps,
                profile_rep,
                peak_rss[run["run_key"]],
            )
        )
    return results


HUNG_AFTER_RESULT = "hung after its result (in MPI_Finalize or teardown)"


def killed_after_result(repetitions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The repetitions that count although the program had to be killed after its verified
    result (column killed_after_result; absent from a store older than it, opened read-only)."""
    return [rep for rep in repetitions if rep.get("killed_after_result")]


def killed_after_result_text(repetitions: list[dict[str, Any]]) -> str:
    """ "2 of 5 repetitions hung after their result ... and were killed", or ""."""
    killed = killed_after_result(repetitions)
    if not killed:
        return ""
    count = f"{len(killed)} of {len(repetitions)} repetition{'s' if len(repetitions) > 1 else ''}"
    were, their = ("was", "its") if len(killed) == 1 else ("were", "their")
    if all(str(rep["killed_after_result"]).startswith(HUNG_AFTER_RESULT) for rep in killed):
        reasons = [str(rep["killed_after_result"]) for rep in killed]
        when = (
            "at the timeout"
            if all("timeout" in reason for reason in reasons)
            else "after the finalize grace"
            if all("grace" in reason for reason in reasons)
            else "at the timeout or after the finalize grace"
        )
        what = (
            f"hung after {their} result (in MPI_Finalize or teardown) and {were} ended {when}"
            if when != "at the timeout"
            else f"hung after {their} result (in MPI_Finalize or teardown) and {were} killed {when}"
        )
    else:
        what = f"{were} killed after {their} result (in MPI_Finalize or teardown)"
    return f"{count} {what}"


def simulator_cost_text(repetitions: Iterable[dict[str, Any]]) -> str:
    """ "1,234 messages, 0.0123 s simulated, 4.5 s CPU, 36.5 us CPU per message": the medians of
    the measured repetitions that ran (the counts are exact, equal in every repetition of a
    deterministic program); "" when none has a cost."""
    measured = [r for r in repetitions if r.get("kind") == "measure" and r.get("status") == "ok"]

    def median(column: str) -> float | None:
        values = [float(r[column]) for r in measured if r.get(column) is not None]
        return stats.median(values) if values else None

    messages, simulated, cpu, per_message = (median(column) for column in SIMULATOR_COST_COLUMNS)
    parts = []
    if messages is not None:
        parts.append(f"{messages:,.0f} messages")
    if simulated is not None:
        parts.append(f"{simulated:.4g} s simulated")
    if cpu is not None:
        parts.append(f"{cpu:.3g} s CPU")
    if per_message is not None:
        micro = per_message * 1e6
        parts.append(f"{micro:,.0f}" if micro >= 100 else f"{micro:.3g}")
        parts[-1] += " us CPU per message"
    return ", ".join(parts)
