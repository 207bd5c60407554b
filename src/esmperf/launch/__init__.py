"""Launchers: how the ranks of one run are started. The interface is launch/base.py; each
module of this package holds one implementation (mpirun here, smpirun on a simulated cluster,
srun in a Slurm allocation, sbatch as batch jobs) and registers it by defining it: adding a
launcher is adding one module."""

import importlib
import pkgutil

from esmperf.launch.base import Launcher


def launchers() -> list[type[Launcher]]:
    """Every launcher, in the order --launcher lists them."""
    for module in pkgutil.iter_modules(__path__):
        if module.name != "base":
            importlib.import_module(f"{__name__}.{module.name}")
    return sorted(Launcher.registry, key=lambda cls: (cls.position, cls.simulated))


def launcher_names() -> tuple[str, ...]:
    """What --launcher accepts: local, srun, slurm."""
    return tuple(dict.fromkeys(cls.name for cls in launchers()))


def launcher_for(name: str, simulated: bool) -> Launcher | None:
    """The launcher `name` for a run on the simulated smpi stack or not; None when there is
    none (a simulated cluster runs here only)."""
    for cls in launchers():
        if cls.name == name and cls.simulated == simulated:
            return cls()
    return None


def simulated_launchers() -> tuple[str, ...]:
    """The --launcher values that can run the smpi stack."""
    return tuple(cls.name for cls in launchers() if cls.simulated)
