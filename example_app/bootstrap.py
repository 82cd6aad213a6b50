"""First-start set-up of the demo: the TLS certificate and project `demo` with its admin key."""

from __future__ import annotations

import datetime
import ipaddress
import os
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from litestar_userio.cli import default_key_path
from litestar_userio.config import UserIOConfig
from litestar_userio.services import Services
from userio_core.admin_keys import generate_key_pair

DEMO_PROJECT = "demo"
DEMO_ROLES = ("admin", "editor", "viewer")
DEMO_GROUPS = ("staff", "customers")
DEMO_CLIENTS = {"demo-app": True, "demo-opaque": False}
"""client_id -> whether it gets JWT access tokens (SPEC 6.1 rule 4)."""


def ensure_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for localhost, made once and kept in `folder`."""
    cert_path, key_path = folder / "localhost.crt", folder / "localhost.key"
    if cert_path.exists() and key_path.exists():
        return cert_path, key_path
    folder.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=825))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as file:
        file.write(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path


async def ensure_demo_project(config: UserIOConfig) -> Path:
    """Project `demo` on domain `localhost`, its roles and groups, and its admin key file; idempotent."""
    key_path = default_key_path(DEMO_PROJECT)
    services = await Services.start(config, run_jobs=False)
    try:
        if await services.projects.get(DEMO_PROJECT) is None:
            await services.projects.create(DEMO_PROJECT, ["localhost", "127.0.0.1"])
        if not key_path.exists():
            pair = generate_key_pair()
            await services.projects.add_admin_key(DEMO_PROJECT, pair.kid, pair.public_pem)
            key_path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as file:
                file.write(pair.private_pem)
        await services.projects.add_keys(DEMO_PROJECT, "userio_role", DEMO_ROLES)
        await services.projects.add_keys(DEMO_PROJECT, "userio_group", DEMO_GROUPS)
        for client_id, jwt_access_token in DEMO_CLIENTS.items():
            if await services.tokens.applications.get(DEMO_PROJECT, client_id) is None:
                await services.tokens.applications.create(
                    DEMO_PROJECT, client_id, issue_jwt_access_token=jwt_access_token, name=client_id
                )
    finally:
        await services.close()
    return key_path
