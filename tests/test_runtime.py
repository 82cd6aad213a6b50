"""tune_gc, in a process of its own (it changes the collector of the whole process)."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import gc, json, sys, weakref
from litestar_userio.runtime import tune_gc
loaded = gc.get_freeze_count()
tune_gc(*map(int, sys.argv[1:]))

class Node:
    pass

collected = []
a, b = Node(), Node()
a.other, b.other = b, a  # a cycle only the collector frees
weakref.finalize(a, collected.append, True)
del a, b
gc.collect()
print(json.dumps({
    "frozen_before": loaded, "frozen": gc.get_freeze_count(), "threshold": gc.get_threshold(),
    "enabled": gc.isenabled(), "cycle_collected": collected == [True],
}))
"""


def probe(*args: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_the_worker_setting_freezes_the_loaded_objects_and_collects_the_young_less_often():
    seen = probe("50000")

    assert seen["frozen_before"] == 0 and seen["frozen"] > 1000
    assert seen["threshold"] == [50000, 10, 10]
    assert seen["enabled"] is True and seen["cycle_collected"] is True


def test_the_web_setting_only_freezes():
    seen = probe()

    assert seen["frozen"] > 1000
    assert seen["threshold"] == [700, 10, 10]
    assert seen["enabled"] is True and seen["cycle_collected"] is True
