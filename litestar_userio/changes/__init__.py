"""The change log (docs/changes.md): every committed change of a user, in commit order, for followers.

`entries.py` what an entry is (`ChangeOrigin`, `ChangeEntry`, `Position`), `cursors.py` the opaque cursors,
`change_repository.py` every statement, `change_service.py` the feed, retention and consumers, `events_consumer.py` the
Litestar events as the first consumer.
"""
