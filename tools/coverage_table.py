"""Build docs/coverage.md from the counted failure threads in docs/coverage-data/threads-*.tsv.

Each TSV has the header `class	url	date	component	title`: one public failure thread (issue or
pull request) per row, `class` the reference id that covers it or a proposed kebab-case id. Threads
are deduplicated by URL (the first file in name order wins), counted per class in total and since
2024, and a class counts as covered when a reference with that id exists in catalogue/.

    python tools/coverage_table.py            # rewrite docs/coverage.md and README's coverage line
    python tools/coverage_table.py --check    # exit 1 when either is stale
"""

from __future__ import annotations

import argparse
import csv
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "coverage-data"
CATALOGUE = ROOT / "catalogue"
OUTPUT = ROOT / "docs" / "coverage.md"
README = ROOT / "README.md"
README_START, README_END = "<!-- coverage:start -->", "<!-- coverage:end -->"
COLUMNS = ["class", "url", "date", "component", "title"]
RECENT = "2024"
NOT_COUNTED = {"none", "unlabelled", "used"}
"""Rows that record a thread without a failure class (a healthy log, a thread with no failure
line, or one skipped as off-topic: those say `skipped-<why>`)."""
URLS_SHOWN = 3


@dataclass
class FailureClass:
    name: str
    urls: list[str] = field(default_factory=list)
    recent: int = 0
    components: dict[str, int] = field(default_factory=dict)


def read_threads(data_dir: Path) -> list[dict[str, str]]:
    """Rows of every threads-*.tsv, first occurrence of each URL only."""
    seen: set[str] = set()
    rows = []
    for path in sorted(data_dir.glob("threads-*.tsv")):
        with path.open(encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
            if reader.fieldnames is None or list(reader.fieldnames)[:len(COLUMNS)] != COLUMNS:
                raise ValueError(f"{path}: header must be {' '.join(COLUMNS)} (tab-separated)")
            for n, row in enumerate(reader, start=2):
                url = (row.get("url") or "").strip().rstrip("/")
                name = (row.get("class") or "").strip()
                if not url or not name:
                    raise ValueError(f"{path}:{n}: every row needs a class and a url")
                if name in NOT_COUNTED or name.startswith("skipped"):
                    continue  # a thread looked at and left: no failure, no log, or not GPU/ML
                if url in seen:
                    continue
                seen.add(url)
                rows.append({k: (row.get(k) or "").strip() for k in COLUMNS} | {"url": url})
    return rows


def catalogue_ids(catalogue_dir: Path) -> set[str]:
    """Reference ids present in the catalogue (the folder of each reference.yaml is its id)."""
    return {p.parent.name for p in catalogue_dir.glob("*/*/reference.yaml")}


def classify(rows: list[dict[str, str]]) -> list[FailureClass]:
    classes: dict[str, FailureClass] = {}
    for row in rows:
        cls = classes.setdefault(row["class"], FailureClass(row["class"]))
        cls.urls.append(row["url"])
        if row["date"][:4] >= RECENT:
            cls.recent += 1
        comp = row["component"] or "?"
        cls.components[comp] = cls.components.get(comp, 0) + 1
    return sorted(classes.values(), key=lambda c: (-len(c.urls), -c.recent, c.name))


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "n/a"


def summary(data_dir: Path = DATA, catalogue_dir: Path = CATALOGUE) -> str:
    """One sentence for the README: threads counted and the share the catalogue covers."""
    rows = read_threads(data_dir)
    ids = catalogue_ids(catalogue_dir)
    total, recent = len(rows), sum(1 for r in rows if r["date"][:4] >= RECENT)
    covered = sum(1 for r in rows if r["class"] in ids)
    covered_recent = sum(1 for r in rows if r["class"] in ids and r["date"][:4] >= RECENT)
    return (f"Counted threads: **{total}**; covered by a reference: **{_share(covered, total)}** "
            f"overall, **{_share(covered_recent, recent)}** of the {recent} since {RECENT}.")


def with_readme_summary(readme: str, line: str) -> str:
    """The README text with the line between the coverage markers replaced; unchanged without markers."""
    start, end = readme.find(README_START), readme.find(README_END)
    if start < 0 or end < start:
        return readme
    return readme[:start + len(README_START)] + "\n" + line + "\n" + readme[end:]


def render(data_dir: Path = DATA, catalogue_dir: Path = CATALOGUE) -> str:
    rows = read_threads(data_dir)
    ids = catalogue_ids(catalogue_dir)
    classes = classify(rows)
    total = len(rows)
    recent = sum(c.recent for c in classes)
    covered = sum(len(c.urls) for c in classes if c.name in ids)
    covered_recent = sum(c.recent for c in classes if c.name in ids)
    files = ", ".join(f"`{p.name}`" for p in sorted(data_dir.glob("threads-*.tsv")))
    out = [
        "# Coverage: real failure threads and the references that cover them",
        "",
        "Generated by `python tools/coverage_table.py` from " + (files or "no data file") + " in",
        "`docs/coverage-data/`; do not edit by hand. Each row of the data is one public issue or pull-request",
        "thread reporting a failure, labelled with the failure class it shows (a reference id, or a proposed id",
        "when no reference exists yet). Threads are counted once per URL.",
        "",
        f"- Counted threads: **{total}** ({recent} since {RECENT}), in {len(classes)} failure classes.",
        f"- Covered by a reference: **{covered} of {total} ({_share(covered, total)})**; "
        f"since {RECENT}: **{covered_recent} of {recent} ({_share(covered_recent, recent)})**.",
        f"- Classes with a reference: {sum(1 for c in classes if c.name in ids)}; "
        f"without (\"not yet\"): {sum(1 for c in classes if c.name not in ids)}.",
        "",
        f"| class | threads | since {RECENT} | components | examples | reference |",
        "|---|---:|---:|---|---|---|",
    ]
    for c in classes:
        comps = ", ".join(f"{k} ({v})" if v > 1 else k
                          for k, v in sorted(c.components.items(), key=lambda kv: (-kv[1], kv[0])))
        links = " ".join(f"[{i + 1}]({u})" for i, u in enumerate(c.urls[:URLS_SHOWN]))
        ref = f"`{c.name}`" if c.name in ids else "not yet"
        out.append(f"| {c.name} | {len(c.urls)} | {c.recent} | {comps} | {links} | {ref} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/coverage.md is stale")
    args = parser.parse_args(argv)
    try:
        text = render()
        readme = README.read_text(encoding="utf-8")
        new_readme = with_readme_summary(readme, summary())
    except (OSError, ValueError) as exc:
        print(f"coverage_table: {exc}", file=sys.stderr)
        return 2
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.is_file() else ""
        stale = [p.name for p, ok in ((OUTPUT, current == text), (README, readme == new_readme)) if not ok]
        if stale:
            print(f"stale: {', '.join(stale)} - run python tools/coverage_table.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    README.write_text(new_readme, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)} and the coverage line of {README.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
