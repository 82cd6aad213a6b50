"""tune_gc and collecting_every, each in a process of its own (they change the collector of the whole process)."""

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


def test_a_young_threshold_freezes_the_loaded_objects_and_collects_the_young_less_often():
    seen = probe("50000")

    assert seen["frozen_before"] == 0 and seen["frozen"] > 1000
    assert seen["threshold"] == [50000, 10, 10]
    assert seen["enabled"] is True and seen["cycle_collected"] is True


def test_the_web_setting_only_freezes():
    seen = probe()

    assert seen["frozen"] > 1000
    assert seen["threshold"] == [700, 10, 10]
    assert seen["enabled"] is True and seen["cycle_collected"] is True


CLOCK_PROBE = """
import asyncio, gc, json, weakref
from litestar_userio.runtime import collecting_every

class Node:
    pass

def cycle(collected):
    a, b = Node(), Node()
    a.other, b.other = b, a
    weakref.finalize(a, collected.append, True)

async def main():
    seen = {}
    collected = []
    async with collecting_every(0.05):
        seen["enabled_inside"] = gc.isenabled()
        cycle(collected)
        for _ in range(20_000):  # far past Python's threshold: no collection counted by allocations
            [[]]
        seen["collected_before_the_tick"] = collected == [True]
        deadline = asyncio.get_running_loop().time() + 10
        while not collected and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)
        seen["collected_on_the_tick"] = collected == [True]
    seen["enabled_after"] = gc.isenabled()
    print(json.dumps(seen))

asyncio.run(main())
"""


def test_the_worker_collects_on_a_clock_and_gives_the_collector_back_after():
    done = subprocess.run([sys.executable, "-c", CLOCK_PROBE], capture_output=True, text=True, check=True)

    assert json.loads(done.stdout) == {
        "enabled_inside": False,
        "collected_before_the_tick": False,
        "collected_on_the_tick": True,
        "enabled_after": True,
    }
