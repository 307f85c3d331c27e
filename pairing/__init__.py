"""Pure pairing and scoring maths for tournaments (`pairing.tournament`), importable by every process.

Layer: pure. No Django, no Celery, no gRPC, no I/O; nothing of `ladder`, `workers` or `engine_service`
(the import-graph contracts in pyproject.toml, checked by tests/test_import_layers.py).
"""
