"""Fleet scans: diagnose many jobs' logs in parallel and summarise what recurs where.

`jobs` turns paths, globs and URLs into jobs (`remote` reads fsspec URLs); `worker` diagnoses one
job into a plain row (`row`), with the host, day and error lines that `clues` reads from the
ends of each log; `runner` runs the workers on a local process pool or a Dask cluster; `output`
writes the rows to a file and `incidents` to the incident store; `aggregate` summarises them
(per reference, host and day, and the unexplained failures clustered into templates). Optional
dependencies (the `fleet` extra) are imported only where they are used.
"""

from __future__ import annotations
