"""The one exception type the CLI turns into a clear message instead of a traceback."""


class EsmperfError(Exception):
    """An error the user can fix; the message says what went wrong and how to fix it."""
