"""The pure rules the server (`litestar_userio`) and the `userio` client (`userio_client`) share.

They are the `litestar-userio-core` distribution both depend on (core/pyproject.toml): one copy of each rule, no
web framework, ORM, V8 or driver. The modules: `login_ids` (normalization of login ids), `attribute_formats`
(standard attributes), `admin_keys` (admin key pairs and tokens), `retry`, `files` (private files), `ids`, `clock`,
`paths`.
"""
