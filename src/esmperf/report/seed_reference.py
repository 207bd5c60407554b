"""The seeds' own numbers as data: one TOML file per seed under studies/seeds/reference/
(format in docs/seeds.md). Each claim is a sentence quoted from the seed, what kind of statement
it is (a ratio between two configurations, a share of MPI time, scalability at a rank count,
where scaling stops, a crossover, a trend), the seed's figure, and the configurations it is
about in the study vocabulary (workload, size, ranks, nodes, ranks_per_node, stack, knobs,
options). seed_claims.py holds a study's results against them.

A bad file gives one SeedReferenceError naming the file, the claim (its id and line) and the fix.
"""

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from esmperf.errors import EsmperfError, unknown_key
from esmperf.mpi.knobs import KNOBS
from esmperf.paths import repo_root

FILE_KEYS = ("id", "title", "seed_file", "tolerance", "machine", "claim")
CLAIM_KEYS = (
    "id",
    "kind",
    "text",
    "source",
    "from_chart",
    "reading",
    "value",
    "bound",
    "tolerance",
    "quantity",
    "at",
    "baseline",
    "compare",
    "over",
    "direction",
    "base_ranks",
    "up_to",
    "analog",
    "not_modelled",
    "points",
)
KINDS = ("ratio", "share", "value", "scalability", "stops_scaling", "crossover", "trend")
BOUNDS = ("equal", "at_least", "at_most")
DIRECTIONS = ("increases", "decreases")
AXES = ("nodes", "ranks")
# The configuration vocabulary of a claim (besides knob names and options = {...}).
CONFIG_KEYS = ("workload", "size", "steps", "stack", "ranks", "nodes", "ranks_per_node", "options")
INT_CONFIG_KEYS = ("steps", "ranks", "nodes", "ranks_per_node")
# Quantities measured on one run (seed_claims.quantity); "<name>:<arg>" ones take an argument.
QUANTITIES = (
    "performance",
    "time",
    "mpi_share",
    "bytes_per_rank",
    "transfer",
    "io_write_over_read",
    "modal_message_bytes",
    "max_bytes_per_rank",
    "preconnect_limit",
)
QUANTITY_PREFIXES = ("time_share:", "call_share:", "time_rank:", "small_messages:", "metric:")
DEFAULT_QUANTITY = {
    "ratio": "performance",
    "value": None,
    "share": None,
    "scalability": "performance",
    "stops_scaling": "performance",
    "crossover": "mpi_share",
    "trend": None,
}
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]*$")


class SeedReferenceError(EsmperfError):
    """A seed reference file that cannot be used; the message names the place and the fix."""


@dataclass(frozen=True)
class Claim:
    """One stated number or shape of a seed, and the configurations it compares."""

    id: str
    kind: str
    text: str  # the seed's sentence (or slide text), quoted exactly
    source: str  # where in the seed: the slide, figure or section
    value: float | None  # the seed's figure (None: a shape, e.g. a trend)
    quantity: str
    at: dict[str, Any]  # the configuration every side shares
    baseline: dict[str, Any] = field(default_factory=dict)  # ratio: what the baseline sets
    compare: dict[str, Any] = field(default_factory=dict)  # ratio: what the other side sets
    from_chart: bool = False  # the figure or shape is read from a chart, not stated
    reading: str = ""  # how a worded shape became the figure ("minimal gain": ratio ~ 1)
    bound: str = "equal"
    tolerance: float = 0.1
    over: str = "nodes"  # trend, stops_scaling, crossover: the axis
    direction: str = ""  # trend
    base_ranks: int | None = None  # scalability: its base (None: each curve's smallest)
    up_to: bool = False  # ratio: the largest over the matching points ("up to 47 %")
    analog: str = ""  # how our configuration stands in for the seed's
    not_modelled: str = ""  # why our simulation cannot check it (a hardware feature...)
    points: tuple[tuple[float, float], ...] = ()  # the seed's own numbers, for drawing
    line: int = 0  # where it is in its file


@dataclass
class SeedReference:
    id: str
    title: str  # the seed's title: a study naming it (seed = "...") is held against it
    seed_file: str  # the seed's file in ../shared/seeds/
    path: Path
    machine: str
    claims: list[Claim]

    def names(self, seed: str) -> bool:
        """Whether a study's `seed = "..."` names this seed (its id or its title)."""
        return seed.strip() in (self.id, self.title)


def reference_dir() -> Path:
    return repo_root() / "studies" / "seeds" / "reference"


def load_references(directory: Path | None = None) -> list[SeedReference]:
    """Every seed's reference file, sorted by id."""
    directory = directory or reference_dir()
    return [load_reference(path) for path in sorted(Path(directory).glob("*.toml"))]


def reference_for(seed: str, directory: Path | None = None) -> SeedReference | None:
    """The reference of the seed a study names, or None."""
    if not seed:
        return None
    return next((ref for ref in load_references(directory) if ref.names(seed)), None)


