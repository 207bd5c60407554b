"""A store's scaling models (series.py, extrap_fit.py) and their text: what `esmperf predict`
prints and the report's section (report/scaling_models.py) shows."""

from collections.abc import Sequence
from pathlib import Path

from esmperf.model.extrap_fit import Prediction, QuantityModel, model_series
from esmperf.model.series import RECOMMENDED_RANK_COUNTS, Series, load_series
from esmperf.store.database import Store

INTERVAL_TEXT = (
    "interval: models refitted to the smallest and to the largest repetition at each rank count"
)


def predict_store(
    store_path: Path, predict_at: Sequence[int], from_ranks: int = 1
) -> list[tuple[Series, list[QuantityModel]]]:
    with Store(Path(store_path), read_only=True) as store:
        series = load_series(store, from_ranks)
    return [(one, model_series(one, predict_at)) for one in series]


def next_scales(series: Series, count: int = 2) -> list[int]:
    """The rank counts after the study's largest, continuing its step (x2 by default)."""
    ranks = series.ranks
    step = ranks[-1] / ranks[-2] if len(ranks) > 1 and ranks[-2] > 0 else 2
    factor = step if step > 1 else 2
    return [round(ranks[-1] * factor**k) for k in range(1, count + 1)]


def prediction_text(prediction: Prediction, unit: str) -> str:
    text = f"{prediction.value:.4g}"
    if prediction.low is not None and prediction.high is not None:
        text += f" [{prediction.low:.4g}, {prediction.high:.4g}]"
    text = f"{text} {unit}".rstrip()
    return f"{text} (clamped: the model leaves the range there)" if prediction.clamped else text


def fit_text(found: QuantityModel) -> str:
    """Adjusted R^2 and SMAPE, as Extra-P computes them; a constant model has no R^2."""
    model = found.model
    ar2 = "n/a (constant)" if model.ar2 is None else f"{model.ar2:.4f}"
    return f"adjusted R^2 {ar2}, SMAPE {model.smape:.2f} %"


def held_out_text(found: QuantityModel) -> str:
    held = found.held_out
    if held is None:
        return "held-out check: needs one more rank count"
    unit = found.quantity.unit
    return (
        f"held out {held.ranks} ranks: predicted {held.predicted:.4g}, measured "
        f"{held.measured:.4g} {unit}, error {held.error:+.1f} %"
    )


def few_points_text(series: Series) -> str:
    """A warning for a series with fewer rank counts than Extra-P recommends, or ""."""
    if len(series.ranks) >= RECOMMENDED_RANK_COUNTS:
        return ""
    return (
        f"only {len(series.ranks)} rank counts (Extra-P recommends {RECOMMENDED_RANK_COUNTS}): "
        "the model is a guess through few points"
    )


def render_lines(series: Series, models: list[QuantityModel]) -> list[str]:
    ranks = ",".join(str(r) for r in series.ranks)
    lines = [f"{series.label}  (ranks {ranks}; {INTERVAL_TEXT})"]
    if warning := few_points_text(series):
        lines.append(f"  {warning}")
    for found in models:
        quantity = found.quantity
        model = found.model
        predictions = "; ".join(
            f"at {p.ranks}: {prediction_text(p, quantity.unit)}" for p in found.predictions
        )
        lines += [
            f"  {quantity.name}: {model.formula}",
            f"    {fit_text(found)}; {predictions}",
            f"    {held_out_text(found)}",
        ]
    return lines
