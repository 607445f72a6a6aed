"""Summarise a scan's rows into the aggregate report (text via render/fleet.py, or --json).

Every job is in exactly one of three groups: diagnosed (a failure diagnosis of confidence at least
row.CONFIDENT), unexplained (none, or a weaker one), unreadable (`error` set). The report counts
diagnosed jobs per reference, per host and per day; flags hosts where a reference recurs more
than chance explains (a node with repeated Xid or ECC failures, see CHANCE_MAX); and clusters the
unexplained jobs' error lines into templates with Drain3, so catalogue authors see what to write
next.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

from .clues import load_rules
from .row import CONFIDENT, is_explained

REPEAT_MIN = 2
"""A host stands out for a reference diagnosed in at least this many of its jobs ..."""
CHANCE_MAX = 0.001
"""... when chance alone would put that many there less often than this: the binomial tail of
the host's job count at the reference's share of all the jobs that name a host."""
EXAMPLE_JOBS = 3
UNREADABLE_EXAMPLES = 20
UNKNOWN = "unknown"


def summarize(rows: list[dict], catalogue: str | None = None) -> dict:
    """The aggregate of `rows`; `catalogue` is the digest the scan expected workers to use."""
    rows = sorted(rows, key=lambda r: r["job"])  # Drain3 is order-sensitive: keep it stable
    unreadable = [r for r in rows if r["error"]]
    readable = [r for r in rows if not r["error"]]
    diagnosed = [r for r in readable if is_explained(r)]
    unexplained = [r for r in readable if not is_explained(r)]
    digests = sorted({r["catalogue"] for r in rows if r["catalogue"]})
    return {
        "jobs": len(rows),
        "diagnosed": len(diagnosed),
        "unexplained": len(unexplained),
        "unreadable": len(unreadable),
        "confident": CONFIDENT,
        "catalogues": digests,
        "catalogue_mismatch": [r["job"] for r in rows
                               if catalogue and r["catalogue"] and r["catalogue"] != catalogue],
        "references": _references(diagnosed),
        "hosts": _hosts(readable),
        "days": _days(rows),
        "unexplained_templates": cluster_error_lines(unexplained),
        "unexplained_without_error_lines": sum(1 for r in unexplained if not r["error_lines"]),
        "unreadable_examples": [{"job": r["job"], "error": r["error"]}
                                for r in unreadable[:UNREADABLE_EXAMPLES]],
    }


def _references(diagnosed: list[dict]) -> list[dict]:
    jobs = Counter(r["diagnosis"] for r in diagnosed)
    first = {}
    hosts: dict[str, set] = defaultdict(set)
    for r in diagnosed:
        first.setdefault(r["diagnosis"], r)
        if r["host"]:
            hosts[r["diagnosis"]].add(r["host"])
    return [{"id": ref, "title": first[ref]["title"], "category": first[ref]["category"],
             "jobs": n, "hosts": len(hosts[ref]), "examples": _examples(diagnosed, ref)}
            for ref, n in sorted(jobs.items(), key=lambda kv: (-kv[1], kv[0]))]


def _examples(rows: list[dict], ref: str) -> list[str]:
    return [r["job"] for r in rows if r["diagnosis"] == ref][:EXAMPLE_JOBS]


def _hosts(readable: list[dict]) -> list[dict]:
    """Per host: jobs, diagnoses, and the references that recur there more than elsewhere."""
    with_host = [r for r in readable if r["host"]]
    total = len(with_host)
    ref_total = Counter(r["diagnosis"] for r in with_host if is_explained(r))
    out = []
    by_host: dict[str, list[dict]] = defaultdict(list)
    for r in with_host:
        by_host[r["host"]].append(r)
    for host, host_rows in by_host.items():
        refs = Counter(r["diagnosis"] for r in host_rows if is_explained(r))
        repeated = []
        for ref, n in refs.items():
            rate = ref_total[ref] / total
            chance = chance_of_at_least(n, len(host_rows), rate)
            if n >= REPEAT_MIN and chance < CHANCE_MAX:
                repeated.append({"id": ref, "jobs": n, "expected": round(len(host_rows) * rate, 2),
                                 "chance": float(f"{chance:.2g}")})
        repeated.sort(key=lambda x: (-x["jobs"], x["id"]))
        out.append({"host": host, "jobs": len(host_rows),
                    "unexplained": sum(1 for r in host_rows if not is_explained(r)),
                    "references": dict(sorted(refs.items(), key=lambda kv: (-kv[1], kv[0]))),
                    "repeated": repeated})
    out.sort(key=lambda h: (not h["repeated"], -max([x["jobs"] for x in h["repeated"]] or [0]),
                            -h["jobs"], h["host"]))
    return out


def chance_of_at_least(n: int, trials: int, rate: float) -> float:
    """P(X >= n) for X ~ Binomial(trials, rate)."""
    if n <= 0:
        return 1.0
    if rate <= 0 or n > trials:
        return 0.0
    if rate >= 1:
        return 1.0
    log_p, log_q = math.log(rate), math.log1p(-rate)
    return min(1.0, sum(math.exp(math.lgamma(trials + 1) - math.lgamma(k + 1)
                                 - math.lgamma(trials - k + 1) + k * log_p + (trials - k) * log_q)
                        for k in range(n, trials + 1)))


def _days(rows: list[dict]) -> list[dict]:
    by_day: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_day[r["day"] or UNKNOWN].append(r)
    out = []
    for day in sorted(by_day, key=lambda d: (d == UNKNOWN, d)):
        day_rows = by_day[day]
        readable = [r for r in day_rows if not r["error"]]
        refs = Counter(r["diagnosis"] for r in readable if is_explained(r))
        out.append({"day": day, "jobs": len(day_rows), "diagnosed": sum(refs.values()),
                    "unexplained": len(readable) - sum(refs.values()),
                    "unreadable": len(day_rows) - len(readable),
                    "references": dict(sorted(refs.items(), key=lambda kv: (-kv[1], kv[0])))})
    return out


def cluster_error_lines(unexplained: list[dict]) -> list[dict]:
    """Drain3 templates of the unexplained jobs' error lines: how many jobs and lines each covers,
    and example jobs. Lines are masked first (clues.yaml `masks`: hex, IPs, paths, numbers)."""
    if not any(r["error_lines"] for r in unexplained):
        return []
    from drain3 import TemplateMiner
    from drain3.masking import MaskingInstruction
    from drain3.template_miner_config import TemplateMinerConfig

    config = TemplateMinerConfig()
    config.masking_instructions = [MaskingInstruction(regex, name)
                                   for name, regex in load_rules().masks]
    miner = TemplateMiner(config=config)
    lines: Counter = Counter()
    jobs: dict[int, list[str]] = defaultdict(list)
    for row in unexplained:
        for line in row["error_lines"]:
            cluster = miner.add_log_message(line)["cluster_id"]
            lines[cluster] += 1
            if row["job"] not in jobs[cluster][-1:]:
                jobs[cluster].append(row["job"])
    templates = {c.cluster_id: c.get_template() for c in miner.drain.clusters}
    out = [{"template": templates[cid], "jobs": len(jobs[cid]), "lines": lines[cid],
            "examples": jobs[cid][:EXAMPLE_JOBS]} for cid in lines]
    out.sort(key=lambda t: (-t["jobs"], -t["lines"], t["template"]))
    return out
