"""`litestar userio ...` on the example app, state in USERIO_HOME: in-process, a few smoke tests as a real process."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import httpx
import idna
import jwt
import pytest
from litestar import Litestar

from litestar_userio import ExportConfig, LocalStorageConfig, UserIOConfig, UserIOPlugin
from litestar_userio.services import Services
from tests.server_cli import run_userio


@pytest.fixture(params=["sqlite", "postgres"])
def cli_env(request, tmp_path) -> dict[str, str]:
    home = tmp_path / "home"
    if request.param == "postgres":
        database_url = request.getfixturevalue("postgres_url")
    else:
        database_url = f"sqlite:///{tmp_path / 'cli.sqlite3'}"
    return {**os.environ, "USERIO_HOME": str(home), "USERIO_DATABASE_URL": database_url, "USERIO_REDIS_URL": ""}


def _config(env: dict[str, str]) -> UserIOConfig:
    """The CLI's database, as the plugin in this process sees it; export files under its home, not the repository."""
    storage = LocalStorageConfig(directory=Path(env["USERIO_HOME"]) / "exports")
    return UserIOConfig(database_url=env["USERIO_DATABASE_URL"], exports=ExportConfig(storage=storage))


def userio(
    env: dict[str, str], *args: str, check: bool = True, process: bool = False
) -> subprocess.CompletedProcess[str]:
    """The command in this process; `process=True` for the real entry point (the smoke tests)."""
    result = run_userio(env, *args, process=process)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def project_id(tmp_path: Path) -> str:
    return f"cli{abs(hash(tmp_path)) % 10**8}"


async def test_create_project_sign_token_and_call_the_api(cli_env, tmp_path):
    pid = project_id(tmp_path)
    key_file = tmp_path / "admin.pem"

    userio(cli_env, "migrate")
    created = userio(cli_env, "project", "create", "--id", pid, "--domain", f"{pid}.example.test",
                     "--key-out", str(key_file), process=True)  # fmt: skip
    kid = created.stdout.strip()
    token = userio(
        cli_env, "admin-token", "--project", pid, "--key", str(key_file), "--ttl", "120", process=True
    ).stdout

    assert kid
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert token.count("\n") == 1
    assert len(token.strip().split(".")) == 3
    header = jwt.get_unverified_header(token.strip())
    claims = jwt.decode(token.strip(), options={"verify_signature": False})
    assert (header["alg"], header["kid"], claims["aud"], claims["exp"] - claims["iat"]) == ("RS256", kid, pid, 120)

    config = _config(cli_env)
    app = Litestar(plugins=[UserIOPlugin(config)])
    async with (
        app.lifespan(),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="https://x") as client,
    ):
        response = await client.post(
            "/_api/admin/users/import",
            json={"identifier": "email", "records": [{"email": "a@example.com"}]},
            headers={"Authorization": f"Bearer {token.strip()}", "Host": f"{pid}.example.test"},
        )
    assert response.status_code == 202


def test_project_key_defaults_to_userio_home(cli_env, tmp_path):
    pid = project_id(tmp_path)
    userio(cli_env, "project", "create", "--id", pid, "--domain", f"{pid}.example.test")

    token = userio(cli_env, "admin-token", "--project", pid).stdout.strip()

    assert (Path(cli_env["USERIO_HOME"]) / f"{pid}-admin-key.pem").exists()
    assert jwt.decode(token, options={"verify_signature": False})["aud"] == pid


@pytest.mark.engine
def test_duplicate_project_is_refused(cli_env, tmp_path):
    pid = project_id(tmp_path)
    userio(cli_env, "project", "create", "--id", pid, "--domain", f"{pid}.example.test")

    again = userio(cli_env, "project", "create", "--id", pid, "--domain", "other.example.test", check=False)

    assert again.returncode == 1
    assert f"project '{pid}' already exists" in again.stderr


