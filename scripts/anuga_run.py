"""Run ANUGA (tsunami and flood shallow water: Python, C extensions, MPI through mpi4py) for
esmperf, as its parallel examples do.

    .venv/anuga/bin/python scripts/anuga_run.py [--size 40] [--finaltime 10]   (under mpirun)

A dam break in a closed rectangular basin (400 m x 200 m, cut into size x size/2 cells of
four triangles): water 1 m deep over the western half, dry to the east, reflective walls. Rank
0 builds the mesh and ANUGA's own `distribute` partitions it (METIS) over the ranks; each rank
then evolves its part to `--finaltime` seconds, every flux step agreeing on the global time
step with one MPI_Allreduce (ANUGA counts these itself: `calls_to_update_timestep`). The
evolution is the region "timed" (MPI_Pcontrol, as scripts/veros_run.py marks Veros's loop).

Rank 0 prints one JSON result line (docs/workloads.md): `wall` the evolution's wall time (the
slowest rank), the figure of merit flux steps per second, ANUGA's own counts (`model.*`), and
the verification: the water volume (summed over ranks) is the initial one to 1e-9 relative
(walls, no rain, no inflow: mass is conserved), the stage is finite everywhere, and the
front has moved into the dry half.
"""

import argparse
import json
import sys
import time

from veros_run import pcontrol_function

LENGTH, WIDTH, DEPTH = 400.0, 200.0, 1.0
VOLUME_TOLERANCE = 1e-9


def build_domain(size: int):
    import anuga

    domain = anuga.rectangular_cross_domain(size, size // 2, len1=LENGTH, len2=WIDTH)
    domain.set_quantity("elevation", 0.0)
    domain.set_quantity("friction", 0.0)
    domain.set_quantity("stage", lambda x, y: (x < LENGTH / 2) * DEPTH)
    return domain


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=40, help="cells along the basin (even)")
    parser.add_argument("--finaltime", type=float, default=10.0, help="simulated seconds")
    args = parser.parse_args()

    import ctypes

    import anuga
    import numpy as np
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    domain = anuga.distribute(build_domain(args.size) if anuga.myid == 0 else None)
    domain.set_name("anuga_run")
    domain.set_store(False)
    wall_bc = anuga.Reflective_boundary(domain)
    domain.set_boundary({"left": wall_bc, "right": wall_bc, "top": wall_bc, "bottom": wall_bc})
    initial_volume = domain.get_water_volume()

    pcontrol = pcontrol_function()
    timed = ctypes.c_char_p(b"timed")
    comm.Barrier()
    start = time.perf_counter()
    if pcontrol:
        pcontrol(ctypes.c_int(1), timed)
    for _ in domain.evolve(yieldstep=args.finaltime, finaltime=args.finaltime):
        pass
    if pcontrol:
        pcontrol(ctypes.c_int(-1), timed)
    wall = comm.allreduce(time.perf_counter() - start, op=MPI.MAX)

    volume = domain.get_water_volume()
    full = domain.tri_full_flag == 1
    stage = domain.get_quantity("stage").centroid_values
    x = domain.get_centroid_coordinates(absolute=True)[:, 0]
    finite = comm.allreduce(bool(np.all(np.isfinite(stage))), op=MPI.LAND)
    wet_east = comm.allreduce(int(np.sum(full & (x > LENGTH / 2) & (stage > 1e-3))), op=MPI.SUM)
    triangles = comm.allreduce(int(np.sum(full)), op=MPI.SUM)
    checks = {
        "volume conserved to 1e-9": abs(volume - initial_volume)
        <= VOLUME_TOLERANCE * initial_volume,
        "stage finite": finite,
        "front moved east": wet_east > 0,
    }
    passed = all(checks.values())
    steps = domain.number_of_steps  # ANUGA's own count of time steps
    # and, run in parallel, of the time steps agreed by MPI_Allreduce (counted on rank 0)
    allreduces = getattr(domain, "calls_to_update_timestep", 0)
    if comm.Get_rank() == 0:
        result = {
            "workload": "anuga",
            "ranks": comm.Get_size(),
            "wall": wall,
            "fom": {"value": steps / wall, "unit": "steps/s", "higher_is_better": True},
            "verification": {
                "passed": passed,
                "what": ", ".join(name for name, ok in checks.items() if ok == passed),
                "norms": {"volume_relative_change": abs(volume / initial_volume - 1)},
            },
            "model": {
                "triangles": triangles,
                "number_of_steps": steps,
                "calls_to_update_timestep": allreduces,
                "time": domain.get_time(),
                "volume": volume,
                "wet_triangles_east": wet_east,
            },
            "profiler_regions": pcontrol is not None,
        }
        print(json.dumps(result), flush=True)
    return 0 if passed else 2


if __name__ == "__main__":
    sys.exit(main())
