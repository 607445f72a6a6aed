"""Where the incident store lives: --db, then $FAULTLENS_DB, then a per-user SQLite file."""

from __future__ import annotations

import os
from pathlib import Path


def default_db_path() -> Path:
    """$XDG_DATA_HOME/faultlens/incidents.db, i.e. ~/.local/share/faultlens/incidents.db."""
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(data) / "faultlens" / "incidents.db"


def resolve_db_url(db: str | None = None) -> str:
    """A SQLAlchemy URL from a URL, a file path, $FAULTLENS_DB or the default path.

    `postgresql://` and `postgres://` mean the psycopg 3 driver (the one the `web` extra installs).
    """
    db = db or os.environ.get("FAULTLENS_DB") or str(default_db_path())
    if "://" not in db:
        return f"sqlite:///{Path(db).expanduser()}"
    scheme, rest = db.split("://", 1)
    if scheme in ("postgresql", "postgres"):
        return f"postgresql+psycopg://{rest}"
    return db
