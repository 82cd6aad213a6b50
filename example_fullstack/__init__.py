"""A small app in litestar-fullstack's shape (advanced-alchemy `User` with UUID ids and Argon2 hashes, its own
`UserService`, routes and Alembic) that adopts litestar-userio by `docs/adoption.md`.

`app_before` is the app as it was; `app` is the same app after the adoption: the plugin beside it in the
`userio` schema, the login switched to the plugin's sign-in, every other route unchanged. `move_users` is the
one-off move of its users into the plugin, keeping their ids and their Argon2 hashes.
"""
