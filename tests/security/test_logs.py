"""No live credential in any log (issue 9, point 7): the example app run as a real process, its output grepped.

The example app writes its admin token to a 0600 file unless its output is a terminal; uvicorn's access log
keeps request lines without query strings (signed download URLs, tokens a client put there) and never a JWT.
"""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import ssl
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import jwt

from tests.client.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]


def example_env(home: Path, port: int) -> dict[str, str]:
    return {
        **os.environ,
        "USERIO_HOME": str(home),
        "USERIO_DATABASE_URL": "",
        "USERIO_REDIS_URL": "",
        "USERIO_S3_BUCKET": "",
        "USERIO_DOWNLOAD_BASE_URL": "",
        "PORT": str(port),
        "LOG_LEVEL": "info",
        "PYTHONUNBUFFERED": "1",
    }


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_until_up(client: httpx.Client, url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()[-2000:]
        try:
            if client.get(url + "/").status_code == 200:
                return
        except (httpx.HTTPError, OSError, ssl.SSLError):
            pass
        time.sleep(0.2)  # polling a starting server: there is no event to await
    raise AssertionError(f"the example app did not start: {log.read_text()[-2000:]}")


def test_a_logged_example_app_keeps_tokens_and_signed_query_strings_out_of_its_output(tmp_path):
    home, port = tmp_path / "home", free_port()
    home.mkdir()
    log = tmp_path / "server.log"
    url = f"https://localhost:{port}"
    process = subprocess.Popen(
        [sys.executable, "-m", "example_app"],
        cwd=ROOT,
        env=example_env(home, port),
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    try:
        cert = home / "tls" / "localhost.crt"
        deadline = time.monotonic() + 90
        while not cert.exists() and time.monotonic() < deadline:
            assert process.poll() is None, log.read_text()
            time.sleep(0.1)  # the certificate is the first file the app writes
        with httpx.Client(verify=ssl.create_default_context(cafile=str(cert)), timeout=30) as client:
            wait_until_up(client, url, process, log)
            match = re.search(r"it is in (\S+), mode 0600", log.read_text())
            assert match, log.read_text()
            token_file = Path(match[1])
            assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
            token = token_file.read_text().strip()
            assert jwt.get_unverified_header(token)["alg"] == "RS256"
            auth = {"Authorization": f"Bearer {token}"}

            imported = client.post(
                f"{url}/_api/admin/users/import",
                json={"identifier": "email", "records": [{"email": "ada@example.com"}]},
                headers=auth,
            )
            assert imported.status_code == 202, imported.text
            assert client.get(f"{url}/?access_token={token}&page=2").status_code == 200
            assert client.get(f"{url}/_api/admin/users/import/{token}", headers=auth).status_code == 404
            exported = client.post(f"{url}/_api/admin/users/export", json={"format": "ndjson"}, headers=auth)
            assert exported.status_code == 202, exported.text
            status_url = url + exported.headers["location"]
            deadline = time.monotonic() + 60
            while (result := client.get(status_url, headers=auth).json()["result"])["status"] != "completed":
                assert time.monotonic() < deadline, result
                time.sleep(0.1)  # the export job runs in the server process
            download_url = httpx.URL(result["download_url"])
            assert client.get(download_url).status_code == 200
    finally:
        stop(process)

    output = log.read_text()
    assert f'"GET {download_url.path}?[query dropped] HTTP/1.1" 200' in output  # logged, without its query
    assert '"GET /?[query dropped] HTTP/1.1" 200' in output
    assert '"POST /_api/admin/users/import HTTP/1.1" 202' in output
    assert '"GET /_api/admin/users/import/[REDACTED JWT] HTTP/1.1" 404' in output
    signature = download_url.params["signature"]
    for secret in (token, token.split(".")[2], token.split(".")[1], signature):
        assert secret not in output
    assert "signature=" not in output and "access_token=" not in output


def test_an_interactive_terminal_is_shown_the_token_and_no_file_is_written(tmp_path):
    home, port = tmp_path / "home", free_port()
    home.mkdir()
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "example_app"],
        cwd=ROOT,
        env=example_env(home, port),
        stdin=subprocess.DEVNULL,
        stdout=terminal,
        stderr=terminal,
    )
    os.close(terminal)
    seen = b""
    try:
        deadline = time.monotonic() + 90
        while b"export TOKEN=" not in seen or b"\n" not in seen.split(b"export TOKEN=", 1)[1]:
            assert time.monotonic() < deadline and process.poll() is None, seen.decode(errors="replace")
            ready, _, _ = select.select([controller], [], [], 1)
            if ready:
                seen += os.read(controller, 65536)
    finally:
        stop(process)
        os.close(controller)

    shown = seen.split(b"export TOKEN=", 1)[1].split(b"\r\n", 1)[0].strip().decode()
    assert jwt.get_unverified_header(shown)["alg"] == "RS256"
    assert not (home / "admin-token.jwt").exists()
