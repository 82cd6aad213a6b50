"""Account valid period of a user and expiry of a password (ref: `account_valid_from/until`, `expire_after`);
refresh tokens, stored hashed, rotated on use."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import Timestamptz
from piccolo.columns.indexes import IndexMethod
from piccolo.engine import engine_finder
from piccolo.querystring import QueryString

ID = "2026-11-23T04:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "account valid period, password expiry, refresh tokens"

NULL_TIMESTAMP = {
    "default": None,
    "null": True,
    "primary_key": False,
    "unique": False,
    "index": False,
    "index_method": IndexMethod.btree,
    "choices": None,
    "db_column_name": None,
    "secret": False,
}

REFRESH_TOKEN_TABLE = (
    "CREATE TABLE userio_refresh_token ("
    " id VARCHAR(36) PRIMARY KEY,"
    " project_id VARCHAR(64) NOT NULL REFERENCES userio_project (id) ON DELETE CASCADE,"
    " user_id VARCHAR(36) NOT NULL REFERENCES userio_user (id) ON DELETE CASCADE,"
    " client_id TEXT NOT NULL,"
    " family_id VARCHAR(36) NOT NULL,"
    " token_hash TEXT NOT NULL UNIQUE,"
    " scope TEXT NOT NULL,"
    " created_at {ts} NOT NULL,"
    " expires_at {ts} NOT NULL,"
    " used_at {ts} NULL,"
    " revoked_at {ts} NULL)"
)


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="userio", description=DESCRIPTION)
    for table_class_name, tablename, column_name in (
        ("User", "userio_user", "account_valid_from"),
        ("User", "userio_user", "account_valid_until"),
        ("Authenticator", "userio_authenticator", "expire_after"),
    ):
        manager.add_column(
            table_class_name=table_class_name,
            tablename=tablename,
            column_name=column_name,
            db_column_name=column_name,
            column_class_name="Timestamptz",
            column_class=Timestamptz,
            params=dict(NULL_TIMESTAMP),
            schema=None,
        )

    async def create_refresh_tokens():
        engine = engine_finder()
        await engine.run_querystring(QueryString(REFRESH_TOKEN_TABLE.format(ts="TIMESTAMPTZ")))
        await engine.run_querystring(
            QueryString("CREATE INDEX userio_refresh_token_family ON userio_refresh_token (family_id)")
        )

    manager.add_raw(create_refresh_tokens)
    return manager
