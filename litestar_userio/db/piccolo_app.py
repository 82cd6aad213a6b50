"""The plugin's Piccolo app.

Hosts with their own `piccolo_conf.py` list it in `APP_REGISTRY`:

    APP_REGISTRY = AppRegistry(apps=["litestar_userio.db.piccolo_app"])

and run `piccolo migrations forwards userio`.
"""

from __future__ import annotations

from piccolo.conf.apps import AppConfig

from litestar_userio.db.migrations import APP_NAME, migrations_folder
from litestar_userio.db.tables import TABLES

__all__ = ["APP_CONFIG", "migrations_folder"]


APP_CONFIG = AppConfig(
    app_name=APP_NAME,
    migrations_folder_path=str(migrations_folder()),
    table_classes=list(TABLES),
    migration_dependencies=[],
    commands=[],
)
