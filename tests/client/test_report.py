"""The report journal `--resume` reads: torn lines, requests in flight, answers lost, one writer at a time."""

from __future__ import annotations

import json
from datetime import timedelta

import jwt
import msgspec
import pytest

from tests.conftest import admin_key
from userio_client.client import TokenSource
from userio_client.report import ReportError, ReportWriter, read_report
from userio_core.clock import FrozenClock


def write(path, *lines: bytes) -> None:
    path.write_bytes(b"".join(lines))


HEADER = b'{"run":{"version":1,"identifier":"email","upsert":false}}\n'


def test_resume_state_from_a_report(tmp_path):
    path = tmp_path / "report.ndjson"
    write(
        path,
        HEADER,
        b'{"submit":[0,2]}\n',
        b'{"task":"task_A","indices":[0,2]}\n',
        b'{"submit":[3,5]}\n',
        b'{"task":"task_B","indices":[3,5]}\n',
        b'{"submit":[6,9]}\n',
        b'{"submit":[10,11]}\n',
        b'{"refused":[10,11]}\n',
        b'{"index":0,"task":"task_A","outcome":"inserted","record":{"email":"a@x.com"}}\n',
        b'{"index":1,"task":"task_A","outcome":"failed","errors":[]}\n',
        b'{"index":2,"task":"task_A","outcome":"skipped"}\n',
        b'{"index":3,"task":"task_B","outcome":"updated"}\n',
        b'{"summary":{"records":12}}\n',
    )
    state = read_report(path)
    assert state.header["identifier"] == "email"
    assert state.tasks == {0: (2, "task_A"), 3: (5, "task_B")}
    assert state.uncertain == [(6, 9)]  # sent, never answered; 10-11 was refused: nothing created
    assert [state.outcome(i) for i in range(6)] == ["inserted", "failed", "skipped", "updated", None, None]
    assert state.counts == {"inserted": 1, "updated": 1, "skipped": 1, "failed": 1}


def test_a_torn_last_line_is_cut_off(tmp_path):
    path = tmp_path / "report.ndjson"
    write(path, HEADER, b'{"task":"task_A","indices":[0,2]}\n', b'{"index":0,"task":"task_A","outc')
    state = read_report(path)
    assert state.done == 0
    assert path.read_bytes() == HEADER + b'{"task":"task_A","indices":[0,2]}\n'


def test_a_corrupt_line_in_the_middle_is_an_error(tmp_path):
    path = tmp_path / "report.ndjson"
    write(path, HEADER, b"garbage\n", b'{"submit":[0,1]}\n')
    with pytest.raises(ReportError, match=":2: not a report line"):
        read_report(path)


def test_not_a_report(tmp_path):
    path = tmp_path / "report.ndjson"
    write(path, b'{"email":"a@x.com"}\n')
    with pytest.raises(ReportError, match="not an import report"):
        read_report(path)
    with pytest.raises(ReportError, match="cannot read"):
        read_report(tmp_path / "missing.ndjson")


def test_one_writer_per_report(tmp_path):
    path = tmp_path / "report.ndjson"
    first = ReportWriter(path, append=False)
    try:
        with pytest.raises(ReportError, match="in use by another import"):
            ReportWriter(path, append=True)
    finally:
        first.close()
    ReportWriter(path, append=True).close()


def test_signed_tokens_are_renewed_before_they_expire():
    key = admin_key()
    clock = FrozenClock()
    tokens = TokenSource(private_pem=key.private_pem, project="demo", clock=clock)
    first = tokens.current()
    clock.advance(timedelta(minutes=7))
    assert tokens.current() == first
    clock.advance(timedelta(minutes=1, seconds=1))  # 2 minutes or less left: a new one
    second = tokens.current()
    assert second != first
    assert tokens.signed == 2
    claims = jwt.decode(second, options={"verify_signature": False})
    assert claims["aud"] == "demo"
    assert claims["exp"] - claims["iat"] == 600


def test_details_laid_out_over_lines_still_give_one_report_line_per_record(tmp_path):
    from userio_client.details import decode_details

    status = (
        b'[\n  {\n    "index": 0,\n    "record": {"email": "a@x.com", "name": "Ada\\nLovelace"},\n'
        b'    "outcome": "inserted"\n  },\n  {"index": 1, "outcome": "failed", "errors": [{"reason": "X"}]}\n]'
    )
    details = decode_details("task_A", msgspec.Raw(status))
    path = tmp_path / "report.ndjson"
    writer = ReportWriter(path, append=False)
    writer.write([{"task": "task_A", **detail} for detail in details])
    writer.close()

    lines = path.read_bytes().splitlines()
    assert [json.loads(line) for line in lines] == [
        {"task": "task_A", "index": 0, "record": {"email": "a@x.com", "name": "Ada\nLovelace"}, "outcome": "inserted"},
        {"task": "task_A", "index": 1, "outcome": "failed", "errors": [{"reason": "X"}]},
    ]
