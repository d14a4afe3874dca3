"""tcplab's HTTP API (FastAPI): one router per resource, calling into `services`."""
