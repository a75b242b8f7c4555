"""Webhooks (docs/reference.md#webhooks): registration, URL safety, signing, delivery."""
