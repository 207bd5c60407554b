"""Run Veros (a real ocean model: pure Python and NumPy, MPI through mpi4py) for esmperf.

    .venv/veros/bin/python scripts/veros_run.py --size S --steps 5     (under mpirun -n 1, 2, 4)

Veros's ACC setup (a zonally re-entrant channel in the south, a closed basin to the north,
driven by wind stress and surface temperature restoring; nx x ny x nz = 30 x 42 x 15 at size S,
60 x 84 x 15 at M) runs set-up, one warm-up step (Veros compiles and caches its kernels, and
its first step has its timers off), then `--steps` time steps: all of them in the region
"timed" (the name every workload gives its timed loop: the report's default view), each in
"timestep" inside it, entered with MPI_Pcontrol(1, name) and left with MPI_Pcontrol(-1, name)
(IPM's region convention), called through ctypes on the process's MPI library, so a preloaded
profiler sees them. The ranks split
the domain into px x py blocks (1 x 1, 1 x 2, 2 x 2, ...).

Rank 0 prints one JSON result line (docs/workloads.md): `wall` is the timed steps (the slowest
rank), `cpu` their CPU time summed over ranks, the figure of merit steps per second, and the
verification says the run is sane when, over all ranks,
- Veros's own sanity check passed at every step (it raises on divergence) and the model time
  advanced by exactly the steps run;
- temperature, salinity and velocities are finite in every cell;
- wet-cell temperature stays within [-2, 20] deg C (the setup starts and restores within 0..15);
- salinity stays 35 psu in every wet cell to 1e-8 (the setup starts it uniform and applies no
  salt flux, so advection and mixing must keep it uniform);
- kinetic energy is positive (the wind spins the flow up) and finite.
The global mean temperature and kinetic energy are in the result (`model.*`), so runs at
different rank counts can be compared (the decomposition changes only the rounding).
"""

import argparse
import ctypes
import json
import math
import sys
import time

SIZES = {"S": (30, 42, 15), "M": (60, 84, 15)}
T_RANGE = (-2.0, 20.0)
SALINITY, SALINITY_TOLERANCE = 35.0, 1e-8


def pcontrol_function():
    """MPI_Pcontrol from the process's global scope (a preloaded profiler's wrapper first, then
    the MPI library, which the profiler makes global), else from the libmpi mpi4py loaded
    locally (found in /proc/self/maps); None when there is none."""
    try:
        return ctypes.CDLL(None).MPI_Pcontrol
    except AttributeError:
        pass
    with open("/proc/self/maps", encoding="utf-8") as maps:
        paths = {line.split()[-1] for line in maps if "libmpi" in line and ".so" in line}
    for path in sorted(paths):
        try:
            return ctypes.CDLL(path).MPI_Pcontrol
        except (OSError, AttributeError):
            continue
    return None


