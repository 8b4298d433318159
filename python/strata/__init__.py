"""Deterministic synthetic datasets from strata specs, generated in Rust,
part by part, as pyarrow Tables or Parquet / Arrow IPC files.

``strata.generate(spec, part=I, parts=N, rows=T, seed=S, ...)`` makes one
part of the dataset ``spec`` describes (a preset name, a ``.toml`` file or
TOML text); ``presets()``, ``spec_text(name)`` and ``tables(spec)`` list
and show specs; ``commit_table(path)`` commits the parts staged in an
Iceberg or Delta table; ``report(inputs, spec=...)`` gives the HTML page
``strata report`` writes. The same package installs the ``strata`` command
(also ``python -m strata``), which is the command line of the Rust binary.
"""

from strata._native import (
    __version__,
    commit_table,
    generate,
    presets,
    report,
    spec_text,
    tables,
)

__all__ = ["__version__", "commit_table", "generate", "presets", "report", "spec_text", "tables"]
