"""The persons' dashboard (docs/reference.md#13-dashboard, docs/issues.md#issue-13), served by the
same app: its routes, registered on one blueprint (``app.py`` adds it without a prefix). The pages
live in ``chalicelib/web``; each route here only names its view."""

from chalicelib.api.dashboard.routes import dashboard_web

__all__ = ["dashboard_web"]
