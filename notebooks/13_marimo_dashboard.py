# A live dashboard in marimo: `marimo run notebooks/13_marimo_dashboard.py`
# (or `marimo edit` to change it). marimo shows anywidgets, not ipywidgets containers, so the
# dashboard shows itself here as one anywidget view (queue, newest log rows, case counts) beside
# the interactive timeline, both kept live by its refresher from marimo's event loop.

import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _():
    import marimo as mo

    return (mo,)


@app.cell
def _(mo):
    mo.md(
        """
        # A live dashboard in marimo

        A scheduler on the real clock runs the live scenario: a heartbeat every 0.5 s and, every
        10 s, a round of one-shot tasks that walks several cases of the decision tree. The view
        below follows it: the queue with its countdowns, the newest log rows, the decisions by
        case, and the interactive timeline (wheel to zoom, drag to pan, click a task).
        The controls, the pictures and the history need Jupyter widgets: open
        `notebooks/05_live_dashboard.ipynb` in JupyterLab or Voila for them.
        """
    )
    return


@app.cell
def _():
    import threading

    from tempsched_lab import Scheduler
    from tempsched_lab.demo import LiveScenario
    from tempsched_lab.widgets import Dashboard

    scheduler = Scheduler(name="marimo-dashboard")
    scenario = LiveScenario(scheduler, round_every=10.0).start()
    # an hour at most, whatever happens to the page
    safety_net = threading.Timer(3600, scheduler.shutdown, kwargs={"wait": False})
    safety_net.daemon = True
    safety_net.start()
    dashboard = Dashboard(scheduler)
    dashboard
    return (dashboard,)


if __name__ == "__main__":
    app.run()
