"""The exported files, byte for byte, on a fixed data set (DECISIONS 4: CSV and ndjson layout)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from litestar_userio.projects.settings import ProjectSettings
from litestar_userio.users.custom_attributes import CustomAttributeSpec
from tests.exports.helpers import exported_bytes
from tests.helpers import HASH_2B, run_import
from userio_core.clock import FrozenClock

START = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)

ADA = {
    "email": "ada@example.com",
    "email_verified": True,
    "phone_number": "+14155550123",
    "phone_number_verified": True,
    "preferred_username": "ada",
    "name": "Ada Lovelace",
    "given_name": "Ada",
    "family_name": "Lovelace",
    "nickname": 'Countess, of "Lovelace"',
    "profile": "https://ada.example/profile",
    "picture": "https://ada.example/a.png",
    "website": "https://ada.example",
    "gender": "female",
    "birthdate": "1815-12-10",
    "zoneinfo": "Europe/London",
    "locale": "en-GB",
    "address": {
        "formatted": "12 St James's Square\nLondon",
        "street_address": "12 St James's Square",
        "locality": "London",
        "region": "Greater London",
        "postal_code": "SW1Y 4JH",
        "country": "GB",
    },
    "custom_attributes": {"tier": "gold", "score": 42, "ratio": 0.5, "beta": True, "prefs": {"b": 1, "a": [1, "x"]}},
    "roles": ["editor", "admin"],
    "groups": ["staff"],
    "password": {"type": "bcrypt", "password_hash": HASH_2B},
    "mfa": {"email": "ada.mfa@example.com", "phone_number": "+447911123456", "totp": {"secret": "JBSWY3DPEHPK3PXP"}},
}
BOB = {"email": "bob@example.com"}
ZOE = {
    "email": "Zoe@Example.com",
    "name": "Zoë Ünïcödé 🌈",
    "nickname": " leading space",
    "disabled": True,
    "custom_attributes": {"note": "line1\r\nline2"},
    "roles": [],
    "groups": [],
}


@pytest.fixture
async def exported(backend, make_env):
    """A project with Ada, Bob and Zoë, imported at a fixed time; returns (project, subs by name)."""
    env = await make_env(backend, clock=FrozenClock(START))
    project = await env.make_project(
        ProjectSettings(create_unknown_roles_on_import=True, create_unknown_groups_on_import=True)
    )
    body = await run_import(project, [ADA, BOB, ZOE])
    subs = {name: d["user_id"] for name, d in zip(("ada", "bob", "zoe"), body["details"], strict=True)}
    assert all(subs.values()), body
    return project, subs


def in_file_order(lines_by_name: dict[str, str], subs: dict[str, str]) -> str:
    """Users come in `sub` order (keyset pagination)."""
    return "".join(lines_by_name[name] for name in sorted(subs, key=subs.__getitem__))


def ndjson_expected(project_id: str, subs: dict[str, str]) -> str:
    timestamps = '"created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:05Z","last_login_at":null'
    lines = {
        "ada": (
            '{"sub":"%s","preferred_username":"ada","email":"ada@example.com","phone_number":"+14155550123",'
            '"email_verified":true,"phone_number_verified":true,"name":"Ada Lovelace","given_name":"Ada",'
            '"family_name":"Lovelace","nickname":"Countess, of \\"Lovelace\\"","profile":"https://ada.example/profile",'
            '"picture":"https://ada.example/a.png","website":"https://ada.example","gender":"female",'
            '"birthdate":"1815-12-10","zoneinfo":"Europe/London","locale":"en-GB",'
            '"address":{"formatted":"12 St James\'s Square\\nLondon","street_address":"12 St James\'s Square",'
            '"locality":"London","region":"Greater London","postal_code":"SW1Y 4JH","country":"GB"},'
            '"roles":["admin","editor"],"groups":["staff"],"disabled":false,'
            '"identities":['
            '{"type":"login_id","login_id":{"key":"email","original_value":"ada@example.com","type":"email","value":"ada@example.com"},"claims":{"email":"ada@example.com"}},'
            '{"type":"login_id","login_id":{"key":"phone","original_value":"+14155550123","type":"phone","value":"+14155550123"},"claims":{"phone_number":"+14155550123"}},'
            '{"type":"login_id","login_id":{"key":"username","original_value":"ada","type":"username","value":"ada"},"claims":{"preferred_username":"ada"}}],'
            '"mfa":{"emails":["ada.mfa@example.com"],"phone_numbers":["+447911123456"],'
            '"totps":[{"secret":"JBSWY3DPEHPK3PXP","uri":"otpauth://totp/%s:ada@example.com?secret=JBSWY3DPEHPK3PXP&issuer=%s&algorithm=SHA1&digits=6&period=30"}]},'
            '"biometric_count":0,"passkey_count":0,'
            '"custom_attributes":{"beta":true,"prefs":{"a":[1,"x"],"b":1},"ratio":0.5,"score":42,"tier":"gold"},'
            "%s}\n"
        )
        % (subs["ada"], project_id, project_id, timestamps),
        "bob": (
            '{"sub":"%s","email":"bob@example.com","email_verified":false,"address":{},"roles":[],"groups":[],'
            '"disabled":false,"identities":[{"type":"login_id","login_id":{"key":"email","original_value":"bob@example.com",'
            '"type":"email","value":"bob@example.com"},"claims":{"email":"bob@example.com"}}],'
            '"mfa":{"emails":[],"phone_numbers":[],"totps":[]},"biometric_count":0,"passkey_count":0,'
            '"custom_attributes":{},%s}\n'
        )
        % (subs["bob"], timestamps),
        "zoe": (
            '{"sub":"%s","email":"zoe@example.com","email_verified":false,"name":"Zoë Ünïcödé 🌈",'
            '"nickname":" leading space","address":{},"roles":[],"groups":[],"disabled":true,'
            '"identities":[{"type":"login_id","login_id":{"key":"email","original_value":"Zoe@Example.com",'
            '"type":"email","value":"zoe@example.com"},"claims":{"email":"zoe@example.com"}}],'
            '"mfa":{"emails":[],"phone_numbers":[],"totps":[]},"biometric_count":0,"passkey_count":0,'
            '"custom_attributes":{"note":"line1\\r\\nline2"},%s}\n'
        )
        % (subs["zoe"], timestamps),
    }
    return in_file_order(lines, subs)


async def test_ndjson_byte_for_byte(exported):
    project, subs = exported

    content = await exported_bytes(project, {"format": "ndjson"})

    assert content.decode() == ndjson_expected(project.id, subs)
    assert HASH_2B.encode() not in content


CSV_HEADER = (
    "sub,preferred_username,email,phone_number,email_verified,phone_number_verified,name,given_name,middle_name,"
    "nickname,profile,picture,website,gender,birthdate,zoneinfo,locale,address.street_address,address.locality,"
    "address.region,address.postal_code,address.country,roles,groups,disabled,identities,mfa.emails,"
    "mfa.phone_numbers,mfa.totps,biometric_count,passkey_count\n"
)


def csv_expected(project_id: str, subs: dict[str, str]) -> str:
    ada_identities = (
        '"[{""claims"":{""email"":""ada@example.com""},""login_id"":{""key"":""email"",""original_value"":""ada@example.com"",'
        '""type"":""email"",""value"":""ada@example.com""},""type"":""login_id""},'
        '{""claims"":{""phone_number"":""+14155550123""},""login_id"":{""key"":""phone"",""original_value"":""+14155550123"",'
        '""type"":""phone"",""value"":""+14155550123""},""type"":""login_id""},'
        '{""claims"":{""preferred_username"":""ada""},""login_id"":{""key"":""username"",""original_value"":""ada"",'
        '""type"":""username"",""value"":""ada""},""type"":""login_id""}]"'
    )
    ada_totps = (
        '"[{""secret"":""JBSWY3DPEHPK3PXP"",""uri"":""otpauth://totp/%s:ada@example.com?secret=JBSWY3DPEHPK3PXP'
        '&issuer=%s&algorithm=SHA1&digits=6&period=30""}]"'
    ) % (project_id, project_id)
    lines = {
        "ada": (
            f'{subs["ada"]},ada,ada@example.com,+14155550123,true,true,Ada Lovelace,Ada,,"Countess, of ""Lovelace""",'
            "https://ada.example/profile,https://ada.example/a.png,https://ada.example,female,1815-12-10,Europe/London,"
            "en-GB,12 St James's Square,London,Greater London,SW1Y 4JH,GB,"
            '"[""admin"",""editor""]","[""staff""]",false,'
            f'{ada_identities},"[""ada.mfa@example.com""]","[""+447911123456""]",{ada_totps},0,0\n'
        ),
        "bob": (
            f"{subs['bob']},,bob@example.com,,false,,,,,,,,,,,,,,,,,,[],[],false,"
            '"[{""claims"":{""email"":""bob@example.com""},""login_id"":{""key"":""email"",""original_value"":""bob@example.com"",'
            '""type"":""email"",""value"":""bob@example.com""},""type"":""login_id""}]",[],[],[],0,0\n'
        ),
        "zoe": (
            f'{subs["zoe"]},,zoe@example.com,,false,,Zoë Ünïcödé 🌈,,," leading space",,,,,,,,,,,,,[],[],true,'
            '"[{""claims"":{""email"":""zoe@example.com""},""login_id"":{""key"":""email"",""original_value"":""Zoe@Example.com"",'
            '""type"":""email"",""value"":""zoe@example.com""},""type"":""login_id""}]",[],[],[],0,0\n'
        ),
    }
    return CSV_HEADER + in_file_order(lines, subs)


