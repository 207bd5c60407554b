"""What one repetition's run means: ok, failed, timeout, or killed after a verified result
(then its figure counts), with the reason in words and its figure of merit; and what starts a
run's finalize grace (its verified result line). Used by the Recorder (outcome.py) for runs
here and Slurm jobs alike."""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Callable
from typing import Any

from esmperf.store.results import HUNG_AFTER_RESULT
from esmperf.study import execute as execute_module
from esmperf.study.configuration import Configuration
from esmperf.study.execute import PROGRAM_ERROR, Execution
from esmperf.workloads import fom_from_result, parse_result_line, regex_fom

# Signals that stop a program from outside (kill, Ctrl-C, a closed terminal), not a crash.
STOPPING_SIGNALS = (signal.SIGTERM, signal.SIGKILL, signal.SIGINT, signal.SIGHUP)


def classify(
    execution: Execution, config: Configuration
) -> tuple[str, str | None, dict[str, Any] | None]:
    """(status, reason, JSON result) of one repetition. The reason says why it failed; for an
    "ok" repetition it is None, or what happened after its result when the program had to be
    killed (stored as killed_after_result)."""
    result = parse_result_line(execution.stdout) if config.fom.source == "json" else None
    last_error = (
        execution.program_error or last_message(execution.stderr) or last_message(execution.stdout)
    )
    if _killed(execution) and _verified_result(result):
        # The measurement is complete and checked; only the teardown went wrong (MPICH 4
        # over TCP sometimes hangs in MPI_Finalize): the figure counts, the kill is kept.
        return "ok", _killed_after_result(execution, config), result
    if execution.timed_out:
        return "timeout", timeout_reason(execution, config), result
    if execution.returncode is None:
        return "failed", execution.stderr, None
    verification = (result or {}).get("verification")
    if isinstance(verification, dict) and verification.get("passed") is False:
        norms = json.dumps(verification.get("norms", {}))
        return (
            "verification_failed",
            f"verification FAILED ({verification.get('what', '')} {norms})",
            result,
        )
    if execution.returncode != 0:
        if execution.returncode < 0:
            outcome = f"killed by signal {_signal_name(-execution.returncode)}"
        else:
            outcome = f"exit code {execution.returncode}"
        return "failed", f"{outcome}" + (f": {last_error}" if last_error else ""), result
    if fom_value(execution, config, result) is None:
        if config.fom.source == "json":
            critical = simulator_critical(execution.stderr)  # SMPI can exit 0 after it stopped
            return (
                "failed",
                "no JSON result line with a figure of merit on stdout (docs/workloads.md)"
                + (f": {critical}" if critical else ""),
                None,
            )
        return (
            "failed",
            f"the figure-of-merit regex {config.fom.regex!r} matched nothing in the output",
            None,
        )
    return "ok", None, result


def timeout_reason(execution: Execution, config: Configuration) -> str:
    if execution.timeout_clock != "cpu":
        return f"timed out after {config.timeout:g} s (killed)"
    if execution.elapsed >= config.timeout * execute_module.WALL_BACKSTOP:
        return (
            f"timed out after {execution.elapsed:.0f} s of wall time, "
            f"{execute_module.WALL_BACKSTOP:g} times its {config.timeout:g} s of CPU (killed)"
        )
    return f"timed out after {config.timeout:g} s of CPU (killed)"


def _killed(execution: Execution) -> bool:
    """Stopped from outside: at its timeout, or by a stopping signal (a crash, e.g. SIGSEGV,
    is not a kill and stays a failure even after a result)."""
    code = execution.returncode
    return (
        execution.timed_out
        or execution.ended_after_result
        or (code is not None and -code in STOPPING_SIGNALS)
    )


def verified_result_line(line: str) -> bool:
    """Whether one line of output is a verified JSON result (the finalize grace starts)."""
    return line.lstrip().startswith("{") and _verified_result(parse_result_line(line))


def result_watch(config: Configuration) -> Callable[[str], bool] | None:
    """What starts the finalize grace of a run of `config` (study/execute.py FinalizeGrace),
    locally and in a batch job: its verified JSON result line; None (no grace) for a figure of
    merit read from other output."""
    return verified_result_line if config.fom.source == "json" else None


def _verified_result(result: dict[str, Any] | None) -> bool:
    """A complete JSON result line with a figure of merit whose verification passed."""
    verification = (result or {}).get("verification")
    return (
        result is not None
        and fom_from_result(result) is not None
        and isinstance(verification, dict)
        and verification.get("passed") is True
    )


def _killed_after_result(execution: Execution, config: Configuration) -> str:
    if execution.ended_after_result:
        grace = execute_module.FINALIZE_GRACE
        return (
            f"{HUNG_AFTER_RESULT}: ended {grace:g} s after its verified result (the finalize grace)"
        )
    if execution.timed_out:
        return f"{HUNG_AFTER_RESULT}: killed at the {config.timeout:g} s timeout"
    assert execution.returncode is not None
    return (
        f"killed by signal {_signal_name(-execution.returncode)} after its result (in "
        "MPI_Finalize or teardown)"
    )


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:  # a real-time signal has no name
        return str(number)


SIMULATOR_CHATTER = re.compile(
    r"^\[[^\]]*\] |^The simulation took |seconds were actual "
    r"computation|^You may want to use sampling|^Execution failed "
    r"with code"
)


# SimGrid's own fatal message (xbt_die, "Deadlock detected"): "[host:rank:(pid) time] file:line:
# [category/CRITICAL] text"; the text is the reason, not chatter.
SIMULATOR_CRITICAL = re.compile(r"\[[\w.]+/CRITICAL\] (.*)")


def simulator_critical(output: str) -> str:
    """SimGrid's first fatal message in `output` (its text), or ""."""
    for line in output.splitlines():
        found = SIMULATOR_CRITICAL.search(line)
        if found:
            return "SimGrid: " + " ".join(found.group(1).split())
    return ""


def last_message(output: str) -> str:
    """The program's own error line if it printed one (or SimGrid's fatal one), else the last
    line of `output` that says something (not a rule of dashes, not the simulator's chatter),
    shortened."""
    lines = [" ".join(line.split()) for line in output.splitlines()]
    errors = [line for line in lines if PROGRAM_ERROR.match(line)]
    if not errors and (critical := simulator_critical(output)):
        errors = [critical]
    said = [
        line
        for line in lines
        if any(c.isalnum() for c in line) and not SIMULATOR_CHATTER.search(line)
    ]
    for line in errors[-1:] or said[-1:]:
        return line if len(line) <= 200 else line[:199] + "…"
    return ""


def fom_value(
    execution: Execution, config: Configuration, result: dict[str, Any] | None
) -> float | None:
    if config.fom.source == "json":
        return fom_from_result(result) if result else None
    if config.fom.source == "regex":
        assert config.fom.regex is not None
        return regex_fom(config.fom.regex, execution.stdout + "\n" + execution.stderr)
    return run_time(execution)


def run_time(execution: Execution) -> float:
    """The run's time: simulated for an smpi run (the real time is only the simulation's)."""
    return execution.elapsed if execution.simulated_time is None else execution.simulated_time
