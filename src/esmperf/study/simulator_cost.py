"""What a simulated run cost the simulator, per message (docs/simulate.md, "What a simulation
costs"): the messages SimGrid's network model carried (the counter preloaded into the
simulator, launch/smpirun.py), the simulated seconds, the CPU seconds (user + system) of the
smpirun process tree, and their quotient. Stored as columns of the repetition
(store/results.py's simulator_cost_text prints them)."""

from __future__ import annotations

from typing import Any

from esmperf.launch.smpirun import simulated_messages, simulated_time
from esmperf.study.execute import Execution


def cost_columns(execution: Execution) -> dict[str, Any]:
    """The repetition's simulator cost, read from its stderr and its resource usage."""
    messages = simulated_messages(execution.stderr)
    cpu = execution.cpu_time
    return {
        "simulator_messages": messages,
        "simulated_seconds": simulated_time(execution.stderr),
        "simulator_cpu_seconds": cpu,
        "simulator_cpu_per_message": cpu / messages if cpu is not None and messages else None,
    }
