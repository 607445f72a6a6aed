"""Fleet scans: diagnose many jobs' logs in parallel and summarise what recurs where.

`jobs` turns paths, globs and URLs into jobs; `worker` diagnoses one job into a plain row;
`runner` runs the workers on a local process pool or a Dask cluster; `output` writes the rows;
`aggregate` summarises them (per reference, host and day, and the unexplained failures clustered
into templates). Optional dependencies (the `fleet` extra) are imported only where they are used.
"""

from __future__ import annotations
