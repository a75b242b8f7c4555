"""The data lifecycle (docs/reference.md#16-data-lifecycle): erasing agents, persons and
workspaces on request."""
