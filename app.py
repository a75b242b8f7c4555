"""Pinework Memory: every Lambda entry point, one line each (STYLE.md rule 1)."""

from chalice.app import Chalice

from chalicelib.api.memories import memories_api
from chalicelib.api.recalls import recalls_api

app = Chalice(app_name="pinework")
app.register_blueprint(memories_api, url_prefix="/api/v1")
app.register_blueprint(recalls_api, url_prefix="/api/v1")
