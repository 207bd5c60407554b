"""The report's section of scaling models (model/, Extra-P): per series over ranks, each
quantity's model, its fit quality, the held-out error and the predictions at the next two
scales with their interval. Empty for a store without a rank axis; a note when Extra-P is
not installed (`make setup-extrap`)."""

from esmperf.errors import EsmperfError
from esmperf.model.extrap_fit import model_series
from esmperf.model.predict import (
    INTERVAL_TEXT,
    few_points_text,
    held_out_text,
    next_scales,
    prediction_text,
)
from esmperf.model.series import RECOMMENDED_RANK_COUNTS, Series, load_series
from esmperf.report.html_sections import esc
from esmperf.store.database import Store


def scaling_models_html(store: Store) -> str:
    try:
        series = load_series(store)
    except EsmperfError:
        return ""  # no rank axis: nothing to model
    # A report states what it can stand behind: a model through fewer rank counts than Extra-P
    # recommends is a guess (a demo's 1-2-4 ranks gave p^2.5 * log2(p)^2 terms), so it is named
    # here, not shown; `esmperf predict` still fits it, with the warning.
    modelled = [one for one in series if len(one.ranks) >= RECOMMENDED_RANK_COUNTS]
    few = len(series) - len(modelled)
    note = (
        f"<p class='small'>{few} series with fewer than {RECOMMENDED_RANK_COUNTS} rank counts "
        "(Extra-P's recommendation) get no model here: `esmperf predict STORE --ranks N` fits "
        "them anyway, with a warning.</p>"
        if few
        else ""
    )
    if not modelled:
        return _section(note)
    try:
        tables = [_series_table(one) for one in modelled]
    except EsmperfError as error:
        return _section(f"<p class='small'>{esc(error)}</p>")
    return _section(note + "".join(tables))


def _section(body: str) -> str:
    return (
        "<section id='scaling-models'><h2>Scaling models</h2>"
        "<p class='small'>Extra-P's performance model normal form c0 + sum c * p^i * log2(p)^j, "
        f"fitted to the median repetition at each rank count; {esc(INTERVAL_TEXT)}. The held-out "
        "check refits without the largest rank count and predicts it (docs/predict.md says how "
        f"far to trust them).</p>{body}</section>"
    )


def _series_table(series: Series) -> str:
    scales = next_scales(series)
    rows = []
    for found in model_series(series, scales):
        unit = found.quantity.unit
        cells = [
            esc(found.quantity.name),
            f"<code>{esc(found.model.formula)}</code>",
            "n/a (constant)" if found.model.ar2 is None else f"{found.model.ar2:.4f}",
            f"{found.model.smape:.2f} %",
            esc(held_out_text(found)),
            *(esc(prediction_text(p, unit)) for p in found.predictions),
        ]
        rows.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>")
    head = ["quantity", "model", "adjusted R²", "SMAPE", "held-out check"]
    head += [f"at {ranks} ranks" for ranks in scales]
    ranks = ", ".join(str(r) for r in series.ranks)
    warning = few_points_text(series)
    return (
        f"<h3>{esc(series.label)}</h3><p class='small'>fitted to ranks {ranks}"
        + (f"; <span class='over'>{esc(warning)}</span>" if warning else "")
        + "</p><table><tr>"
        + "".join(f"<th>{esc(h)}</th>" for h in head)
        + "</tr>"
        + "".join(rows)
        + "</table>"
    )
