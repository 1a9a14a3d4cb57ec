"""What goes wrong with event-log files, as exceptions and a warning of their own."""

from __future__ import annotations

__all__ = ["LogFileError", "TruncatedLogError", "UncheckedLogWarning"]


class LogFileError(ValueError):
    """An event-log file (or spill directory) that cannot be read back as it was written.

    The message names the file, and where it can, the column, the row and the value.
    """


class TruncatedLogError(LogFileError):
    """An event-log file that was cut short: it holds fewer rows than it was written with."""


class UncheckedLogWarning(UserWarning):
    """A log read without the metadata that proves it whole (a file from before format 2)."""
