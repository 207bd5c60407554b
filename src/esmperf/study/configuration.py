"""What a study is once read: its configurations (each one run with its repeat policy and
figure of merit) and the study around them. Read from a study file by study/file.py."""

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any

from esmperf.errors import EsmperfError
from esmperf.paths import simgrid_prefix
from esmperf.slurm.batch import SlurmOptions

DEFAULT_TIMEOUT = 600.0


class StudyError(EsmperfError):
    """A study file that cannot be run; the message names the place and the fix."""


@dataclass(frozen=True)
class RepeatPolicy:
    """Hoefler & Belli: warm-up runs, then repetitions until the CI of the median is at most
    `ci_width` of the median wide at `confidence`, or `max` repetitions."""

    warmup: int = 1
    min: int = 3
    max: int = 10
    ci_width: float = 0.05
    confidence: float = 0.95


@dataclass(frozen=True)
class FomSpec:
    """Where a run's figure of merit comes from: the workload's JSON result line, a regex on
    an external command's output, or the elapsed time the runner measures."""

    source: str  # "json" | "regex" | "elapsed"
    unit: str = "s"
    higher_is_better: bool = False
    regex: str | None = None


ELAPSED = FomSpec("elapsed", "s", False)


@dataclass(frozen=True)
class Configuration:
    """One point of the matrix: everything that defines a run, and how to measure it."""

    workload: str  # a manifest's name, or the name of an external command
    kind: str  # "workload" | "command"
    ranks: int
    stack: str
    size: str | None = None
    steps: int | None = None
    ranks_per_node: int | None = None
    command: tuple[str, ...] = ()
    launcher: bool = True
    knobs: tuple[tuple[str, str], ...] = ()
    options: tuple[tuple[str, str], ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    fom: FomSpec = ELAPSED
    profile: str = "off"
    timeout: float = DEFAULT_TIMEOUT
    repeats: RepeatPolicy = field(default_factory=RepeatPolicy)
    matrix: int = 1

    def identity(self) -> dict[str, Any]:
        """What is run: equal identities measure the same thing (resume, compare). The smpi
        stack on another SimGrid than PATH's ($ESMPERF_SIMGRID) adds its prefix's name, so a
        store resumed under SimGrid 4.1 does not take 3.32's runs for its own."""
        prefix = simgrid_prefix() if self.stack == "smpi" else None
        return ({"simgrid": prefix.name} if prefix else {}) | {
            "kind": self.kind,
            "workload": self.workload,
            "command": list(self.command),
            "launcher": self.launcher,
            "size": self.size,
            "steps": self.steps,
            "ranks": self.ranks,
            "ranks_per_node": self.ranks_per_node,
            "stack": self.stack,
            "knobs": dict(self.knobs),
            "options": dict(self.options),
            "env": dict(self.env),
            "fom": {"source": self.fom.source, "regex": self.fom.regex},
        }

    @property
    def key(self) -> str:
        text = json.dumps(self.identity(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def series(self) -> str:
        """The identity without ranks: the points of one scaling curve share it."""
        identity = self.identity()
        del identity["ranks"]
        return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def nodes(self) -> int:
        return math.ceil(self.ranks / self.ranks_per_node) if self.ranks_per_node else 1

    @property
    def label(self) -> str:
        parts = [self.workload + (f" {self.size}" if self.size else ""), self.stack]
        parts += [f"{key}={value}" for key, value in (*self.options, *self.knobs)]
        if self.steps is not None:
            parts.append(f"steps={self.steps}")
        return " · ".join(parts) + f" · {self.ranks} rank{'s' if self.ranks > 1 else ''}"


@dataclass
class Study:
    name: str
    title: str
    description: str
    seed: str
    base_ranks: int | None
    metric: str
    configurations: list[Configuration]
    source: str  # the file (or "command line")
    text: str  # the study file as written, stored with the results
    notes: list[str] = field(default_factory=list)  # things the user should know (not errors)
    slurm: SlurmOptions = field(default_factory=SlurmOptions)  # [slurm]: docs/slurm.md
