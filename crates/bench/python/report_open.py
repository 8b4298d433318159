"""How long a strata report page takes to open in headless Chromium.

    python report_open.py PAGE.html [RUNS]

For each run, a copy of the page with one added inline script (which
writes the time from navigation start to the end of the load event, and
to the first contentful paint, into the document's title after load) is
opened with `chromium --headless --dump-dom`; the title is read back from
the dumped DOM. Prints the median and range of each, and the same for an
empty page, so the browser's own start-up is not counted. The page itself
is never changed.
"""

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PROBE = """<script>
addEventListener("load", () => setTimeout(() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const fcp = performance.getEntriesByName("first-contentful-paint")[0];
  document.title = "load=" + nav.loadEventEnd.toFixed(1) + " fcp=" + (fcp ? fcp.startTime.toFixed(1) : "nan");
}, 0));
</script>"""


def run(page: Path, chromium: str) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as profile:
        out = subprocess.run(
            [
                chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                f"--user-data-dir={profile}", "--virtual-time-budget=5000", "--dump-dom", page.resolve().as_uri(),
            ],
            capture_output=True, text=True, timeout=120, check=True,
        ).stdout
    m = re.search(r"load=([0-9.]+) fcp=([0-9.na]+)", out)
    if not m:
        raise SystemExit(f"no timing in the dumped DOM of {page}")
    return float(m.group(1)), float(m.group(2))


def main():
    page = Path(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    chromium = os.environ.get("STRATA_CHROMIUM") or shutil.which("chromium")
    if not chromium:
        raise SystemExit("chromium is not installed")
    with tempfile.TemporaryDirectory() as d:
        probed = Path(d) / page.name
        probed.write_text(page.read_text().replace("</body>", PROBE + "</body>", 1))
        empty = Path(d) / "empty.html"
        empty.write_text("<!DOCTYPE html><html><head><title></title></head><body><p>x</p></body></html>".replace("</body>", PROBE + "</body>"))
        for name, p in (("empty page", empty), (page.name, probed)):
            loads, fcps = zip(*(run(p, chromium) for _ in range(runs)))
            print(
                f"{name}: {p.stat().st_size:,} bytes; load event ends at {statistics.median(loads):.0f} ms "
                f"({min(loads):.0f}-{max(loads):.0f}); first contentful paint {statistics.median(fcps):.0f} ms, {runs} runs"
            )


main()
