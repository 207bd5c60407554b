"""`esmperf predict STORE --ranks 256`: per series of a study over ranks, Extra-P's scaling model
of each quantity (model/), its fit quality, its prediction at the asked rank counts with an
interval, and the held-out check (docs/predict.md)."""

import argparse
from pathlib import Path
from typing import Any

from rich.markup import escape

from esmperf.errors import EsmperfError
from esmperf.study.cli_common import split_list


def add_predict_command(commands: Any) -> None:
    predict = commands.add_parser(
        "predict",
        help="scaling models (Extra-P) of a study over ranks, predicted at other rank counts",
        description="Fit a performance model c0 + sum c * p^i * log2(p)^j (Extra-P) to each "
        "series' figure of merit, MPI share and MPI time by function and region; print it "
        "with its fit quality, its prediction at --ranks with an interval, and the error of "
        "a model fitted without the largest rank count, predicted there.",
        epilog="example: esmperf predict results/pop.duckdb --ranks 256,1024",
    )
    predict.add_argument("store", type=Path, help="the study's .duckdb file")
    predict.add_argument(
        "--ranks",
        type=split_list,
        required=True,
        help="rank counts to predict at, comma-separated",
    )
    predict.add_argument(
        "--from-ranks",
        type=int,
        default=1,
        metavar="N",
        help="model the rank counts from N on (e.g. 2: leave out a serial run, which exchanges "
        "no halo and so follows another law; default 1: all)",
    )
    predict.add_argument(
        "--extrap-input",
        type=Path,
        metavar="DIR",
        help="also write each series as Extra-P JSON Lines input into DIR (opens in Extra-P)",
    )
    predict.set_defaults(handler=_predict)


def _predict(args: argparse.Namespace) -> int:
    from esmperf.cli import console
    from esmperf.model.extrap_fit import write_series_input
    from esmperf.model.predict import predict_store, render_lines

    ranks = _rank_counts(args.ranks)
    if args.from_ranks < 1:
        raise EsmperfError(f"--from-ranks {args.from_ranks}: give a positive rank count, e.g. 2")
    modelled = predict_store(args.store, ranks, args.from_ranks)
    for series, models in modelled:
        for line in render_lines(series, models):
            console.print(escape(line), highlight=False, soft_wrap=True)
        console.print()
    if args.extrap_input:
        args.extrap_input.mkdir(parents=True, exist_ok=True)
        for number, (series, _models) in enumerate(modelled, 1):
            path = write_series_input(series, args.extrap_input / f"series-{number}.jsonl")
            console.print(f"Extra-P input: {escape(str(path))} ({escape(series.label)})")
    return 0


def _rank_counts(texts: list[str]) -> list[int]:
    try:
        counts = [int(text) for text in texts]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1:
        raise EsmperfError(
            f"--ranks {','.join(texts)}: give positive whole rank counts, e.g. --ranks 256,1024"
        )
    return counts
