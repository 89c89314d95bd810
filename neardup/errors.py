"""Errors a user can act on. The CLI turns any `NeardupError` into one line and exit code 2."""


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