def load_reference(path: Path) -> SeedReference:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SeedReferenceError(f"cannot read the seed reference {path}: {error}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SeedReferenceError(f"{path} is not valid TOML: {error}") from None
    for key in data:
        if key not in FILE_KEYS:
            raise SeedReferenceError(f"{path}: {unknown_key(key, FILE_KEYS, 'the file')}")
    for key in ("id", "title", "seed_file"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise SeedReferenceError(
                f"{path}: `{key}` must be a non-empty string (see "
                "docs/seeds.md: id, title, seed_file, then [[claim]] tables)"
            )
    tolerance = _tolerance(data.get("tolerance", 0.1), f"{path}: tolerance")
    claims_data = data.get("claim")
    if not isinstance(claims_data, list) or not claims_data:
        raise SeedReferenceError(
            f"{path}: no [[claim]] table: a seed reference lists the seed's "
            'claims, e.g.\n[[claim]]\nid = "ib-over-gige"\nkind = "ratio"'
        )
    claims, seen = [], set()
    for number, item in enumerate(claims_data, start=1):
        claim = _claim(item, number, tolerance, path, text)
        if claim.id in seen:
            raise SeedReferenceError(
                f"{path}: claim {claim.id!r} (line {claim.line}): the id is "
                "used twice; give each claim its own id"
            )
        seen.add(claim.id)
        claims.append(claim)
    return SeedReference(
        data["id"], data["title"], data["seed_file"], path, str(data.get("machine", "")), claims
    )


def _line(text: str, claim_id: Any, number: int) -> int:
    """The line of a claim: its `id = "..."` line, else its [[claim]] header."""
    lines = text.splitlines()
    if isinstance(claim_id, str):
        pattern = re.compile(r'^\s*id\s*=\s*["\']' + re.escape(claim_id) + r'["\']')
        for index, line in enumerate(lines, start=1):
            if pattern.match(line):
                return index
    headers = [
        index for index, line in enumerate(lines, start=1) if line.strip().startswith("[[claim]]")
    ]
    return headers[number - 1] if number <= len(headers) else 0


def _tolerance(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise SeedReferenceError(
            f"{where} must be a fraction between 0 and 1 (0.1 = within 10 %), got {value!r}"
        )
    return float(value)


def _claim(item: Any, number: int, tolerance: float, path: Path, text: str) -> Claim:
    if not isinstance(item, dict):
        raise SeedReferenceError(f"{path}: claim {number} must be a table ([[claim]])")
    line = _line(text, item.get("id"), number)
    where = f"{path}: claim {item.get('id', number)!r} (line {line})"

    def fail(problem: str) -> SeedReferenceError:
        return SeedReferenceError(f"{where}: {problem}")

    for key in item:
        if key not in CLAIM_KEYS:
            raise fail(unknown_key(key, CLAIM_KEYS, "a claim"))
    claim_id = item.get("id")
    if not isinstance(claim_id, str) or not ID_PATTERN.match(claim_id):
        raise fail("`id` must be lower-case letters, digits and '-', e.g. id = \"ib-over-gige\"")
    kind = item.get("kind")
    if kind not in KINDS:
        raise fail(f"`kind` must be one of {', '.join(KINDS)}, got {kind!r}")
    for key in ("text", "source"):
        if not isinstance(item.get(key), str) or not item[key].strip():
            raise fail(
                f"`{key}` is missing: quote the seed's sentence (text) and say where it is (source)"
            )
    value = item.get("value")
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise fail(f"`value` must be a number (the seed's figure), got {value!r}")
    if value is None and kind != "trend":
        raise fail(
            f"a {kind} claim needs `value`, the seed's figure (a shape with no number "
            "is a trend, or give the figure it implies and say how in `reading`)"
        )
    bound = item.get("bound", "equal")
    if bound not in BOUNDS:
        raise fail(f"`bound` must be one of {', '.join(BOUNDS)}, got {bound!r}")
    quantity = item.get("quantity", DEFAULT_QUANTITY[kind])
    if quantity is None:
        raise fail(
            f"a {kind} claim needs `quantity` (one of {', '.join(QUANTITIES)}, or "
            f"{', '.join(p + '...' for p in QUANTITY_PREFIXES)})"
        )
    _check_quantity(quantity, fail)
    if kind == "share" and not (
        quantity == "mpi_share"
        or quantity.startswith(("time_share:", "call_share:", "small_messages:"))
    ):
        raise fail(
            "a share claim's quantity is mpi_share, time_share:MPI_X, call_share:MPI_X "
            f"or small_messages:BYTES, got {quantity!r}"
        )
    at = _config(item.get("at", {}), "at", fail)
    baseline = _config(item.get("baseline", {}), "baseline", fail)
    compare = _config(item.get("compare", {}), "compare", fail)
    if kind == "ratio" and not (item.get("not_modelled") and not baseline and not compare):
        if not baseline or not compare:
            raise fail(
                "a ratio claim needs `baseline` and `compare`: what differs between the "
                'two configurations, e.g. baseline = { platform = "gige" }, '
                'compare = { platform = "ib-qdr" }'
            )
        if set(_flat(baseline)) != set(_flat(compare)):
            raise fail(
                "`baseline` and `compare` must set the same keys (they differ in those "
                f"only): {sorted(_flat(baseline))} vs {sorted(_flat(compare))}"
            )
    elif baseline or compare:
        raise fail(f"`baseline` and `compare` are for ratio claims; a {kind} claim has `at`")
    over = item.get("over", "nodes")
    if over not in AXES:
        raise fail(f"`over` must be nodes or ranks, got {over!r}")
    direction = item.get("direction", "")
    if kind == "trend" and direction not in DIRECTIONS:
        raise fail('a trend claim needs direction = "increases" or "decreases"')
    base_ranks = item.get("base_ranks")
    if kind == "scalability":
        if base_ranks == "smallest":
            base_ranks = None
        elif not isinstance(base_ranks, int) or isinstance(base_ranks, bool) or base_ranks < 1:
            raise fail(
                "a scalability claim needs base_ranks, the rank count performance per "
                'rank is measured against (JUROPA: 271 for POPperf), or "smallest" '
                "(each curve's smallest rank count)"
            )
        if "ranks" not in at:
            raise fail("a scalability claim needs at.ranks, the rank count it is stated at")
    points = item.get("points", [])
    if not isinstance(points, list) or not all(
        isinstance(p, list)
        and len(p) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in p)
        for p in points
    ):
        raise fail("`points` must be [[x, y], ...] pairs of numbers (the seed's own table)")
    for key in ("from_chart", "up_to"):
        if not isinstance(item.get(key, False), bool):
            raise fail(f"`{key}` must be true or false")
    for key in ("reading", "analog", "not_modelled"):
        if not isinstance(item.get(key, ""), str):
            raise fail(f"`{key}` must be a string")
    return Claim(
        id=claim_id,
        kind=kind,
        text=" ".join(item["text"].split()),
        source=item["source"],
        value=None if value is None else float(value),
        quantity=quantity,
        at=at,
        baseline=baseline,
        compare=compare,
        from_chart=item.get("from_chart", False),
        reading=item.get("reading", ""),
        bound=bound,
        tolerance=_tolerance(item.get("tolerance", tolerance), f"{where}: tolerance"),
        over=over,
        direction=direction,
        base_ranks=base_ranks,
        up_to=item.get("up_to", False),
        analog=" ".join(item.get("analog", "").split()),
        not_modelled=" ".join(item.get("not_modelled", "").split()),
        points=tuple((float(x), float(y)) for x, y in points),
        line=line,
    )


def _check_quantity(quantity: Any, fail: Any) -> None:
    if not isinstance(quantity, str) or not (
        quantity in QUANTITIES
        or (quantity.startswith(QUANTITY_PREFIXES) and quantity.split(":", 1)[1])
    ):
        raise fail(
            f"unknown quantity {quantity!r}: one of {', '.join(QUANTITIES)}, or "
            f"{', '.join(p + '...' for p in QUANTITY_PREFIXES)} (e.g. "
            "time_share:MPI_Allreduce, small_messages:4096, metric:model.bytes_moved)"
        )
    if quantity.startswith("small_messages:"):
        size = quantity.split(":", 1)[1]
        if not size.isdigit() or int(size) < 1 or int(size) & (int(size) - 1):
            raise fail(
                f"small_messages takes a power of two of bytes, e.g. small_messages:4096;"
                f" got {size!r}"
            )


def _config(table: Any, name: str, fail: Any) -> dict[str, Any]:
    """A configuration in the study vocabulary: axes, knob names with their values, options."""
    if not isinstance(table, dict):
        raise fail(f'`{name}` must be a table, e.g. {name} = {{ workload = "hycom", nodes = 4 }}')
    allowed = (*CONFIG_KEYS, *KNOBS)
    for key, value in table.items():
        if key not in allowed:
            raise fail(unknown_key(key, allowed, f"`{name}` (axes and knob names)"))
        if key in INT_CONFIG_KEYS:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise fail(f"{name}.{key} must be a positive integer, got {value!r}")
        elif key == "options":
            if not isinstance(value, dict):
                raise fail(f"{name}.options must be a table of the workload's options")
        elif not isinstance(value, str):
            raise fail(f"{name}.{key} must be a string, got {value!r}")
        elif key in KNOBS and value not in KNOBS[key].values:
            raise fail(
                f"{name}.{key} = {value!r} is not a value of the knob {key} (values: "
                f"{', '.join(KNOBS[key].values)})"
            )
    return dict(table)


def _flat(table: dict[str, Any]) -> dict[str, Any]:
    flat = {key: value for key, value in table.items() if key != "options"}
    flat.update({f"options.{key}": value for key, value in table.get("options", {}).items()})
    return flat
