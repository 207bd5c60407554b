"""Configurations measured here, interleaved in randomised rounds (issue 26): each round runs
one repetition of every configuration that still has one to run, in an order shuffled afresh
each round by a seeded generator (the seed is stored with the session, so an order can be
replayed). A background load that rises or falls during a study then falls on every
configuration alike, instead of on whichever ran last: compared configurations are measured
under the same conditions, and the drift across rounds is measured rather than mistaken for a
knob's effect (Hoefler & Belli, SC15, rule 9: randomise the order of experiments).

A configuration's own repetitions stay in order (warm-up, measured, then its profiled run);
one that needs more repetitions than the others (its confidence interval still wide) goes on
alone in later rounds. Like side_by_side.py, the generators (their store writes) run in this
thread; unlike it, one command runs at a time."""

import random
from collections.abc import Callable, Iterable

from esmperf.environment import BusyBetween
from esmperf.study.execute import Execution, RunInterrupted
from esmperf.study.side_by_side import Request, Steps, run_request


def run_in_rounds(
    all_steps: Iterable[Steps],
    execute: Callable[..., Execution],
    order: random.Random,
    on_round: Callable[[int, int], None] | None = None,
) -> int:
    """Drive the configurations' generators one repetition each per round, the round's order
    drawn from `order`; `on_round(round, configurations)` is told as each round starts.
    Returns the number of rounds run."""
    active: list[tuple[Steps, Request]] = []
    for steps in all_steps:
        first = _advance(steps, None)
        if first is not None:
            active.append((steps, first))
    busy = BusyBetween()  # one command at a time: the load is sampled over the gaps between
    rounds = 0
    while active:
        rounds += 1
        order.shuffle(active)
        if on_round is not None:
            on_round(rounds, len(active))
        still = []
        for steps, request in active:
            try:
                ran = run_request(execute, request, round_number=rounds, busy=busy.before)
            except RunInterrupted as stopped:
                steps.throw(stopped)  # the configuration records it, then stops the study
                raise
            busy.ended()
            following = _advance(steps, ran)
            if following is not None:
                still.append((steps, following))
        active = still
    return rounds


def _advance(steps: Steps, ran: object) -> Request | None:
    """The configuration's next command, or None when it has no more."""
    try:
        return next(steps) if ran is None else steps.send(ran)  # type: ignore[arg-type]
    except StopIteration:
        return None
