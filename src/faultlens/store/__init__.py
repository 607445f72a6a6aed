"""The incident store: every diagnosed log, with its diagnosis, host, job, time and redacted log.

`incidents.IncidentStore` is the API (SQLAlchemy: SQLite by default, PostgreSQL by URL);
`paths` resolves where the store lives; `client` posts incidents to a `faultlens serve` server.
This package imports nothing heavy, so the agents (`watch`, `run`) can use the client cheaply.
"""
