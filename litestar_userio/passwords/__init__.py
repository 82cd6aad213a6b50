"""Password formats of imported users and their verification (DECISIONS 12)."""
