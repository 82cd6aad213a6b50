"""The admin console: a static single-page app served by the plugin, and the admin reads it needs."""

from litestar_userio.console.controller import build_console_controller
from litestar_userio.console.directory import build_directory_controller

__all__ = ["build_console_controller", "build_directory_controller"]
