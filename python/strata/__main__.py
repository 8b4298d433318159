"""The ``strata`` command (a console entry point) and ``python -m strata``:
the strata command line, run by the same Rust code as the binary, with the
same flags, output and exit statuses."""

import signal
import sys

from strata._native import main as _run


def main() -> int:
    """Runs ``strata`` with this process's arguments; returns its status."""
    # Ctrl-C goes to the command as it would to the binary (which removes
    # the files of an unfinished run and exits with 130), not to Python's
    # KeyboardInterrupt, which Rust code never sees.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    return _run(["strata", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
