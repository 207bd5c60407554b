"""The one exception type the CLI turns into a clear message instead of a traceback, and the
message for a misspelt key that the readers of study files share."""

import difflib
from collections.abc import Sequence


class EsmperfError(Exception):
    """An error the user can fix; the message says what went wrong and how to fix it."""


def unknown_key(key: str, allowed: Sequence[str], where: str) -> str:
    """The message for a key a table does not take: the closest allowed one, and all of them."""
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown key {key!r} in {where}{hint}; allowed: {', '.join(allowed)}"
