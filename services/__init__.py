"""tcplab's domain layer: scenarios and presets, the analytic models, persistence, runs.

Free of HTTP and Celery: `api/` and `worker/` call into it, never the other way round.
"""
