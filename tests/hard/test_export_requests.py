"""Random export requests: JSON pointers valid or not, field names of any text, duplicates (SPEC 2.6, 7; DECISIONS 4).

The expected answer is worked out here from the documents alone:
- a pointer is RFC 6901 (`""` or `/`-separated tokens in which `~` is followed by `0` or `1`), has at least one token,
  and names one of SPEC's supported pointers, a DECISIONS 4 extra, `/custom_attributes/<non-empty name>`, or a
  pointer inside one of those (`/roles/0`, `/address/country/x`); anything else is `Invalid/ValidationFailed` with a
  cause whose location names the field (`/csv/fields/<index>/...`);
- an explicit empty `field_name` is refused the same way (a CSV column needs a name; the reference would derive one),
  and so is an empty `csv.fields` (a CSV needs a column; the reference's design says "a non-empty array");
- otherwise the names (given, or the decoded tokens joined with `.`) must be unique, or the answer is
  `Invalid/UserExportNonUniqueFieldNames` with `info.field_names` = every name in request order;
- otherwise 202, and the CSV file starts with the header row: the names in order, each quoted as Go's encoding/csv
  quotes (DECISIONS 4: "quoted only when it must be", as the reference writes it), then `\\n`.
Never a 5xx.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import event, given, note
from hypothesis import strategies as st

from tests.exports.helpers import EXPORT, download
from tests.hard import scaled

SUPPORTED = (
    "/sub",
    "/preferred_username",
    "/email",
    "/phone_number",
    "/email_verified",
    "/phone_number_verified",
    "/name",
    "/given_name",
    "/middle_name",
    "/nickname",
    "/profile",
    "/picture",
    "/website",
    "/gender",
    "/birthdate",
    "/zoneinfo",
    "/locale",
    "/address/street_address",
    "/address/locality",
    "/address/region",
    "/address/postal_code",
    "/address/country",
    "/roles",
    "/groups",
    "/disabled",
    "/identities",
    "/mfa/emails",
    "/mfa/phone_numbers",
    "/mfa/totps",
    "/biometric_count",
    "/passkey_count",
)
"""SPEC 2.6's table, in its order."""
EXTRA = ("/family_name", "/address/formatted", "/created_at", "/updated_at", "/last_login_at")
"""DECISIONS 4: allowed beyond SPEC."""
ALLOWED = {tuple(p[1:].split("/")) for p in (*SUPPORTED, *EXTRA)}