def test_roles_and_groups_add_print_the_new_keys(cli_env, tmp_path):
    pid = project_id(tmp_path)
    userio(cli_env, "project", "create", "--id", pid, "--domain", f"{pid}.example.test")

    first = userio(cli_env, "roles", "add", "--project", pid, "admin", "editor")
    second = userio(cli_env, "roles", "add", "--project", pid, "editor", "viewer")
    groups = userio(cli_env, "groups", "add", "--project", pid, "staff")

    assert first.stdout.split() == ["admin", "editor"]
    assert second.stdout.split() == ["viewer"]
    assert groups.stdout.split() == ["staff"]


def test_admin_token_without_key_file_fails_clearly(cli_env):
    result = userio(cli_env, "admin-token", "--project", "nope", check=False)

    assert result.returncode == 1
    assert "cannot read the admin key" in result.stderr
    assert result.stdout == ""


def test_worker_needs_redis(cli_env):
    result = userio(cli_env, "worker", "--burst", check=False)

    assert result.returncode == 1
    assert "no Redis configured" in result.stderr


def test_worker_burst_runs_queued_jobs(cli_env, redis_url, tmp_path):
    env = {**cli_env, "USERIO_REDIS_URL": redis_url, "USERIO_QUEUE_NAME": f"userio:cli:{tmp_path.name}"}

    result = userio(env, "worker", "--burst", process=True)  # arq sets signal handlers: the main thread's only

    assert "Starting worker" in result.stderr


def test_token_ttl_is_bounded(cli_env):
    result = userio(cli_env, "admin-token", "--project", "x", "--ttl", "0", check=False)

    assert result.returncode == 2
    assert "--ttl" in result.stderr


@pytest.mark.engine
def test_a_taken_domain_is_refused_with_one_line(cli_env, tmp_path):
    pid = project_id(tmp_path)
    userio(cli_env, "project", "create", "--id", pid, "--domain", f"{pid}.example.test")

    taken = userio(cli_env, "project", "create", "--id", f"{pid}-b", "--domain", f"{pid}.EXAMPLE.test", check=False)
    listed = userio(cli_env, "project", "list").stdout.splitlines()

    assert taken.returncode == 1
    assert (
        taken.stderr.strip().splitlines()[-1] == f"error: domain '{pid}.EXAMPLE.test' already selects project '{pid}'"
    )
    assert "Traceback" not in taken.stderr
    assert f"{pid}-b\t" not in "\n".join(listed)
    assert not (Path(cli_env["USERIO_HOME"]) / f"{pid}-b-admin-key.pem").exists()


@pytest.mark.parametrize("bad", ["Bad_ID!", "UPPER", "-leading", "a" * 64, ""])
def test_a_malformed_project_id_is_refused_with_one_line(cli_env, bad):
    result = userio(cli_env, "project", "create", "--id", bad, "--domain", "bad.example.test", check=False)

    assert result.returncode == 1
    assert result.stderr.startswith("error: invalid project id")
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ("not a domain", "is not a host name"),
        ("auth.example.test:8443", "without a port"),
        ("-auth.example.test", "is not a host name"),
        ("auth..example.test", "is not a host name"),
        ("", "is not a host name"),
    ],
)
def test_a_domain_no_host_header_could_name_is_refused_with_one_line(cli_env, tmp_path, bad, why):
    pid = project_id(tmp_path)

    result = userio(cli_env, "project", "create", "--id", pid, "--domain", f"{pid}.example.test", "--domain", bad,
                    check=False)  # fmt: skip
    listed = userio(cli_env, "project", "list").stdout

    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert result.stderr.startswith(f"error: domain {bad!r}") and why in result.stderr
    assert pid not in listed
    assert not (Path(cli_env["USERIO_HOME"]) / f"{pid}-admin-key.pem").exists()


def test_domains_are_stored_as_host_headers_name_them(cli_env, tmp_path):
    pid = project_id(tmp_path)
    group = f"{int(pid[3:]) % 0xFFFF:x}"
    given = [f"Bücher-{pid}.Example", f"auth_{pid}", f"[2001:0db8:0:0::{group}]", f"{pid}.EXAMPLE.test"]

    userio(cli_env, "project", "create", "--id", pid, *(arg for domain in given for arg in ("--domain", domain)))
    listed = userio(cli_env, "project", "list").stdout.splitlines()
    taken = userio(cli_env, "project", "create", "--id", f"{pid}-b", "--domain", f"bücher-{pid}.example", check=False)

    punycode = idna.encode(f"bücher-{pid}.example", uts46=True).decode()
    stored = sorted([punycode, f"auth_{pid}", f"[2001:db8::{group}]", f"{pid}.example.test"])
    assert f"{pid}\t{','.join(stored)}" in listed
    assert taken.returncode == 1
    assert f"already selects project '{pid}'" in taken.stderr


