"""The core: the scheduling path, from a request to a run, and the records it keeps.

Above :mod:`tempsched_lab.time` and :mod:`tempsched_lab.log`. In the order a request meets them:

* :mod:`~tempsched_lab.core.validation` and :mod:`~tempsched_lab.core.requests`: the way in,
  every error naming the argument; :mod:`~tempsched_lab.core.task`: the records kept;
  :mod:`~tempsched_lab.core.triggers`: when a recurring task falls due, and the misfire
  policies (:mod:`~tempsched_lab.core.triggers.misfire`);
* :mod:`~tempsched_lab.core.decision`: the 8-case tree, shared by the three queue designs of
  :mod:`~tempsched_lab.core.queues`;
* :mod:`~tempsched_lab.core.scheduler`: one lock, one way in, one dispatch path; its
  collaborators talk to its :mod:`~tempsched_lab.core.ports`;
  :mod:`~tempsched_lab.core.recorder` writes its steps as log rows;
* :mod:`~tempsched_lab.core.runs` and :mod:`~tempsched_lab.core.executors` (and
  :mod:`~tempsched_lab.core.dask`): where a run happens;
* :mod:`~tempsched_lab.core.moment`: one consistent picture of a scheduler, what a view draws;
  :mod:`~tempsched_lab.core.registry`: the live schedulers of the process.
"""
