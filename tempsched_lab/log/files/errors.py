"""What goes wrong with event-log files, as exceptions and warnings of their own."""

from __future__ import annotations

__all__ = [
    "ForkedLogError",
    "IncompleteLogError",
    "IncompleteLogWarning",
    "LogFileError",
    "TruncatedLogError",
    "UncheckedLogWarning",
]


class LogFileError(ValueError):
    """An event-log file (or spill directory) that cannot be read back as it was written.

    The message names the file, and where it can, the column, the row and the value.
    """


class TruncatedLogError(LogFileError):
    """An event-log file that was cut short: it holds fewer rows than it was written with."""


class IncompleteLogError(LogFileError):
    """A spill directory closed without every row of its log: a segment could not be written.

    The message names the directory, the ``seq`` range that is missing and why it
    is missing (the error of the failed write). ``read_log(directory,
    on_incomplete="warn")`` reads the rows that are there instead.
    """


class ForkedLogError(LogFileError):
    """A copy of a spilled log in a child of ``os.fork()``: it never writes the spill directory.

    The parent process (and its log's thread) go on writing the directory; the child's copy
    keeps the rows it records in memory. Not raised: ``log.spill_error`` holds it, and
    ``flush()`` and ``close_spill()`` return False at once. The message names both processes
    and the directory.
    """


class UncheckedLogWarning(UserWarning):
    """A log read without the metadata that proves it whole (a file from before format 2)."""


class IncompleteLogWarning(UserWarning):
    """Rows of a log are not on disk: a spill directory read or closed without all of them."""