def test_project_list_prints_each_project_with_its_domains(cli_env, tmp_path):
    pid = project_id(tmp_path)
    userio(cli_env, "project", "create", "--id", pid, "--domain", f"{pid}.example.test", "--domain", f"b.{pid}.test")

    listed = userio(cli_env, "project", "list").stdout.splitlines()

    assert f"{pid}\tb.{pid}.test,{pid}.example.test" in listed


def test_roles_and_groups_list_print_the_keys(cli_env, tmp_path):
    pid = project_id(tmp_path)
    userio(cli_env, "project", "create", "--id", pid, "--domain", f"{pid}.example.test")
    userio(cli_env, "roles", "add", "--project", pid, "editor", "admin")
    userio(cli_env, "groups", "add", "--project", pid, "staff")

    roles = userio(cli_env, "roles", "list", "--project", pid)
    groups = userio(cli_env, "groups", "list", "--project", pid)
    unknown = userio(cli_env, "roles", "list", "--project", f"{pid}-none", check=False)

    assert roles.stdout.splitlines() == ["admin", "editor"]
    assert groups.stdout.splitlines() == ["staff"]
    assert unknown.returncode == 1
    assert f"no project '{pid}-none'" in unknown.stderr


async def test_client_create_registers_a_client_the_token_service_uses(cli_env, tmp_path):
    pid = project_id(tmp_path)
    userio(cli_env, "project", "create", "--id", pid, "--domain", f"{pid}.example.test")

    jwt_client = userio(cli_env, "client", "create", "--project", pid, "--client-id", "web")
    opaque = userio(cli_env, "client", "create", "--project", pid, "--client-id", "legacy", "--opaque-access-token")
    again = userio(cli_env, "client", "create", "--project", pid, "--client-id", "web", check=False)

    assert (jwt_client.stdout, opaque.stdout) == ("web\n", "legacy\n")
    assert again.returncode == 1
    assert "client 'web' already exists" in again.stderr
    services = await Services.start(_config(cli_env), run_jobs=False)
    try:
        web = await services.tokens.applications.get(pid, "web")
        legacy = await services.tokens.applications.get(pid, "legacy")
    finally:
        await services.close()
    assert web is not None and web.issue_jwt_access_token is True
    assert legacy is not None and legacy.issue_jwt_access_token is False


@pytest.mark.engine
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["roles", "add", "--project", "{pid}", "editor", "bad key!"],
            "error: invalid keys 'bad key!': a letter or '_', then up to 39 letters, digits, ':' or '_'",
        ),
        (
            ["groups", "add", "--project", "{pid}", "9lives"],
            "error: invalid keys '9lives': a letter or '_', then up to 39 letters, digits, ':' or '_'",
        ),
        (
            ["client", "create", "--project", "{pid}", "--client-id", ""],
            "error: invalid client id '': 1-255 printable ASCII characters, no spaces at either end",
        ),
        (
            ["client", "create", "--project", "{pid}", "--client-id", " web"],
            "error: invalid client id ' web': 1-255 printable ASCII characters, no spaces at either end",
        ),
        (
            ["custom-attributes", "declare", "--project", "{pid}", "--name", "x y", "--type", "string"],
            "error: custom attribute 'x y': name 'x y': use letters, digits and '_' only",
        ),
        (
            ["custom-attributes", "declare", "--project", "{pid}", "--name", "sub", "--type", "string"],
            "error: custom attribute 'sub': name 'sub' is a standard attribute or JWT claim",
        ),
        (
            ["custom-attributes", "declare", "--project", "{pid}", "--name", "plan", "--type", "enum"],
            "error: custom attribute 'plan': an enum needs its values (--enum, repeated)",
        ),
        (
            ["custom-attributes", "declare", "--project", "{pid}", "--name", "plan", "--type", "enum",
             "--enum", "pro", "--enum", "pro plus", "--enum", "pro"],
            "error: custom attribute 'plan': enum values ['pro plus']: use letters, digits and '_' only; "
            "enum values must be unique",
        ),
        (
            ["custom-attributes", "declare", "--project", "{pid}", "--name", "seats", "--type", "integer",
             "--minimum", "10", "--maximum", "2.5"],
            "error: custom attribute 'seats': an integer's minimum and maximum must be whole numbers; "
            "minimum 10 is above maximum 2.5",
        ),
        (
            ["custom-attributes", "declare", "--project", "{pid}", "--name", "nick", "--type", "string",
             "--minimum", "1"],
            "error: custom attribute 'nick': --minimum and --maximum apply to types number and integer, not string",
        ),
    ],
)  # fmt: skip
def test_what_no_record_or_token_request_could_use_is_refused_with_one_line(cli_env, tmp_path, args, message):
    pid = project_id(tmp_path)
    userio(cli_env, "project", "create", "--id", pid, "--domain", f"{pid}.example.test")

    result = userio(cli_env, *(arg.format(pid=pid) for arg in args), check=False)
    roles = userio(cli_env, "roles", "list", "--project", pid).stdout.splitlines()

    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == message
    assert "Traceback" not in result.stderr
    assert "editor" not in roles  # nothing of a refused command is kept


