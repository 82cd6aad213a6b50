"""The admin console: a static single-page app (served by `web/console.py`) and the admin reads it needs."""
