"""Pinework for the frameworks agent builders already use (docs/integrations/README.md).

Each module needs its extra, e.g. ``pip install "pinework[langgraph]"``.
"""
