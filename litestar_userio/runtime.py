"""Process-wide settings for a process that serves or works in bulk: the arq worker, and a host's web process.

The plugin changes nothing process-wide by itself: the worker command calls `tune_gc`, and a host opts in for its
web process (`docs/deployment.md`; the example app's `python -m example_app` does).
"""

from __future__ import annotations

import gc

__all__ = ["WORKER_GC_THRESHOLD", "tune_gc"]

WORKER_GC_THRESHOLD = 50_000
"""The worker's young-generation threshold. A chunk's parse allocates its records in a burst with the collector
paused; at Python's 700 the collections that followed scanned them again and again while the chunk held them
(`bench/import.py`: 0.9 of a worker's 5.0 CPU-s, 0.1 s at 50 000). A collection then pauses the worker 10-40 ms
(an export's pages make the longer ones), which only delays a job."""


def tune_gc(young_threshold: int | None = None) -> None:
    """Freeze what is loaded so far; with `young_threshold`, collect the young generation that much less often.

    Call once, after the application is imported. Frozen objects (modules, metadata, the app) are never scanned
    again: a full collection took 80-90 ms in each of our processes because of them, in the middle of a request or
    a job. Cyclic garbage made later is still collected.
    """
    gc.freeze()
    if young_threshold is not None:
        _, middle, old = gc.get_threshold()
        gc.set_threshold(young_threshold, middle, old)
