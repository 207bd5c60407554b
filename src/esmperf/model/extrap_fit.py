"""Scaling models fitted by Extra-P (PyPI `extrap`, used as a library; `make setup-extrap`
installs it headless): a series' quantities are written in Extra-P's JSON Lines input format,
read back by Extra-P's own reader, and modelled by its default single-parameter modeler in the
performance model normal form, f(p) = c0 + sum_k c_k * p^i_k * log2(p)^j_k, fitted to the median
of the repetitions at each rank count.

Beside the model: its fit quality as Extra-P reports it (adjusted R^2, SMAPE), the prediction at
the asked rank counts with an interval, and a held-out check. The interval is the spread of the
repetitions carried through refits: the models refitted to the smallest and to the largest
repetition at each rank count predict its ends (none with one repetition per rank count). The
held-out check refits without the largest rank count and states the error of its prediction
there against the median measured (or simulated) there."""

import json
import logging
import statistics
import tempfile
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from esmperf.errors import EsmperfError
from esmperf.model.series import MIN_RANK_COUNTS, Quantity, Series

EXTRAP_VERSION = "4.2.5"
METRIC = "value"  # the one Extra-P metric of our input: each quantity is a call path


@dataclass
class Term:
    """One term c * p^poly * log2(p)^log of the normal form."""

    coefficient: float
    poly: float  # exponent of p
    log: float  # exponent of log2(p)


@dataclass
class Model:
    constant: float
    terms: list[Term]
    ar2: float | None  # adjusted R^2 (None for a constant model: Extra-P says 1 there)
    smape: float  # symmetric mean absolute percentage error, %
    evaluate: Callable[[float], float]

    @property
    def formula(self) -> str:
        scale = sum(abs(t.coefficient) for t in self.terms) + abs(self.constant)
        constant = 0.0 if abs(self.constant) <= 1e-12 * scale else self.constant
        parts = [f"{constant:.4g}"]
        for term in self.terms:
            factors = [f"{abs(term.coefficient):.4g}"]
            if term.poly:
                factors.append("p" if term.poly == 1 else f"p^{term.poly:g}")
            if term.log:
                factors.append("log2(p)" if term.log == 1 else f"log2(p)^{term.log:g}")
            parts.append(("- " if term.coefficient < 0 else "+ ") + " * ".join(factors))
        return " ".join(parts)


@dataclass
class Prediction:
    ranks: int
    value: float
    low: float | None  # the interval (None: one repetition per rank count)
    high: float | None
    clamped: bool = False  # the model left the quantity's range there (below 0, above 100 %)


@dataclass
class HeldOut:
    """The model refitted without the largest rank count, checked there."""

    ranks: int
    predicted: float
    measured: float

    @property
    def error(self) -> float:
        """Relative error of the prediction, % of the measured value."""
        return 100 * (self.predicted - self.measured) / self.measured if self.measured else 0.0


@dataclass
class QuantityModel:
    quantity: Quantity
    model: Model
    predictions: list[Prediction]
    held_out: HeldOut | None


def model_series(series: Series, predict_at: Sequence[int]) -> list[QuantityModel]:
    """Every quantity of `series` modelled, predicted at `predict_at` and checked held out."""
    quantities = series.quantities
    fitted = fit(quantities, "median")
    lows = fit(quantities, "minimum")
    highs = fit(quantities, "maximum")
    held = fit(quantities, "median", leave_out_largest=True)
    found = []
    for quantity in quantities:
        model = fitted[quantity.name]
        bound = _bound(quantity)
        spread = any(len(v) > 1 for v in quantity.values.values())
        predictions = []
        for ranks in predict_at:
            raw = model.evaluate(ranks)
            value = bound(raw)
            ends = tuple(bound(m[quantity.name].evaluate(ranks)) for m in (lows, highs))
            low, high = (min(*ends, value), max(*ends, value)) if spread else (None, None)
            predictions.append(Prediction(ranks, value, low, high, value != raw))
        held_out = None
        if quantity.name in held:
            largest = quantity.ranks[-1]
            held_out = HeldOut(
                largest,
                bound(held[quantity.name].evaluate(largest)),
                statistics.median(quantity.values[largest]),
            )
        found.append(QuantityModel(quantity, model, predictions, held_out))
    return found


