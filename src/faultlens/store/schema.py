"""The incident table, in SQLAlchemy Core so one definition serves SQLite and PostgreSQL."""

from __future__ import annotations

import sqlalchemy as sa

SOURCES = ("web", "api", "run", "watch", "scan")
"""Where an incident came from: the web page, the HTTP API, an agent, or `faultlens scan`."""

metadata = sa.MetaData()

incidents = sa.Table(
    "incidents",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    # naive UTC: both backends then agree on what date(created_at) is
    sa.Column("created_at", sa.DateTime(), nullable=False, index=True),
    sa.Column("host", sa.String(255), nullable=False, index=True),
    sa.Column("job", sa.String(255), nullable=False, index=True),
    sa.Column("source", sa.String(16), nullable=False),
    sa.Column("reference", sa.String(128), index=True),
    sa.Column("confidence", sa.Float),
    sa.Column("diagnosis", sa.JSON, nullable=False),
    sa.Column("log", sa.Text, nullable=False),
    sa.Column("log_bytes", sa.BigInteger, nullable=False),
    sa.Index("ix_incidents_reference_created_at", "reference", "created_at"),
)
