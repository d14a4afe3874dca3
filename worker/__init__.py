"""tcplab's Celery workers: tasks take ids, open their own session, call into `services`."""
