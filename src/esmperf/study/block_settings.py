"""The settings of a study's [[matrix]] block that are not axes: the launcher, the figure of
merit (of a command), profile, timeout, repeats, env and the command itself; each checked with
one error naming the fix. Shared with file.py: the key check and the name pattern."""

import re
import shlex
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from esmperf.errors import unknown_key
from esmperf.study.configuration import DEFAULT_TIMEOUT, ELAPSED, FomSpec, RepeatPolicy, StudyError

REPEAT_KEYS = ("warmup", "min", "max", "ci_width", "confidence")
FOM_KEYS = ("regex", "unit", "higher_is_better")
PROFILE_MODES = {False: "off", True: "once", "off": "off", "once": "once", "every": "every"}
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def check_keys(table: dict[str, Any], allowed: Sequence[str], source: str, where: str) -> None:
    for key in table:
        if key not in allowed:
            raise StudyError(f"{source}: {unknown_key(key, allowed, where)}")


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def fixed_settings(block: dict[str, Any], where: str, is_command: bool) -> dict[str, Any]:
    """The settings that are not axes: launcher, fom, profile, timeout, repeats, env."""
    launcher = block.get("launcher", True)
    if not isinstance(launcher, bool):
        raise StudyError(f"{where}: launcher must be true (run under mpirun) or false")
    profile = block.get("profile", False)
    if not isinstance(profile, (bool, str)) or profile not in PROFILE_MODES:
        raise StudyError(
            f'{where}: profile must be true, false, "once" or "every", got {profile!r}'
        )
    timeout = block.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise StudyError(f"{where}: timeout must be a positive number of seconds, got {timeout!r}")
    env = block.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, (str, int, float)) for v in env.values()):
        raise StudyError(
            f'{where}: env must be a table of variables, e.g. env = {{ OMP_NUM_THREADS = "1" }}'
        )
    return {
        "launcher": launcher,
        "profile": PROFILE_MODES[profile],
        "timeout": float(timeout),
        "repeats": _repeats(block.get("repeats", {}), where),
        "fom": _fom(block, where) if is_command else None,
        "env": tuple(sorted((str(k), str(v)) for k, v in env.items())),
        "command": _command(block, where) if is_command else (),
    }


def command_name(block: dict[str, Any], where: str) -> str:
    command = _command(block, where)
    name = block.get("name") or Path(command[0]).name.replace("{", "").replace("}", "")
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise StudyError(
            f"{where}: name the command with letters, digits, '-', '_' or '.': "
            f'name = "my_model" (got {name!r})'
        )
    return name


def _command(block: dict[str, Any], where: str) -> tuple[str, ...]:
    command = block["command"]
    if isinstance(command, str):
        try:
            command = shlex.split(command)
        except ValueError as error:
            raise StudyError(f"{where}: cannot split the command ({error})") from None
    if (
        not isinstance(command, list)
        or not command
        or not all(isinstance(part, (str, int, float)) for part in command)
    ):
        raise StudyError(
            f"{where}: command must be a non-empty list of arguments, e.g. "
            'command = ["{build}/tests/prof_test_c", "{scratch}"]'
        )
    return tuple(str(part) for part in command)


def _repeats(value: Any, where: str) -> RepeatPolicy:
    if is_int(value):
        value = {"min": value, "max": value}
    if not isinstance(value, dict):
        raise StudyError(
            f"{where}: repeats must be a count or a table, e.g. repeats = "
            "{ warmup = 1, min = 3, max = 10, ci_width = 0.05 }"
        )
    check_keys(value, REPEAT_KEYS, where.split(": ")[0], "repeats")
    policy = RepeatPolicy()
    policy = replace(policy, **{key: value[key] for key in REPEAT_KEYS if key in value})
    if "min" in value and "max" not in value:
        policy = replace(policy, max=max(policy.max, policy.min))
    problems = []
    if not is_int(policy.warmup) or policy.warmup < 0:
        problems.append("warmup must be 0 or more")
    if not is_int(policy.min) or policy.min < 1:
        problems.append("min must be 1 or more")
    elif not is_int(policy.max) or policy.max < policy.min:
        problems.append("max must be an integer at least min")
    if (
        isinstance(policy.ci_width, bool)
        or not isinstance(policy.ci_width, (int, float))
        or policy.ci_width <= 0
    ):
        problems.append("ci_width must be a positive fraction of the median, e.g. 0.05")
    if (
        isinstance(policy.confidence, bool)
        or not isinstance(policy.confidence, (int, float))
        or not 0 < policy.confidence < 1
    ):
        problems.append("confidence must be between 0 and 1, e.g. 0.95")
    if problems:
        raise StudyError(f"{where}: bad repeats: {'; '.join(problems)}")
    return policy


def _fom(block: dict[str, Any], where: str) -> FomSpec:
    value = block.get("fom")
    if value is None:
        return ELAPSED
    if value == "json":
        return FomSpec("json", "", True)  # unit and direction come from the result line
    if not isinstance(value, dict):
        raise StudyError(
            f'{where}: fom must be "json" or a table, e.g. fom = '
            "{ regex = 'rate: (\\S+)', unit = \"steps/s\", higher_is_better = true }"
        )
    check_keys(value, FOM_KEYS, where.split(": ")[0], "fom")
    regex = value.get("regex")
    if regex is not None:
        try:
            re.compile(regex)
        except (re.error, TypeError) as error:
            raise StudyError(
                f"{where}: fom.regex {regex!r} is not a valid regular expression ({error})"
            ) from None
    unit = value.get("unit", "s" if regex is None else "")
    direction = value.get("higher_is_better", regex is not None)
    if not isinstance(direction, bool):
        raise StudyError(f"{where}: fom.higher_is_better must be true or false")
    if regex is None:
        return FomSpec("elapsed", str(unit) or "s", direction)
    return FomSpec("regex", str(unit), direction, regex)
