"""The benchmarks' way of printing repeated figures: "median [min..max]", or the one value."""

import statistics


def spread(values: list[float], digits: int = 1) -> str:
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return (
        f"{statistics.median(values):.{digits}f} "
        f"[{min(values):.{digits}f}..{max(values):.{digits}f}]"
    )
