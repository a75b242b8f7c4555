"""The wiki: pages a workspace shares with its agents (docs/reference.md#17-wiki-pages)."""
