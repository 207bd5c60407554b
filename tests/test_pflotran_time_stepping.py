"""The PFLOTRAN proxy's deck time stepping (`--time-stepping deck`, native/apps/pflotran/
timestep.c; docs/pflotran.md "The deck's time stepping"): each step's size against PFLOTRAN's
rule restated here from its source (pm_rt.F90 PMRTUpdateTimestep, timestepper_SNES.F90
TimestepperSNESUpdateDT, timestepper_base.F90 TimestepperBaseSetTargetTime and CutDT, upstream
980d8d569da5), the exact counts of a small case, the fixed mode unchanged, the errors.

Small grids (8^3, one rank, well under a second a run): the counts are this program's, exact."""

import re

import pytest

from test_pflotran import FIRST, binary, launch, result_line

YEAR = 365 * 24 * 3600.0  # pflotran_constants.F90 DAYS_PER_YEAR = 365
SMALL = ("--size", "S", "--nx", "8", "--ny", "8", "--nz", "8", "--solver", "gmres")
STEP = re.compile(r"step +(\d+) +t (\S+) s +dt (\S+) s +newton +(\d+) \((\w+)\)")
CUT = re.compile(r"step +(\d+) +cut: newton (\d+) \((\w+)\), dt now (\S+) s")


class DeckClock:
    """The calcite deck's step control as PFLOTRAN 2023 applies it: 1e-6 y first, at most 1 y,
    waypoints every year (OUTPUT PERIODIC TIME 1 y) to 10 y matched within a tenth of a step,
    the size held before a match restored after it; growth by tfac(n) for n <= TS_ACCELERATION 8
    Newton iterations (2 up to 5, then 1.8, 1.6, 1.4), else halved, at most doubled; a failed
    solve halves the step, which then keeps its size for 5 steps."""

    TFAC = (2.0, 2.0, 2.0, 2.0, 2.0, 1.8, 1.6, 1.4, 1.2, 1.0, 1.0, 1.0, 1.0)

    def __init__(self):
        self.dt, self.time, self.held = 1e-6 * YEAR, 0.0, 0
        self.before_match, self.revert, self.cut = 0.0, False, False

    def begin(self) -> float:
        if self.cut:
            self.cut = False
        elif self.revert:
            self.dt = min(self.before_match, YEAR)
        self.revert = False
        self.before_match = self.dt
        self.dt = min(self.dt, YEAR)
        waypoint = min(10 * YEAR, (int(self.time / YEAR * (1 + 1e-12)) + 1) * YEAR)
        if self.time + 1.1 * self.dt >= waypoint:
            self.dt, self.revert = waypoint - self.time, True  # within dt_max: 1 y steps
        return self.dt

    def cut_step(self) -> float:
        self.dt, self.cut = self.dt / 2, True
        return self.dt

    def end(self, newton: int) -> None:
        self.time += self.dt
        if self.cut:
            self.held = 1
        elif self.held:
            self.held += 1
        if self.held > 5:
            self.held = 0
        if self.held:
            return
        factor = self.TFAC[newton - 1] if newton <= 8 else 0.5
        self.dt = min(2 * self.dt, factor * self.dt, YEAR)


def deck_run(*extra: str):
    binary(FIRST)
    done = launch(FIRST, 1, *SMALL, "--time-stepping", "deck", *extra)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout, result_line(done.stdout)


def check_against_rule(stdout: str) -> list[float]:
    """Each step's printed size (and each cut's) is the rule's, from the Newton counts."""
    clock, sizes, expected = DeckClock(), [], None
    for line in stdout.splitlines():
        if cut := CUT.match(line):
            if expected is None:
                clock.begin()
            expected = clock.cut_step()
            assert float(cut[4]) == pytest.approx(expected, rel=1e-4), line
        elif step := STEP.match(line):
            expected = expected if expected is not None else clock.begin()
            assert float(step[3]) == pytest.approx(expected, rel=1e-4), line
            assert float(step[2]) == pytest.approx(clock.time + expected, rel=1e-4), line
            clock.end(int(step[4]))
            sizes.append(expected)
            expected = None
    return sizes


