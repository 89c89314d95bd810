"""Errors a user can act on. The CLI turns any `NeardupError` into one line and exit code 2."""

# How much of a user's value a message quotes: enough to recognise it, never a 50 KB line.
SHOWN_VALUE_CHARS = 80


def cut_text(text: str) -> str:
    """`text` cut to SHOWN_VALUE_CHARS, with "..." where it was cut."""
    return text if len(text) <= SHOWN_VALUE_CHARS else text[: SHOWN_VALUE_CHARS - 3] + "..."


def show_value(value: object) -> str:
    """`repr(value)` cut to SHOWN_VALUE_CHARS, for error messages that quote a user's value."""
    return cut_text(repr(value))


class NeardupError(Exception):
    """Base class: the message says what went wrong and what to do about it."""


class ConfigError(NeardupError):
    """A setting is out of range or a config file is malformed."""


class NotACrawlDump(NeardupError):
    """A file that is not a crawl dump at all (wrong type, no url column, no usable record)."""


class SchemaError(NeardupError):
    """The database was written by an incompatible version of neardup."""


class DatabaseLocked(NeardupError):
    """Another process holds the DuckDB file."""
