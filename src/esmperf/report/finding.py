"""One written finding of a report, and the wording every kind of finding shares (findings.py
gathers them; profile_findings.py writes the profile's)."""

from dataclasses import dataclass

GOOD_EFFICIENCY = 0.8  # a parallel efficiency below it is worth a sentence (POP's threshold)


@dataclass
class Finding:
    topic: str  # scaling, knob, library, profile, quality
    text: str
    group: str = ""  # the workload and size it is about ("" for the whole study)
    weight: float = 0.05  # how much it matters (significance.py); the heaviest lead the report
    alarm: bool = False  # the study's measurements cannot be trusted: said atop the report


def ranks_text(n: int) -> str:
    return f"{n} rank{'s' if n != 1 else ''}"


def bytes_text(value: float) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:.0f} B"
