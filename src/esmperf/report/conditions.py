"""How far a comparison's measurements can be trusted (issue 26): the conditions it was measured
under and its controls.

- Conditions: the interleaved rounds its repetitions ran in (study/rounds.py), the cores other
  processes kept busy just before each (environment.busy_cores: sampled then, where the 1-minute
  load average lags a rise within a short study) and the load average, and the drift: how much a configuration's figure moved from its first round to
  its last (a robust line through log(figure) against the round: the median of the pairwise
  slopes, Theil and Sen). Interleaved, a drift falls on both sides of a comparison alike; the
  report says how big it was. Measured in blocks (one configuration's repetitions after
  another's, as stores written before rounds were), a drift reads as an effect: said too.
- Controls: a knob that cannot act where it was compared (a transport on one rank, where no
  message crosses it) must show no effect. One that does shows that something other than the
  knob changed between the configurations' repetitions: the study's measurements are flagged
  unreliable at the top of the report, and its other comparisons are suspect."""

import math
import statistics
from dataclasses import dataclass
from typing import Any

from esmperf.mpi.knobs import KNOBS
from esmperf.store.results import RunResult


@dataclass(frozen=True)
class Conditions:
    """What the repetitions of one or more configurations were measured under."""

    rounds: int  # distinct interleaved rounds; 0 when measured in blocks
    load_low: float | None  # the load average before a measured repetition: lowest, highest
    load_high: float | None
    drift: float | None  # the largest relative change of a figure across its rounds
    busy_low: float | None = None  # other processes' busy cores before one: lowest, highest
    busy_high: float | None = None

    def text(self) -> str:
        load = (
            f"load average {self.load_low:.2g}-{self.load_high:.2g}"
            if self.load_low is not None and self.load_high is not None
            else "load not recorded"
        )
        if self.busy_low is not None and self.busy_high is not None:
            load = f"{self.busy_low:.1f}-{self.busy_high:.1f} cores busy with other work, {load}"
        if not self.rounds:
            return (
                f"measured in blocks, not interleaved: a change in the machine's load during "
                f"the study reads as an effect ({load})"
            )
        drift = f"; drift across rounds up to {self.drift:+.1%}" if self.drift is not None else ""
        return f"{self.rounds} interleaved rounds, {load}{drift}"


def measured(result: RunResult) -> list[dict[str, Any]]:
    return [
        r
        for r in result.repetitions
        if r["kind"] == "measure" and r["status"] == "ok" and r["fom"] is not None
    ]


def conditions(*results: RunResult) -> Conditions:
    reps = [rep for result in results for rep in measured(result)]
    loads = [float(r["load_before"]) for r in reps if r.get("load_before") is not None]
    busy = [
        float(r["busy_cores_before"])
        for r in reps
        if r.get("busy_cores_before") is not None and not math.isnan(r["busy_cores_before"])
    ]
    rounds = {r["round_number"] for r in reps if r.get("round_number") is not None}
    drifts = [d for d in (drift(measured(result)) for result in results) if d is not None]
    return Conditions(
        len(rounds),
        min(loads) if loads else None,
        max(loads) if loads else None,
        max(drifts, key=abs) if drifts else None,
        min(busy) if busy else None,
        max(busy) if busy else None,
    )


def drift(reps: list[dict[str, Any]]) -> float | None:
    """Relative change of the figure from the first round to the last, on the Theil-Sen line
    through log(figure) against the round; None with fewer than 3 positive figures in rounds."""
    points = [
        (int(r["round_number"]), math.log(float(r["fom"])))
        for r in reps
        if r.get("round_number") is not None and float(r["fom"]) > 0
    ]
    if len(points) < 3:
        return None
    slopes = [
        (y2 - y1) / (x2 - x1)
        for i, (x1, y1) in enumerate(points)
        for x2, y2 in points[i + 1 :]
        if x2 != x1
    ]
    if not slopes:
        return None
    span = max(x for x, _ in points) - min(x for x, _ in points)
    return math.expm1(statistics.median(slopes) * span)


def inert_reason(what: str, ranks: int, simulated: bool) -> str:
    """Why the knob `what` cannot act at this point ('' when it can): a knob about how ranks
    talk, on one rank. Simulated runs are deterministic and need no control."""
    knob = KNOBS.get(what)
    if knob is None or simulated or ranks != 1:
        return ""
    return knob.inert_alone
