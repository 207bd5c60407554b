"""Workloads: the manifests native/apps/<name>/workload.toml (docs/workloads.md) and where each
workload is built. The runner knows nothing about a workload beyond its manifest, so a new one
plugs in without changes here."""

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from esmperf.errors import EsmperfError
from esmperf.paths import repo_root, stack_build_dir

MANIFEST = "workload.toml"
MANIFEST_KEYS = {
    "name",
    "executable",
    "description",
    "sizes",
    "default_size",
    "fom_unit",
    "higher_is_better",
    "options",
    "folds",
}
REQUIRED_KEYS = ("name", "executable", "sizes", "fom_unit", "higher_is_better")


class WorkloadError(EsmperfError):
    """A workload that is unknown, not built, or whose manifest is broken."""


@dataclass(frozen=True)
class Workload:
    name: str
    executable: str
    description: str
    sizes: tuple[str, ...]
    default_size: str
    fom_unit: str
    higher_is_better: bool
    options: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # first value: default
    manifest: Path | None = None
    folds: bool = False  # supports folded simulation (esm_fold.h): `folds = true` in the manifest

    def executable_path(self, stack_id: str) -> Path:
        return stack_build_dir(stack_id) / "apps" / self.name / self.executable

    def is_built(self, stack_id: str) -> bool:
        return self.executable_path(stack_id).is_file()

    def check_size(self, size: str) -> None:
        if size not in self.sizes:
            raise WorkloadError(
                f"workload {self.name} has no size {size!r} (sizes: {', '.join(self.sizes)})"
            )

    def check_option(self, name: str, value: Any) -> None:
        if name not in self.options:
            known = ", ".join(self.options) or "none"
            raise WorkloadError(f"workload {self.name} has no option {name!r} (options: {known})")
        allowed = self.options[name]
        if all(isinstance(item, str) for item in allowed) and str(value) not in allowed:
            raise WorkloadError(
                f"workload {self.name}: option {name} has no value {value!r} "
                f"(values: {', '.join(map(str, allowed))})"
            )


def apps_dir() -> Path:
    return repo_root() / "native" / "apps"


def load_workloads(directory: Path | None = None) -> dict[str, Workload]:
    """Every workload with a manifest, by name; a broken manifest is an error naming it."""
    directory = directory or apps_dir()
    workloads: dict[str, Workload] = {}
    for manifest in sorted(directory.glob(f"*/{MANIFEST}")):
        workload = read_manifest(manifest)
        workloads[workload.name] = workload
    return workloads


def read_manifest(path: Path) -> Workload:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise WorkloadError(f"cannot read the workload manifest {path}: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise WorkloadError(f"{path} is not valid TOML ({error}): fix the manifest") from None
    unknown = sorted(set(data) - MANIFEST_KEYS)
    missing = [key for key in REQUIRED_KEYS if key not in data]
    if unknown or missing:
        what = "; ".join(
            filter(
                None,
                [
                    f"unknown keys {', '.join(unknown)}" if unknown else "",
                    f"missing keys {', '.join(missing)}" if missing else "",
                ],
            )
        )
        raise WorkloadError(f"{path}: {what} (see docs/workloads.md)")
    sizes = tuple(str(size) for size in data["sizes"])
    if not sizes:
        raise WorkloadError(f"{path}: `sizes` is empty (see docs/workloads.md)")
    options = {
        str(name): tuple(values) if isinstance(values, list) else (values,)
        for name, values in (data.get("options") or {}).items()
    }
    return Workload(
        name=str(data["name"]),
        executable=str(data["executable"]),
        description=str(data.get("description", "")),
        sizes=sizes,
        default_size=str(data.get("default_size", sizes[0])),
        fom_unit=str(data["fom_unit"]),
        higher_is_better=bool(data["higher_is_better"]),
        options=options,
        manifest=path,
        folds=bool(data.get("folds", False)),
    )


def unknown_workload(name: str, workloads: dict[str, Workload]) -> WorkloadError:
    known = ", ".join(workloads) or "none yet"
    return WorkloadError(
        f"unknown workload {name!r}: there is no native/apps/{name}/{MANIFEST} in this tree "
        f"(workloads here: {known}). Update esmperf to a version that has it, write it "
        "following docs/workloads.md, or measure your own program with `command = [...]`"
    )


def not_built_reason(workload: Workload, stack_id: str) -> str:
    return (
        f"{workload.name} is not built for {stack_id} ({workload.executable_path(stack_id)} "
        f"is missing): run `make build` or `esmperf build --stack {stack_id}`"
    )


def parse_result_line(stdout: str) -> dict[str, Any] | None:
    """The workload's JSON result: the last line of stdout that is a JSON object with a
    figure of merit (docs/workloads.md)."""
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and "fom" in record:
            return record
    return None


def fom_from_result(result: dict[str, Any]) -> float | None:
    fom = result.get("fom")
    value = fom.get("value") if isinstance(fom, dict) else fom
    return float(value) if isinstance(value, (int, float)) else None


def numeric_metrics(result: dict[str, Any], prefix: str = "") -> dict[str, float]:
    """Every number in a result, flattened: {"wall": 1.2, "fom.value": 16.2,
    "model.bytes_per_point": 96, "verification.norms.l2": 1e-12, ...}."""
    metrics: dict[str, float] = {}
    for key, value in result.items():
        name = f"{prefix}{key}"
        if isinstance(value, (bool, int, float)):
            metrics[name] = float(value)
        elif isinstance(value, dict):
            metrics.update(numeric_metrics(value, name + "."))
    return metrics


def regex_fom(pattern: str, output: str) -> float | None:
    """The last match of `pattern` in `output`: its group `fom`, else its first group."""
    matches = list(re.finditer(pattern, output, re.MULTILINE))
    if not matches:
        return None
    match = matches[-1]
    text = match.groupdict().get("fom") or (match.group(1) if match.groups() else match.group(0))
    try:
        return float(text)
    except (TypeError, ValueError):
        return None
