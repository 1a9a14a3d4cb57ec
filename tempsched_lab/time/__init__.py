"""Time: where *now* comes from, what drives a scheduler when work falls due, and how a time
reads to a user.

The lowest layer: it imports nothing else of the package.

* :mod:`~tempsched_lab.time.clock`: the :class:`~tempsched_lab.time.clock.Clock` protocol,
  :class:`~tempsched_lab.RealClock` (a worker thread) and :class:`~tempsched_lab.VirtualClock`
  (time moves only when asked), and the driver protocols a scheduler is driven through;
* :mod:`~tempsched_lab.time.wall`: ``time.time()`` values on a real clock's monotonic scale;
* :mod:`~tempsched_lab.time.loop`: an asyncio event loop as a clock, with no thread;
* :mod:`~tempsched_lab.time.scale`: the one time language every view speaks (seconds since
  the clock's origin, or wall-clock time).
"""