def test_deck_steps_follow_pflotrans_rule_to_the_final_time():
    """8^3, the deck's stepping: from 1e-6 y, growing by the Newton counts' factors, the yearly
    waypoints hit (the step before each shortened, the next restored), 1 y steps to 10 y: 36
    steps, 197 Newton and 699 GMRES iterations (2026-11-27). Fails on the old code (no
    --time-stepping: 50 steps of 2.5e6 s)."""
    stdout, result = deck_run()
    sizes = check_against_rule(stdout)
    model = result["model"]
    assert result["steps"] == len(sizes) == 36
    assert (result["newton"]["iterations"], result["newton"]["linear_iterations"]) == (197, 699)
    assert result["newton"]["time_step_cuts"] == 0
    assert model["dt_first"] == pytest.approx(1e-6 * YEAR, rel=1e-12)
    assert model["dt_last"] == model["dt_largest"] == pytest.approx(YEAR, rel=1e-12)
    assert model["time_reached"] == pytest.approx(10 * YEAR, rel=1e-12)
    assert sum(sizes) == pytest.approx(10 * YEAR, rel=1e-4)
    assert sizes[-7:] == pytest.approx([YEAR] * 7, rel=1e-4) and max(sizes[:-7]) < YEAR
    assert result["params"]["time_stepping"] == "deck"
    assert result["verification"]["passed"] is True


def test_a_failed_newton_solve_halves_the_step_which_then_holds_five_steps():
    """--newton-max 6: step 12's solve fails (6 iterations, not converged), is halved and solved
    again; that step and the next 5 keep the halved size, then growth resumes (5 such cuts in
    all). The run stops at --steps (50) before the final time."""
    stdout, result = deck_run("--newton-max", "6")
    sizes = check_against_rule(stdout)
    assert [int(m[1]) for m in CUT.finditer(stdout)] == [12, 20, 28, 35, 42]
    assert result["newton"]["time_step_cuts"] == 5
    assert result["newton"]["failed_steps"] == 0
    assert sizes[11:17] == pytest.approx([sizes[11]] * 6, rel=1e-12)
    assert sizes[17] > sizes[16]
    assert result["steps"] == len(sizes) == 50
    assert result["model"]["time_reached"] == pytest.approx(sum(sizes), rel=1e-4)
    assert result["model"]["time_reached"] < YEAR


def test_a_step_that_fails_after_16_cuts_ends_the_run():
    """--newton-max 1: no solve converges; the first step is halved 16 times
    (max_time_step_cuts), 17 solves in all, then the run stops there, as PFLOTRAN stops, and
    the verification fails (status 2)."""
    binary(FIRST)
    done = launch(FIRST, 1, *SMALL, "--time-stepping", "deck", "--newton-max", "1")
    assert done.returncode == 2, done.stderr[-2000:]
    result = result_line(done.stdout)
    newton = result["newton"]
    assert (newton["time_step_cuts"], newton["failed_steps"], newton["iterations"]) == (16, 1, 17)
    assert result["steps"] == 1 and result["model"]["time_reached"] == 0
    assert [float(m[4]) for m in CUT.finditer(done.stdout)][-1] == pytest.approx(
        1e-6 * YEAR / 2**16, rel=1e-4
    )
    assert result["verification"]["passed"] is False


def test_fixed_steps_unchanged():
    """The default stays --steps steps of --dt (the matched case, the seed studies): sizes and
    times exact multiples."""
    binary(FIRST)
    done = launch(FIRST, 1, *SMALL, "--steps", "3", "--dt", "1e5")
    assert done.returncode == 0, done.stderr[-2000:]
    result = result_line(done.stdout)
    model = result["model"]
    assert result["params"]["time_stepping"] == "fixed"
    assert model["dt_first"] == model["dt_last"] == model["dt_largest"] == 1e5
    assert model["time_reached"] == 3e5 and result["steps"] == 3
    times = [float(m[2]) for m in STEP.finditer(done.stdout)]
    assert times == [1e5, 2e5, 3e5]


@pytest.mark.parametrize(
    "args, message",
    [
        (("--case", "tracer"), "--time-stepping deck: the deck's time stepping is the calcite"),
        (("--dt", "1e5"), "--dt 100000: the deck's time stepping chooses each step's size"),
    ],
)
def test_deck_stepping_errors(args, message):
    binary(FIRST)
    done = launch(FIRST, 1, *SMALL, "--time-stepping", "deck", *args)
    assert done.returncode == 1
    assert message in done.stderr