def reference_tokens(pointer: str) -> list[str] | None:
    """RFC 6901 section 3-4: the decoded tokens, or None when the text is not a JSON pointer."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        return None
    tokens = []
    for raw in pointer[1:].split("/"):
        if re.search(r"~(?![01])", raw):
            return None
        tokens.append(raw.replace("~1", "/").replace("~0", "~"))
    return tokens


def exportable(tokens: list[str]) -> bool:
    if not tokens:
        return False
    if tokens[0] == "custom_attributes":
        return len(tokens) >= 2 and tokens[1] != ""
    return any(tuple(tokens[:n]) in ALLOWED for n in range(1, len(tokens) + 1))


_GO_SPACE = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000") | {
    chr(c) for c in range(0x2000, 0x200B)
}


def go_csv_cell(text: str) -> str:
    """Go's encoding/csv Writer (the reference's): quote when the cell holds `,` `"` CR LF, is `\\.`, or starts with
    a rune unicode.IsSpace accepts (Unicode White_Space); double the quotes inside."""
    if text == "":
        return text
    if text == "\\." or any(c in text for c in ',"\r\n') or text[0] in _GO_SPACE:
        return '"' + text.replace('"', '""') + '"'
    return text


def escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


TOKENS = st.one_of(
    st.sampled_from(("0", "1", "01", "x", "", "~", "/", "a~b", "a/b", ".", "é", "country", "key", "~1", "~0")),
    st.text(max_size=5),
)


def _join(tokens: list[str]) -> str:
    return "".join("/" + escape(t) for t in tokens)


ANY_POINTER = st.one_of(
    st.lists(TOKENS, max_size=3).map(_join),
    st.text(alphabet="/~01ab.é ", max_size=12),  # raw text, often not RFC 6901
    st.sampled_from(("", "/", "email", "#/email", "/password", "/mfa", "/address", "/Email", "/email~", "/a~2b")),
)
LIKELY_POINTER = st.one_of(
    st.sampled_from((*SUPPORTED, *EXTRA)),
    st.tuples(st.sampled_from((*SUPPORTED, *EXTRA)), st.lists(TOKENS, min_size=1, max_size=3)).map(
        lambda pair: pair[0] + _join(pair[1])
    ),
    st.lists(TOKENS, min_size=1, max_size=3).map(lambda tokens: "/custom_attributes" + _join(tokens)),
)
POINTERS = st.integers(0, 7).flatmap(lambda n: ANY_POINTER if n == 0 else LIKELY_POINTER)

FIELD_NAMES = st.one_of(
    st.none(),  # absent: derived from the pointer
    st.none(),
    st.sampled_from(
        (
            "email",
            "sub",
            "roles.0",
            "custom_attributes.x",
            "",
            "a,b",
            " lead",
            '"q"',
            "\\.",
            "x\ny",
            "x\r",
            "\xa0nbsp",
            "\x85nel",
            "\x1cfs",
            "\u2028ls",
            "\u3000ideo",
            "tab\t",
            "😀",
        )
    ),
    st.text(max_size=6),
)

FIELDS = st.lists(
    st.tuples(POINTERS, FIELD_NAMES).map(
        lambda pair: {"pointer": pair[0]} if pair[1] is None else {"pointer": pair[0], "field_name": pair[1]}
    ),
    max_size=6,
)

REQUESTS = st.one_of(
    st.fixed_dictionaries(
        {"format": st.sampled_from(("csv", "csv", "ndjson")), "csv": st.fixed_dictionaries({"fields": FIELDS})}
    ),
    st.sampled_from(({"format": "csv"}, {"format": "csv", "csv": {}}, {"format": "ndjson"})),
)


def expected_answer(request: dict[str, Any]) -> tuple[str, Any]:
    """("ok", header names) | ("invalid", indices of bad fields) | ("duplicates", every name)."""
    fields = request.get("csv", {}).get("fields")
    if fields is None:
        return "ok", [p[1:].replace("/", ".") for p in SUPPORTED]
    if not fields:
        return "invalid", {None}  # a CSV needs a column (the reference's design: a non-empty array)
    bad, names = set(), []
    for index, field in enumerate(fields):
        tokens = reference_tokens(field["pointer"])
        if tokens is None or not exportable(tokens) or field.get("field_name") == "":
            bad.add(index)
            continue
        names.append(field.get("field_name", ".".join(tokens)))
    if bad:
        return "invalid", bad
    if len(set(names)) != len(names):
        return "duplicates", names
    return "ok", names


def error_of(response) -> dict[str, Any]:
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert {"name", "reason", "message", "code"} <= set(error), error
    assert error["code"] == response.status_code
    return error


@scaled(1.3)
@given(request=REQUESTS)
async def test_export_request_is_accepted_or_refused_as_the_documents_say(env, request):
    note(f"request = {request!r}")
    project = await env.make_project()
    verdict, detail = expected_answer(request)
    event(verdict)

    response = await project.post(EXPORT, request)

    assert response.status_code < 500, response.text
    if verdict == "invalid":
        assert response.status_code == 400, response.text
        error = error_of(response)
        assert (error["name"], error["reason"]) == ("Invalid", "ValidationFailed"), error
        named = set()
        for cause in error["info"]["causes"]:
            match = re.fullmatch(r"/csv/fields(?:/(\d+)(?:/.*)?)?", cause["location"])
            assert match, cause
            named.add(int(match[1]) if match[1] else None)
        assert named == detail, (named, detail, error)
        return
    if verdict == "duplicates":
        assert response.status_code == 400, response.text
        error = error_of(response)
        assert (error["name"], error["reason"]) == ("Invalid", "UserExportNonUniqueFieldNames"), error
        assert error["info"]["field_names"] == detail
        return

    assert response.status_code == 202, response.text
    assert response.json()["result"]["request"] == request
    await env.drain()
    status = await project.get(f"{EXPORT}/{response.json()['result']['id']}")
    result = status.json()["result"]
    assert result["status"] == "completed" and "download_url" in result, result
    if request["format"] != "csv":
        return
    file = await download(project, result["download_url"])
    assert file.status_code == 200
    header = ",".join(go_csv_cell(name) for name in detail) + "\n"
    assert file.content.decode("utf-8") == header  # the project has no users: the file is the header row alone


async def test_a_cell_starting_with_an_information_separator_is_not_quoted(project):
    request = {"format": "csv", "csv": {"fields": [{"pointer": "/sub", "field_name": "\x1cfs"}]}}

    response = await project.post(EXPORT, request)
    assert response.status_code == 202, response.text
    await project.env.drain()
    result = (await project.get(f"{EXPORT}/{response.json()['result']['id']}")).json()["result"]
    file = await download(project, result["download_url"])

    assert file.content == b"\x1cfs\n"
