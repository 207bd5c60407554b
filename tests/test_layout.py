"""The front end's layout: launchers found in one place, and no import cycle between modules."""

import ast
import subprocess
import sys
from pathlib import Path

from esmperf.launch import launcher_for, launcher_names, launchers
from esmperf.launch.mpirun import MpirunLauncher
from esmperf.launch.sbatch import SbatchLauncher
from esmperf.launch.smpirun import SmpirunLauncher
from esmperf.launch.srun import SrunLauncher

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "esmperf"


def test_every_launcher_module_registers_one_launcher() -> None:
    assert launchers() == [MpirunLauncher, SmpirunLauncher, SrunLauncher, SbatchLauncher]
    assert launcher_names() == ("local", "srun", "slurm")
    modules = sorted(
        p.stem for p in (PACKAGE / "launch").glob("*.py") if p.stem not in ("__init__", "base")
    )
    assert modules == sorted(cls.__module__.rsplit(".", 1)[1] for cls in launchers())


def test_the_launcher_follows_the_stack() -> None:
    assert type(launcher_for("local", simulated=False)) is MpirunLauncher
    assert type(launcher_for("local", simulated=True)) is SmpirunLauncher
    assert type(launcher_for("srun", simulated=False)) is SrunLauncher
    assert type(launcher_for("slurm", simulated=False)) is SbatchLauncher
    assert launcher_for("slurm", simulated=True) is None  # a simulated cluster runs here
    assert launcher_for("pbs", simulated=False) is None


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The esmperf modules `path` imports when it is loaded (not those imported for type
    checking only, nor inside functions)."""
    found = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                found.add(name if name in modules else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name in modules}


def test_no_import_cycle() -> None:
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {name: _imports(path, set(files)) for name, path in files.items()}
    state: dict[str, str] = {}

    def visit(name: str, trail: list[str]) -> None:
        state[name] = "open"
        for imported in sorted(graph[name]):
            assert state.get(imported) != "open", " -> ".join([*trail, name, imported])
            if imported not in state:
                visit(imported, [*trail, name])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [])


def test_the_slurm_campaign_and_the_study_import_first() -> None:
    """Once an import cycle (runner <-> slurm_study): each loads on its own now."""
    for name in ("esmperf.slurm.campaign", "esmperf.launch.sbatch", "esmperf.study.outcome"):
        subprocess.run([sys.executable, "-c", f"import {name}"], check=True)
