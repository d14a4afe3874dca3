"""tcplab's infrastructure: what runs the service but holds no domain logic.

`logging` (JSON/text log setup and the request/run context), `broker` (Redis clients and
kombu's Redis key layout), `embedded` (the embedded PostgreSQL and Redis processes) are leaf
adapters: `services/`, `api/` and `worker/` may use them, and they import none of those
(settings come in as arguments). `launch` (``python -m infra.launch``, ``make run``) is the
composition root above everything: it starts the servers, the workers and the API.
The contracts in ``.importlinter`` (run by ``make test``) hold these lines.
"""
