"""The event log: one typed row per observable scheduling step, and everything it is stored as.

Above :mod:`tempsched_lab.time` only; it knows no scheduler (a scheduler writes to it through
its recorder, a layer up in :mod:`tempsched_lab.core`).

* :mod:`~tempsched_lab.log.schema` states the row kinds and columns once;
  :mod:`~tempsched_lab.log.kinds` names the kinds for the code that reads rows;
* :mod:`~tempsched_lab.log.eventlog`: :class:`~tempsched_lab.EventLog`, its writer and readers;
* :mod:`~tempsched_lab.log.rows` (the open chunk, held flat),
  :mod:`~tempsched_lab.log.columns` (sealed chunks, column by column),
  :mod:`~tempsched_lab.log.compactor` (the logs' one background thread),
  :mod:`~tempsched_lab.log.frame` (stored columns -> a typed DataFrame);
* :mod:`~tempsched_lab.log.subscriptions`: callbacks fed off the scheduler's lock;
* :mod:`~tempsched_lab.log.audit`: the conservation laws a log checks of itself;
* :mod:`~tempsched_lab.log.files`: CSV and Parquet files, spilled segments, a service's
  lineage across restarts.
"""
