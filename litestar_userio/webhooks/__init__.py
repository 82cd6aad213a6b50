"""Webhooks (docs/webhooks.md): a project's endpoints, and signed deliveries of its committed change-log entries."""
