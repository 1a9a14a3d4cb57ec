"""Reading a log: questions asked of its rows, answered as frames, queue states and sentences.

Above :mod:`tempsched_lab.core`; it reads rows and never writes them, so it works alike on a
live log, a frame read from disk and a mirror of a service.

* :mod:`~tempsched_lab.reading.replay`: the queue's state at any row;
* :mod:`~tempsched_lab.reading.analysis`: case counts, lateness, a task's history, periodic runs;
* :mod:`~tempsched_lab.reading.sentences`: what each row says, in one plain sentence;
* :mod:`~tempsched_lab.reading.narration`: those sentences as the rows happen, at a readable pace.
"""