async def test_csv_default_columns_byte_for_byte(exported):
    project, subs = exported

    content = await exported_bytes(project, {"format": "csv"})

    assert content.decode() == csv_expected(project.id, subs)


async def test_csv_chosen_columns_with_given_and_derived_names(exported):
    project, subs = exported
    fields = [
        {"pointer": "/sub", "field_name": "user id"},
        {"pointer": "/address/formatted"},
        {"pointer": "/custom_attributes/score"},
        {"pointer": "/custom_attributes/ratio"},
        {"pointer": "/custom_attributes/beta"},
        {"pointer": "/custom_attributes/prefs"},
        {"pointer": "/custom_attributes/prefs/a/1", "field_name": "second pref"},
        {"pointer": "/custom_attributes/note"},
        {"pointer": "/roles/0"},
        {"pointer": "/identities/0/login_id/value", "field_name": "login"},
        {"pointer": "/family_name"},
        {"pointer": "/created_at"},
        {"pointer": "/last_login_at"},
    ]

    content = await exported_bytes(project, {"format": "csv", "csv": {"fields": fields}})

    header = (
        "user id,address.formatted,custom_attributes.score,custom_attributes.ratio,custom_attributes.beta,"
        "custom_attributes.prefs,second pref,custom_attributes.note,roles.0,login,family_name,created_at,last_login_at\n"
    )
    lines = {
        "ada": f'{subs["ada"]},"12 St James\'s Square\nLondon",42,0.5,true,"{{""a"":[1,""x""],""b"":1}}",x,,admin,'
        "ada@example.com,Lovelace,2026-01-02T03:04:05Z,\n",
        "bob": f"{subs['bob']},,,,,,,,,bob@example.com,,2026-01-02T03:04:05Z,\n",
        "zoe": f'{subs["zoe"]},,,,,,,"line1\r\nline2",,zoe@example.com,,2026-01-02T03:04:05Z,\n',
    }
    assert content.decode() == header + in_file_order(lines, subs)