def test_declaring_for_a_project_that_does_not_exist_is_refused(cli_env, tmp_path):
    pid = project_id(tmp_path)

    result = userio(cli_env, "custom-attributes", "declare", "--project", pid, "--name", "plan", "--type", "string",
                    check=False)  # fmt: skip

    assert result.returncode == 1
    assert f"no project '{pid}'" in result.stderr


async def test_project_configure_sets_typed_values_and_refuses_the_rest_in_one_line(cli_env, tmp_path):
    pid = project_id(tmp_path)
    userio(cli_env, "project", "create", "--id", pid, "--domain", f"{pid}.example.test")

    def configure(*changes: str) -> subprocess.CompletedProcess[str]:
        return userio(cli_env, "project", "configure", "--project", pid,
                      *(a for c in changes for a in ("--set", c)), check=False)  # fmt: skip

    good = configure("email_case_sensitive=true", "export_rate_limit=5")
    refused = {
        change: configure(change).stderr.strip().splitlines()[-1]
        for change in ["email_case_sensitive", "email_case_sensitive=maybe", 'email_case_sensitive="yes"', "x=1"]
    }
    reset = configure("export_rate_limit=null")

    assert (good.returncode, reset.returncode) == (0, 0), good.stderr + reset.stderr
    assert json.loads(good.stdout) == {"export_rate_limit": 5, "email_case_sensitive": True}
    assert refused == {
        "email_case_sensitive": "error: --set 'email_case_sensitive': give NAME=VALUE, e.g. email_case_sensitive=true",
        "email_case_sensitive=maybe": (
            "error: --set 'email_case_sensitive=maybe': the value is JSON: true, false, a number or null"
        ),
        'email_case_sensitive="yes"': (
            "error: invalid project settings: Expected `bool`, got `str` - at `$.email_case_sensitive`"
        ),
        "x=1": "error: invalid project settings: Object contains unknown field `x`",
    }
    assert json.loads(reset.stdout) == {"email_case_sensitive": True}


async def test_project_configure_allows_the_lossless_export(cli_env, tmp_path):
    """DECISIONS 20: `project configure --set allow_secret_export=true` turns the lossless export on, `false` off."""
    pid = project_id(tmp_path)
    userio(cli_env, "project", "create", "--id", pid, "--domain", f"{pid}.example.test")

    on = userio(cli_env, "project", "configure", "--project", pid, "--set", "allow_secret_export=true")
    off = userio(cli_env, "project", "configure", "--project", pid, "--set", "allow_secret_export=false")

    assert json.loads(on.stdout) == {"allow_secret_export": True}
    assert json.loads(off.stdout) == {}


