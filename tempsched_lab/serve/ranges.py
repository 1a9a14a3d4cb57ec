"""``GET /v1/log``'s answer: a range of rows as an Arrow IPC stream, written a batch at a time.

The answer is never built whole. A range is checked for missing rows first
(:meth:`~.reader.LogReader.first_gap`: from what the reader knows of memory, the
lineage and the spill segments, without reading a row), so a range with a gap is
refused with 409 before a byte is sent. Then the rows are read a reader's batch at a
time (at most :data:`~.reader.CATCH_UP` row objects), each batch made into one Arrow
record batch and sent before the next is read: one request holds a few batches
whatever its range (the schema, one batch's row objects and their Arrow bytes,
:data:`PIECE` rows of encoded bytes waiting for the socket), plus the shared catch-up
frames every reader uses (:data:`~.reader.KEEP_FRAMES`).

Should rows vanish while the answer is sent (a segment deleted meanwhile), the stream
is cut without the Arrow end-of-stream marker: a client reads an error (a truncated
stream), never a short table that looks complete.

>>> from tempsched_lab import Scheduler, VirtualClock
>>> from tempsched_lab.serve.reader import LogReader
>>> s = Scheduler(VirtualClock())
>>> _ = s.schedule(print, delay=1.0)
>>> import pyarrow as pa
>>> body = b"".join(RangeWriter(LogReader(s.log), 0, 1).pieces())
>>> pa.ipc.open_stream(body).read_all().column("kind").to_pylist()
['schedule']
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .wire import COLUMN_NAMES, SCHEMA_VERSION

if TYPE_CHECKING:
    from .reader import Gap, LogReader

__all__ = ["PIECE", "RangeCut", "RangeWriter", "arrow_schema"]

#: Rows encoded per piece handed to the server (one hop to a worker thread each).
PIECE = 16_384
#: Looks (10 ms apart) for rows held in memory while their segment is being written.
_WAITS = 200


class RangeCut(Exception):
    """Rows of the range vanished while it was being sent (the answer is cut, not shortened)."""


def arrow_schema(reader: LogReader, log_id: str) -> Any:
    """The Arrow schema of the feed's row objects, its metadata naming the log."""
    import pyarrow as pa

    from ..log.schema import COLUMNS

    types = {
        "seq": pa.int64(),
        "float": pa.float64(),
        "int": pa.int64(),
        "kind": pa.string(),
        "case": pa.int8(),
        "origin": pa.string(),
        "bool": pa.bool_(),
        "cat": pa.string(),
        "text": pa.string(),
    }
    fields = [pa.field(c.name, types[c.store]) for c in COLUMNS]
    meta = {
        "tempsched.time_origin": json.dumps(reader.origin),
        "tempsched.schema": str(SCHEMA_VERSION),
        "tempsched.log_id": log_id,
    }
    return pa.schema(fields, metadata=meta)


class RangeWriter:
    """Rows ``[start, stop)`` of ``reader`` as Arrow IPC bytes, piece by piece (thread-safe
    to drive from one worker thread at a time).

    :meth:`gap` says, before anything is sent, whether the range has missing rows;
    :meth:`pieces` yields the stream's bytes: the schema first, then about :data:`PIECE`
    rows at a time, then the end-of-stream marker.
    """

    def __init__(self, reader: LogReader, start: int, stop: int, *, log_id: str = "") -> None:
        self.reader = reader
        self.start = start
        self.stop = stop
        self.log_id = log_id
        #: rows sent so far
        self.sent = 0

    def gap(self) -> Gap | None:
        """The first stretch of the range whose rows exist nowhere (``None``: none)."""
        return self.reader.first_gap(self.start, self.stop)

    def pieces(self) -> Iterator[bytes]:
        """The answer's bytes (a generator: each piece is made when asked for)."""
        import pyarrow as pa

        schema = arrow_schema(self.reader, self.log_id)
        sink = io.BytesIO()  # emptied at every piece: it holds one piece at most
        writer = pa.ipc.new_stream(pa.PythonFile(sink, mode="w"), schema)
        cursor = self.start
        waits = 0
        pending = 0
        if self.start >= self.stop:
            writer.write_batch(
                pa.RecordBatch.from_arrays(
                    [pa.array([], type=f.type) for f in schema], schema=schema
                )
            )
        while cursor < self.stop:
            batch = self.reader.read(cursor)
            if batch.gap is not None:
                raise RangeCut(f"rows {batch.gap.first}..{batch.gap.last}: {batch.gap.why}")
            rows = [r for r in batch.rows if r["seq"] < self.stop]
            if not rows:
                waits += 1  # held in memory while their segment is written: a moment
                if waits > _WAITS:
                    raise RangeCut(f"rows from {cursor} were not readable within 2 s")
                threading.Event().wait(0.01)
                continue
            waits = 0
            arrays = [
                pa.array([r[name] for r in rows], type=schema.field(name).type)
                for name in COLUMN_NAMES
            ]
            writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=schema))
            cursor = rows[-1]["seq"] + 1
            pending += len(rows)
            self.sent += len(rows)
            del rows, arrays, batch  # this batch's row objects go before the next is read
            if pending >= PIECE:
                yield _take(sink)
                pending = 0
        writer.close()
        yield _take(sink)


def _take(sink: io.BytesIO) -> bytes:
    """The bytes written to ``sink`` so far, leaving it empty (the stream's writer goes on)."""
    data = sink.getvalue()
    sink.seek(0)
    sink.truncate()
    return data
