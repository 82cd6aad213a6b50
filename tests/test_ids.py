import time
import uuid

import pytest

from userio_core import ids
from userio_core.ids import new_id, new_task_id


def _millis(text: str) -> int:
    return int.from_bytes(uuid.UUID(text).bytes[:6], "big")


def test_row_ids_are_distinct_canonical_version_7_uuids_of_now():
    row_ids = [new_id() for _ in range(3000)]  # several batches

    assert len(set(row_ids)) == len(row_ids)
    for text in row_ids:
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert parsed.version == 7
        assert parsed.variant == uuid.RFC_4122
        assert abs(_millis(text) / 1000 - time.time()) < 60


def test_row_ids_use_every_variant_and_random_digit():
    row_ids = [new_id() for _ in range(2000)]

    assert {text[19] for text in row_ids} == set("89ab")
    assert {c for text in row_ids for c in text[15:18] + text[20:23] + text[24:]} == set("0123456789abcdef")


@pytest.mark.parametrize("seconds_later", [5, -5], ids=["clock-moved-on", "clock-set-back"])
def test_a_row_id_carries_the_time_it_is_given_not_its_batchs(monkeypatch, seconds_later):
    drawn = time.time_ns()
    monkeypatch.setattr(ids.time, "time_ns", lambda: drawn)
    new_id()  # a batch drawn now, or a moment ago
    monkeypatch.setattr(ids.time, "time_ns", lambda: drawn + seconds_later * 10**9)

    later = new_id()

    assert _millis(later) == (drawn + seconds_later * 10**9) // 10**6


def test_task_ids_are_the_prefix_and_32_crockford_characters():
    task_id = new_task_id("task_")

    assert task_id.startswith("task_")
    assert len(task_id) == 37
    assert set(task_id[5:]) <= set("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