def _bound(quantity: Quantity) -> Callable[[float], float]:
    """What a prediction of `quantity` can be: a share 0-100 %; a quantity never measured below
    0 (a time, a count, a rate of steps) >= 0, a model falling below 0 there showing as 0."""
    if quantity.unit == "%":
        return lambda value: min(100.0, max(0.0, value))
    if all(v >= 0 for values in quantity.values.values() for v in values):
        return lambda value: max(0.0, value)
    return float


def fit(
    quantities: Sequence[Quantity], measure: str, leave_out_largest: bool = False
) -> dict[str, Model]:
    """Extra-P's model of each quantity, fitted to the `measure` ("median", "minimum",
    "maximum") of the repetitions at each rank count; the largest rank count left out if asked
    (quantities then left with fewer than MIN_RANK_COUNTS rank counts are not fitted)."""
    rows = []
    for quantity in quantities:
        ranks = quantity.ranks[:-1] if leave_out_largest else quantity.ranks
        if len(ranks) >= MIN_RANK_COUNTS:
            rows += [(quantity.name, r, v) for r in ranks for v in quantity.values[r]]
    if not rows:
        return {}
    with tempfile.TemporaryDirectory(prefix="esmperf-extrap-") as scratch:
        path = Path(scratch) / "input.jsonl"
        write_extrap_input(rows, path)
        return fit_extrap_input(path, measure)


def write_extrap_input(rows: Sequence[tuple[str, int, float]], path: Path) -> Path:
    """Extra-P's JSON Lines input: one line per (quantity, rank count, value); the quantity is
    the call path, the rank count the parameter p."""
    with open(path, "w", encoding="utf-8") as out:
        for name, ranks, value in rows:
            line = {"params": {"p": ranks}, "callpath": name, "metric": METRIC, "value": value}
            out.write(json.dumps(line) + "\n")
    return path


def write_series_input(series: Series, path: Path) -> Path:
    """A series as Extra-P input, every repetition (to open in Extra-P itself)."""
    rows = [(q.name, r, v) for q in series.quantities for r in q.ranks for v in q.values[r]]
    return write_extrap_input(rows, path)


def fit_extrap_input(path: Path, measure: str = "median") -> dict[str, Model]:
    """Read an Extra-P JSON Lines file with Extra-P's reader and model every call path from
    the `measure` of its repetitions."""
    extrap = _extrap()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Extra-P warns below 5 points: series.py says so
        experiment = extrap.read_jsonlines_file(str(path))
        # a modeler object, not its name: ModelGenerator (4.2.5) applies use_measure to a
        # single-parameter modeler only when given the object (by name it fits the mean)
        modeler = extrap.single_parameter_modelers["default"]()
        generator = extrap.ModelGenerator(
            experiment, modeler=modeler, use_measure=extrap.Measure.from_str(measure)
        )
        generator.model_all()
    return {
        callpath.name: _model(found.hypothesis)
        for (callpath, _metric), found in generator.models.items()
    }


def _model(hypothesis: Any) -> Model:  # an Extra-P hypothesis
    function = hypothesis.function
    terms = []
    for compound in function.compound_terms:
        poly = sum(t.exponent for t in compound.simple_terms if t.term_type == "polynomial")
        log = sum(t.exponent for t in compound.simple_terms if t.term_type == "logarithm")
        terms.append(Term(float(compound.coefficient), float(poly), float(log)))
    return Model(
        float(function.constant_coefficient),
        terms,
        float(hypothesis.AR2) if terms else None,
        float(hypothesis.SMAPE),
        lambda p: float(function.evaluate(p)),
    )


class _Extrap:
    """The few Extra-P names used here, imported on first use."""

    def __init__(self) -> None:
        logging.getLogger("extrap").setLevel(logging.ERROR)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # its marshmallow 3 deprecations
                from extrap.entities.measurement import Measure
                from extrap.fileio.file_reader.jsonlines_file_reader import read_jsonlines_file
                from extrap.modelers import single_parameter
                from extrap.modelers.model_generator import ModelGenerator
        except ImportError as error:
            raise EsmperfError(
                f"Extra-P is not installed here ({error}): run `make setup-extrap` "
                f"(extrap {EXTRAP_VERSION} without its GUI, see docs/predict.md)"
            ) from None
        self.Measure = Measure
        self.read_jsonlines_file = read_jsonlines_file
        self.ModelGenerator = ModelGenerator
        self.single_parameter_modelers = single_parameter.all_modelers


_loaded: list[_Extrap] = []


def _extrap() -> _Extrap:
    if not _loaded:
        _loaded.append(_Extrap())
    return _loaded[0]
