"""Where pages live: absolute paths on the server, relative file names in the static site."""

from __future__ import annotations

from urllib.parse import quote


class ServerLinks:
    """Links of `faultlens serve`."""

    server = True

    def home(self) -> str:
        return "/"

    def search(self) -> str:
        return "/search"

    def category(self, name: str) -> str:
        return f"/categories/{quote(name)}"

    def reference(self, ref_id: str) -> str:
        return f"/references/{quote(ref_id)}"

    def static(self, name: str) -> str:
        return f"/static/{name}"

    def diagnose(self) -> str:
        return "/diagnose"

    def incidents(self) -> str:
        return "/incidents"

    def incident(self, incident_id: int) -> str:
        return f"/incidents/{int(incident_id)}"

    def fleet(self) -> str:
        return "/fleet"


class SiteLinks:
    """Links of the static site, relative to a page `depth` folders below the site's root, so the
    site works from any folder, file:// included."""

    server = False

    def __init__(self, depth: int = 0):
        self.root = "../" * depth

    def home(self) -> str:
        return f"{self.root}index.html"

    def search(self) -> str:
        return f"{self.root}index.html"

    def category(self, name: str) -> str:
        return f"{self.root}categories/{quote(name)}.html"

    def reference(self, ref_id: str) -> str:
        return f"{self.root}references/{quote(ref_id)}.html"

    def static(self, name: str) -> str:
        return f"{self.root}static/{name}"
