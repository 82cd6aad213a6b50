import time
import uuid

from litestar_userio.ids import new_id, new_task_id


def test_row_ids_are_distinct_canonical_version_7_uuids_of_now():
    ids = [new_id() for _ in range(3000)]  # several batches

    assert len(set(ids)) == len(ids)
    for text in ids:
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert parsed.version == 7
        assert parsed.variant == uuid.RFC_4122
        assert abs(int.from_bytes(parsed.bytes[:6], "big") / 1000 - time.time()) < 60


def test_row_ids_use_every_variant_and_random_digit():
    ids = [new_id() for _ in range(2000)]

    assert {text[19] for text in ids} == set("89ab")
    assert {c for text in ids for c in text[15:18] + text[20:23] + text[24:]} == set("0123456789abcdef")


def test_task_ids_are_the_prefix_and_32_crockford_characters():
    task_id = new_task_id("task_")

    assert task_id.startswith("task_")
    assert len(task_id) == 37
    assert set(task_id[5:]) <= set("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