@pytest.mark.engine
async def test_a_null_stored_by_the_old_configure_reads_as_the_default(cli_env, tmp_path):
    """`configure --set NAME` once stored null for a true/false setting, and the project could not be read."""
    pid = project_id(tmp_path)
    userio(cli_env, "project", "create", "--id", pid, "--domain", f"{pid}.example.test")
    services = await Services.start(_config(cli_env), run_jobs=False)
    try:
        async with services.db.transaction() as tx:
            await tx.execute(
                "UPDATE userio_project SET settings = $1 WHERE id = $2",
                '{"email_case_sensitive": null, "export_rate_limit": 7}',
                pid,
            )
        project = await services.projects.by_host(f"{pid}.example.test")
    finally:
        await services.close()

    assert project is not None
    assert (project.settings.email_case_sensitive, project.settings.export_rate_limit) == (False, 7)


@pytest.mark.engine
def test_clients_and_custom_attributes_are_listed_as_declared(cli_env, tmp_path):
    pid = project_id(tmp_path)
    userio(cli_env, "project", "create", "--id", pid, "--domain", f"{pid}.example.test")
    userio(cli_env, "client", "create", "--project", pid, "--client-id", "web", "--name", "Web app")
    userio(cli_env, "client", "create", "--project", pid, "--client-id", "legacy", "--opaque-access-token")
    declare = ["custom-attributes", "declare", "--project", pid]
    userio(cli_env, *declare, "--name", "plan", "--type", "enum", "--enum", "free", "--enum", "pro")
    userio(cli_env, *declare, "--name", "seats", "--type", "integer", "--minimum", "1", "--maximum", "500")
    userio(cli_env, *declare, "--name", "company", "--type", "string")

    clients = userio(cli_env, "client", "list", "--project", pid).stdout.splitlines()
    attributes = userio(cli_env, "custom-attributes", "list", "--project", pid).stdout.splitlines()
    unknown = userio(cli_env, "client", "list", "--project", f"{pid}-none", check=False)

    assert clients == ["legacy\topaque\tlegacy", "web\tjwt\tWeb app"]
    assert attributes == ["plan\tenum\tfree, pro", "seats\tinteger\tminimum 1, maximum 500", "company\tstring\t"]
    assert unknown.returncode == 1 and f"no project '{pid}-none'" in unknown.stderr


@pytest.mark.engine
def test_commands_print_no_driver_chatter(cli_env):
    # The banner was a log record: only a real process shows where its handlers write.
    migrated = userio(cli_env, "migrate", process=True)
    listed = userio(cli_env, "project", "list", process=True)

    for result in (migrated, listed):
        assert "Running" not in result.stdout + result.stderr
        assert "version" not in result.stdout + result.stderr


def test_project_configure_allows_special_use_email_domains(cli_env, tmp_path):
    pid = project_id(tmp_path)
    userio(cli_env, "project", "create", "--id", pid, "--domain", f"{pid}.example.test")

    result = userio(cli_env, "project", "configure", "--project", pid, "--set", "allow_special_use_email_domains=true")

    assert json.loads(result.stdout) == {"allow_special_use_email_domains": True}


async def test_scim_token_prints_one_token_the_scim_api_takes(cli_env, tmp_path):
    pid = project_id(tmp_path)
    userio(cli_env, "project", "create", "--id", pid, "--domain", f"{pid}.example.test")

    printed = userio(cli_env, "scim-token", "--project", pid).stdout

    assert printed.count("\n") == 1 and printed.startswith("scim_")
    app = Litestar(plugins=[UserIOPlugin(_config(cli_env))])
    async with (
        app.lifespan(),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="https://x") as client,
    ):
        headers = {"Authorization": f"Bearer {printed.strip()}", "Host": f"{pid}.example.test"}
        listed = await client.get("/_api/scim/v2/Users", headers=headers)
        refused = await client.get("/_api/scim/v2/Users", headers={**headers, "Authorization": "Bearer scim_wrong"})
    assert listed.status_code == 200 and listed.json()["totalResults"] == 0
    assert refused.status_code == 401
    missing = userio(cli_env, "scim-token", "--project", "nope", check=False)
    assert missing.returncode == 1 and "no project 'nope'" in missing.stderr