def decomposition(ranks: int, nx: int, ny: int) -> tuple[int, int]:
    """px x py blocks, as square as the grid divides: 1 -> 1x1, 2 -> 1x2, 4 -> 2x2."""
    best = None
    for px in range(1, ranks + 1):
        py, rest = divmod(ranks, px)
        if rest or nx % px or ny % py:
            continue
        if best is None or abs(px - py) < abs(best[0] - best[1]):
            best = (px, py)
    if best is None:
        raise SystemExit(
            f"veros_run: {ranks} ranks cannot split {nx} x {ny} evenly: use 1, 2, 3, "
            "4, 6, ... ranks"
        )
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="S", choices=sorted(SIZES))
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()

    from mpi4py import MPI  # MPI_Init here: the profiler starts

    comm = MPI.COMM_WORLD
    ranks = comm.Get_size()
    nx, ny, nz = SIZES[args.size]
    px, py = decomposition(ranks, nx, ny)

    from veros import runtime_settings

    runtime_settings.update(
        num_proc=(px, py), backend="numpy", diskless_mode=True, loglevel="warning"
    )
    from veros.setups.acc import ACCSetup

    dt_tracer = 86400 / 2.0
    simulation = ACCSetup(
        override={"nx": nx, "ny": ny, "nz": nz, "runlen": dt_tracer * (args.steps + 1)}
    )
    simulation.setup()
    state = simulation.state
    simulation.step(state)  # warm-up: kernels built and cached, outside the timed region
    start_time = float(state.variables.time)
    pcontrol = pcontrol_function()
    timed, timestep = ctypes.c_char_p(b"timed"), ctypes.c_char_p(b"timestep")
    comm.Barrier()
    start, start_cpu = time.perf_counter(), time.process_time()
    if pcontrol:
        pcontrol(ctypes.c_int(1), timed)
    for _ in range(args.steps):
        if pcontrol:
            pcontrol(ctypes.c_int(1), timestep)
        simulation.step(state)
        if pcontrol:
            pcontrol(ctypes.c_int(-1), timestep)
    if pcontrol:
        pcontrol(ctypes.c_int(-1), timed)
    wall = comm.allreduce(time.perf_counter() - start, op=MPI.MAX)
    cpu = comm.allreduce(time.process_time() - start_cpu, op=MPI.SUM)

    checks, model = verify(state, comm, args.steps, start_time, dt_tracer)
    passed = all(checks.values())
    if comm.Get_rank() == 0:
        print(
            json.dumps(
                {
                    "workload": "veros",
                    "size": args.size,
                    "ranks": ranks,
                    "steps": args.steps,
                    "decomposition": [px, py],
                    "grid": [nx, ny, nz],
                    "wall": wall,
                    "cpu": cpu,
                    "fom": {
                        "value": args.steps / wall,
                        "unit": "steps/s",
                        "higher_is_better": True,
                    },
                    "verification": {
                        "passed": passed,
                        "what": "Veros ACC sane: "
                        + ", ".join(name for name, ok in checks.items() if ok == passed)
                        if passed
                        else "failed: " + ", ".join(name for name, ok in checks.items() if not ok),
                        "norms": {"salinity_max_deviation": model["salinity_max_deviation"]},
                    },
                    "model": model,
                    "profiler_regions": pcontrol is not None,
                }
            ),
            flush=True,
        )
    return 0 if passed else 2


def verify(state, comm, steps: int, start_time: float, dt_tracer: float):
    """The checks of the module docstring, reduced over all ranks, and the global figures."""
    import numpy as np
    from mpi4py import MPI

    vs = state.variables
    tau = int(vs.tau)
    inner = (slice(2, -2), slice(2, -2))
    wet = np.asarray(vs.maskT)[inner] > 0
    temp = np.asarray(vs.temp)[inner + (slice(None), tau)]
    salt = np.asarray(vs.salt)[inner + (slice(None), tau)]
    u = np.asarray(vs.u)[inner + (slice(None), tau)]
    v = np.asarray(vs.v)[inner + (slice(None), tau)]
    volume = (np.asarray(vs.area_t)[inner][:, :, None] * np.asarray(vs.dzt)[None, None, :]) * wet
    finite = all(bool(np.isfinite(a).all()) for a in (temp, salt, u, v))
    t_low = float(temp[wet].min()) if wet.any() else math.inf
    t_high = float(temp[wet].max()) if wet.any() else -math.inf
    deviation = float(np.abs(salt[wet] - SALINITY).max()) if wet.any() else 0.0
    sums = comm.allreduce(
        np.array(
            [
                float((temp * volume).sum()),
                float(volume.sum()),
                float((0.5 * (u * u + v * v) * volume).sum()),
            ]
        ),
        op=MPI.SUM,
    )
    low = comm.allreduce(t_low, op=MPI.MIN)
    high = comm.allreduce(t_high, op=MPI.MAX)
    deviation = comm.allreduce(deviation, op=MPI.MAX)
    finite = comm.allreduce(finite, op=MPI.LAND)
    elapsed_steps = (float(vs.time) - start_time) / dt_tracer
    kinetic = float(sums[2])
    checks = {
        f"{steps} steps run": elapsed_steps == steps,
        "fields finite": finite,
        f"temperature in [{T_RANGE[0]:g}, {T_RANGE[1]:g}] C": T_RANGE[0] <= low
        and high <= T_RANGE[1],
        f"salinity 35 psu to {SALINITY_TOLERANCE:g}": deviation <= SALINITY_TOLERANCE,
        "kinetic energy positive": math.isfinite(kinetic) and kinetic > 0,
    }
    model = {
        "mean_temperature": float(sums[0] / sums[1]),
        "temperature_min": low,
        "temperature_max": high,
        "kinetic_energy": kinetic,
        "salinity_max_deviation": deviation,
        "itt": int(vs.itt),
    }
    return checks, model


if __name__ == "__main__":
    sys.exit(main())
