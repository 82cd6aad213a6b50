"""Password formats of imported users and their verification (docs/reference.md#passwords-formats)."""