async def test_declared_custom_attributes_follow_the_default_columns(backend, make_env):
    env = await make_env(backend, clock=FrozenClock(START))
    project = await env.make_project()
    await env.services.projects.declare_custom_attribute(
        project.id, CustomAttributeSpec("plan", "enum", enum=("free", "pro"))
    )
    await env.services.projects.declare_custom_attribute(project.id, CustomAttributeSpec("a_b", "integer"))
    body = await run_import(project, [{"email": "a@example.com", "custom_attributes": {"plan": "pro", "a_b": 3}}])

    content = (await exported_bytes(project, {"format": "csv"})).decode()

    header, row, end = content.split("\n")
    assert header == CSV_HEADER.strip() + ",custom_attributes.plan,custom_attributes.a_b"
    assert row.startswith(body["details"][0]["user_id"] + ",")
    assert row.endswith(",0,0,pro,3")
    assert end == ""


async def test_a_pointer_escapes_a_slash_in_a_custom_attribute_name(env):
    """A declared name cannot hold `/` (the reference's rule); a project without declarations stores any name."""
    project = await env.make_project()
    await run_import(project, [{"email": "a@example.com", "custom_attributes": {"a/b": 3, "a~b": 4}}])
    fields = [{"pointer": "/custom_attributes/a~1b"}, {"pointer": "/custom_attributes/a~0b"}]

    content = await exported_bytes(project, {"format": "csv", "csv": {"fields": fields}})

    assert content == b"custom_attributes.a/b,custom_attributes.a~b\n3,4\n"


async def test_empty_project_exports_a_header_only_csv_and_an_empty_ndjson(env):
    project = await env.make_project()

    assert await exported_bytes(project, {"format": "csv", "csv": {"fields": [{"pointer": "/email"}]}}) == b"email\n"
    env.clock.advance(__import__("datetime").timedelta(days=1))
    assert await exported_bytes(project, {"format": "ndjson"}) == b""


async def test_formula_injection_escaping_is_opt_in(backend, make_env):
    env = await make_env(backend, clock=FrozenClock(START))
    project = await env.make_project()
    await run_import(
        project,
        [
            {
                "email": "a@example.com",
                "name": '=HYPERLINK("http://x")',
                "nickname": "-5",
                "custom_attributes": {"n": -5, "s": "@SUM(A1)", "t": "\tx"},
            }
        ],
    )
    fields = [
        {"pointer": p}
        for p in (
            "/name",
            "/nickname",
            "/custom_attributes/n",
            "/custom_attributes/s",
            "/custom_attributes/t",
            "/email",
        )
    ]

    exact = (await exported_bytes(project, {"format": "csv", "csv": {"fields": fields}})).decode()
    env.clock.advance(__import__("datetime").timedelta(days=1))
    escaped = (
        await exported_bytes(project, {"format": "csv", "csv": {"fields": fields, "escape_formulas": True}})
    ).decode()

    assert exact.splitlines()[1] == '"=HYPERLINK(""http://x"")",-5,-5,@SUM(A1),"\tx",a@example.com'
    assert escaped.splitlines()[1] == '"\'=HYPERLINK(""http://x"")",\'-5,-5,\'@SUM(A1),\'\tx,a@example.com'
