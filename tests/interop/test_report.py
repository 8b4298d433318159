"""strata's HTML reports, opened in a real browser (headless Chromium).

`strata generate --report`, `strata report`, `strata compact plan --report`
and `strata infer --compare --html` each write one self-contained page. Here
Chromium loads each page from disk and:

- its DOM (`--dump-dom`) has every section and chart the page promises
  (the class names are the contract documented in crates/report/src/html);
- a screenshot is not blank (many distinct pixel values);
- it makes no network request (Chromium's own net log, where every
  request the page makes is recorded, has none but the browser's own
  service calls) and names nothing outside the file.

scripts/test installs Chromium (Debian's `chromium`) when it is missing;
without it these tests are skipped.
"""

import json
import os
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("STRATA_CHROMIUM") or shutil.which("chromium")

pytestmark = pytest.mark.skipif(
    not CHROMIUM, reason="Chromium is not installed (scripts/test installs Debian's `chromium`)"
)

# The browser's own service calls (updates, accounts, time), which a page
# does not cause; the background-networking flags leave only these.
BROWSER_HOSTS = ("google.com", "googleapis.com", "gstatic.com", "gvt1.com")


def chromium(page: Path, *args: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        cmd = [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            *args,
            page.resolve().as_uri(),
        ]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag = tag
        self.attrs = dict(attrs)
        self.parent = parent
        self.children = []
        self.text = []

    @property
    def classes(self):
        return (self.attrs.get("class") or "").split()

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def find(self, tag=None, cls=(), **attrs):
        cls = (cls,) if isinstance(cls, str) else cls
        return [
            n
            for n in self.walk()
            if (tag is None or n.tag == tag)
            and all(c in n.classes for c in cls)
            and all(n.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())
        ]

    def all_text(self):
        return "".join(t for n in self.walk() for t in n.text)

    def markup(self):
        """The subtree as comparable text: tags, attributes and text."""
        inner = "".join(c.markup() for c in self.children)
        attrs = " ".join(f"{k}={v}" for k, v in sorted(self.attrs.items()))
        return f"<{self.tag} {attrs}>{''.join(self.text)}{inner}</{self.tag}>"


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Tree(HTMLParser):
    def __init__(self):
        super().__init__()
        self.root = Node("#root", {}, None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.text.append(data)


def parse(html: str) -> Node:
    t = Tree()
    t.feed(html)
    return t.root


def dom(page: Path, tmp_path: Path) -> Node:
    """The page's DOM as Chromium builds it, after checking that loading it
    requested nothing."""
    netlog = tmp_path / f"{page.stem}.netlog.json"
    out = chromium(page, f"--log-net-log={netlog}", "--dump-dom")
    requested = set()
    for line in netlog.read_text().splitlines():
        # The net log is one JSON document; its events sit one per line.
        i = line.find('"url":"')
        while i >= 0:
            j = line.index('"', i + 7)
            requested.add(line[i + 7 : j])
            i = line.find('"url":"', j)
    page_requests = [
        u for u in requested if not u.startswith("file:") and not any(h in u.split("/")[2] for h in BROWSER_HOSTS if "//" in u)
    ]
    assert not page_requests, f"{page.name} made network requests: {page_requests}"
    return parse(out.stdout)


def check_self_contained(page: Path) -> None:
    """Nothing the page names is outside it: links only to its own
    fragments, no stylesheet, script source, image, font or import."""
    root = parse(page.read_text())
    for n in root.walk():
        for attr in ("src", "href", "xlink:href", "srcset", "action", "data"):
            v = n.attrs.get(attr)
            if v is not None:
                assert v.startswith("#"), f"{page.name}: <{n.tag} {attr}={v!r}> points outside the page"
        assert n.tag not in ("link", "script", "iframe", "object", "img"), f"{page.name}: a <{n.tag}> element"
    for style in root.find("style"):
        css = "".join(style.text)
        assert "url(" not in css and "@import" not in css, f"{page.name}: CSS fetches something"


def check_not_blank(page: Path, tmp_path: Path) -> int:
    from PIL import Image

    png = tmp_path / f"{page.stem}.png"
    chromium(page, f"--screenshot={png}", "--window-size=1280,2000", "--hide-scrollbars")
    img = Image.open(png).convert("RGB")
    colors = img.getcolors(maxcolors=1 << 20)
    assert colors is not None  # more than 2^20 colors is certainly not blank
    top = max(c for c, _ in colors)
    total = img.width * img.height
    # Text, bars and overlays: dozens of distinct values, and no single
    # color covering (nearly) the whole screen.
    assert len(colors) >= 32, f"{page.name}: only {len(colors)} distinct pixel values"
    assert top < 0.97 * total, f"{page.name}: one color covers {top / total:.1%} of the screenshot"
    return len(colors)


def sections(root: Node, cls: str) -> list:
    return root.find("section", cls)


def charts(node: Node, kind: str) -> list:
    return node.find("svg", ("chart", kind))


def check_dataset_page(root: Node, tables: dict, references: int) -> None:
    """`tables`: each table's name and its column count (top level)."""
    assert root.find("h1"), "no title"
    summary = root.find("section", "summary", id="summary")
    assert summary, "no summary section"
    rows = summary[0].find("tr")
    assert len(rows) > 1, "the summary has no checks (a spec was given)"
    shown = {s.attrs.get("id"): s for s in sections(root, "table")}
    assert len(shown) == len(tables), f"tables shown: {sorted(shown)}"
    for name in tables:
        assert f"table-{name}" in shown, f"no section for table {name}: {sorted(shown)}"
    kinds = set()
    for table_id, table in shown.items():
        # Every top-level field has a section (nested ones add more).
        columns = table.find("section", "column")
        assert len(columns) >= tables[table_id[len("table-") :]], f"{table_id}: {len(columns)} column sections"
        for col in columns:
            kind = col.attrs.get("data-kind")
            kinds.add(kind)
            assert kind in {"number", "time", "text", "boolean", "list", "struct"}, kind
            # Every column shows its nulls; then the charts of its kind.
            assert charts(col, "nulls"), f"{col.attrs['id']}: no null chart"
            if kind in ("number", "time"):
                assert charts(col, "histogram"), f"{col.attrs['id']}: no histogram"
            if kind == "text":
                # Top values only where values repeat (not for unique text).
                assert charts(col, "lengths"), f"{col.attrs['id']}: no lengths"
            if kind == "list":
                assert charts(col, "lengths"), f"{col.attrs['id']}: no lengths"
            for svg in col.find("svg", "chart"):
                assert svg.find("title"), f"{col.attrs['id']}: a chart without a title"
        layout = table.find("section", "layout")
        assert layout, f"{table_id}: no layout section"
        for kind in ("partitions", "key-ranges", "row-groups"):
            assert charts(layout[0], kind), f"{table_id}: no {kind} chart"
    assert {"number", "text"} <= kinds, kinds
    assert root.find(cls="expected"), "no expected overlay though a spec was given"
    assert root.find("svg", ("chart", "rank-frequency")), "no rank-frequency chart"
    assert root.find("svg", ("chart", "top-values")), "no top-values chart"
    refs = root.find("div", "reference")
    assert len(refs) >= references, f"{len(refs)} references shown, {references} expected"
    for r in refs:
        assert charts(r, "fanout"), "a reference without its fan-out chart"


def spec_tables(strata_bin: str, preset: str) -> dict:
    """Each table of a preset and its number of top-level fields."""
    text = subprocess.run([strata_bin, "spec", "show", preset], capture_output=True, text=True, check=True).stdout
    import tomllib

    doc = tomllib.loads(text)
    if "tables" in doc:
        return {t["name"]: len(t.get("fields", [])) for t in doc["tables"]}
    return {doc["name"]: len(doc["fields"])}


@pytest.mark.parametrize(
    "preset,args,references",
    [
        ("orders", ["--scale", "0.002"], 2),
        ("star", ["--scale", "0.002"], 4),
        ("events", ["--target-records", "20000"], 0),
    ],
)
def test_preset_reports_show_every_section(strata_bin, tmp_path, preset, args, references):
    page = tmp_path / f"{preset}.html"
    out = tmp_path / "out"
    subprocess.run(
        [strata_bin, "generate", "-q", "--preset", preset, *args, "--output-dir", str(out), "--report", str(page)],
        check=True,
    )
    check_self_contained(page)
    root = dom(page, tmp_path)
    tables = spec_tables(strata_bin, preset)
    check_dataset_page(root, tables, references)
    # Generated by the spec it is checked against: nothing is flagged.
    flagged = root.find("tr", "flagged")
    assert not flagged, [f.all_text() for f in flagged]
    check_not_blank(page, tmp_path)

    # `strata report` over the same files, with the same spec, shows the
    # same page (the report is a function of the files and the spec).
    again = tmp_path / f"{preset}-again.html"
    subprocess.run([strata_bin, "report", str(out), "--spec", preset, "-o", str(again)], check=True, capture_output=True)
    assert again.read_bytes() == page.read_bytes()


def test_report_flags_a_wrong_zipf_exponent(strata_bin, tmp_path):
    """Data generated with Zipf s = 1.1 (the events preset's users),
    reported against a spec that says s = 1.6: the summary flags the
    user_id checks, and the expected overlay of the rank-frequency chart
    differs from the one the right spec draws."""
    right = subprocess.run([strata_bin, "spec", "show", "events"], capture_output=True, text=True, check=True).stdout
    assert "zipf = { s = 1.1, n = 1_000_000 }" in right
    wrong = right.replace("zipf = { s = 1.1, n = 1_000_000 }", "zipf = { s = 1.6, n = 1_000_000 }")
    (tmp_path / "right.toml").write_text(right)
    (tmp_path / "wrong.toml").write_text(wrong)
    out = tmp_path / "out"
    subprocess.run(
        [strata_bin, "generate", "-q", "--spec", str(tmp_path / "right.toml"), "--target-records", "50000", "--output-dir", str(out)],
        check=True,
    )
    pages = {}
    for name in ("right", "wrong"):
        page = tmp_path / f"{name}.html"
        r = subprocess.run(
            [strata_bin, "report", str(out), "--spec", str(tmp_path / f"{name}.toml"), "-o", str(page), "--json", str(tmp_path / f"{name}.json")],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr
        pages[name] = (dom(page, tmp_path), json.loads((tmp_path / f"{name}.json").read_text()))

    def flagged_columns(root):
        return {row.find("td")[1].all_text().strip() for row in root.find("tr", "flagged") if len(row.find("td")) > 1}

    assert "user_id" not in flagged_columns(pages["right"][0])
    assert "user_id" in flagged_columns(pages["wrong"][0]), flagged_columns(pages["wrong"][0])

    def user_id_column(data):
        (table,) = data["tables"]
        (col,) = [c for c in table["columns"] if c["name"] == "user_id"]
        return col

    right_rf = user_id_column(pages["right"][1])["rank_frequency"]
    wrong_rf = user_id_column(pages["wrong"][1])["rank_frequency"]
    assert right_rf["expected"][0] == pytest.approx(1.1)
    assert wrong_rf["expected"][0] == pytest.approx(1.6)
    # The fit sees the data's exponent, whatever the spec says.
    assert right_rf["fitted_s"] == wrong_rf["fitted_s"]
    assert abs(right_rf["fitted_s"] - 1.1) < abs(right_rf["fitted_s"] - 1.6)

    def overlay(root):
        (col,) = [c for c in root.find("section", "column") if c.attrs.get("id", "").endswith("user_id")]
        (chart,) = charts(col, "rank-frequency")
        drawn = chart.find(cls="expected")
        assert drawn, "no expected Zipf line"
        return [n.markup() for n in drawn]

    assert overlay(pages["right"][0]) != overlay(pages["wrong"][0])


def test_compact_plan_report_draws_key_ranges_before_and_after(strata_bin, tmp_path):
    """Four overlapping sorted files: the plan page draws them before
    (picked ones marked) and after (the merged output)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = tmp_path / "data"
    data.mkdir()
    for i in range(4):
        ids = list(range(i * 500, i * 500 + 2000, 2))
        pq.write_table(pa.table({"id": pa.array(ids, pa.int64())}), data / f"part_{i}.parquet")
    subprocess.run([strata_bin, "compact", "init", str(data), "--key", "id"], check=True, capture_output=True)
    page = tmp_path / "plan.html"
    subprocess.run(
        [strata_bin, "compact", "plan", str(data), "--budget-mb", "64", "--report", str(page)],
        check=True,
        capture_output=True,
    )
    check_self_contained(page)
    root = dom(page, tmp_path)
    (plan,) = root.find("section", "plans")
    before = plan.find("svg", ("chart", "key-ranges", "before"))
    after = plan.find("svg", ("chart", "key-ranges", "after"))
    assert before and after
    assert "part_0.parquet" in before[0].all_text()
    # Keys are shown as values (decoded from the manifest's row-encoded
    # bounds), not as bytes: part_0 holds ids 0 to 1998.
    assert "1998" in before[0].all_text() and "\\x" not in before[0].all_text()
    assert "merged 1 (4 files)" in after[0].all_text()
    check_not_blank(page, tmp_path)
    # An existing page is kept without --overwrite.
    r = subprocess.run(
        [strata_bin, "compact", "plan", str(data), "--budget-mb", "64", "--report", str(page)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "exists" in r.stderr


def test_infer_compare_html_shows_columns_side_by_side(strata_bin, tmp_path):
    out_a, out_b = tmp_path / "a", tmp_path / "b"
    for out, seed in ((out_a, "1"), (out_b, "2")):
        subprocess.run(
            [strata_bin, "generate", "-q", "--preset", "events", "--target-records", "20000", "--seed", seed, "--output-dir", str(out)],
            check=True,
        )
    page = tmp_path / "compare.html"
    r = subprocess.run(
        [strata_bin, "infer", "--compare", str(out_a), str(out_b), "--html", str(page)],
        capture_output=True,
        text=True,
    )
    assert r.returncode in (0, 1), r.stderr
    check_self_contained(page)
    root = dom(page, tmp_path)
    (section,) = root.find("section", "comparisons")
    pairs = section.find("div", "comparison")
    assert len(pairs) >= 5, len(pairs)
    for p in pairs:
        assert len(p.find("svg", "chart")) >= 2, "a comparison without both charts"
    assert root.find("table", "summary")


def test_report_of_ten_tables_is_lean(strata_bin, tmp_path):
    """A dataset of ten tables gives one page Chromium renders; its size
    stays small enough to open at once (the time it takes to open is
    measured in benches/results/report.md, not asserted here)."""
    tables = []
    for i in range(10):
        tables.append(
            f"""
[[tables]]
name = "t{i}"
rows = 2000

[[tables.fields]]
name = "id"
type = "int64"
sequence = {{ start = 1 }}

[[tables.fields]]
name = "kind"
type = "string"
weighted = {{ values = ["a", "b", "c"], weights = [5, 3, 2] }}

[[tables.fields]]
name = "amount"
type = "float64"
normal = {{ mean = 100.0, std = 15.0 }}
null_rate = 0.1
"""
        )
    spec = tmp_path / "ten.toml"
    spec.write_text('name = "ten"\n' + "".join(tables))
    subprocess.run([strata_bin, "spec", "check", str(spec)], check=True, capture_output=True)
    out = tmp_path / "out"
    page = tmp_path / "ten.html"
    subprocess.run(
        [strata_bin, "generate", "-q", "--spec", str(spec), "--output-dir", str(out), "--report", str(page)],
        check=True,
    )
    check_self_contained(page)
    root = dom(page, tmp_path)
    assert len(sections(root, "table")) == 10
    assert len(page.read_bytes()) < 2_000_000, len(page.read_bytes())
    check_not_blank(page, tmp_path)


def test_report_refuses_bad_input_and_keeps_existing_pages(strata_bin, tmp_path):
    page = tmp_path / "r.html"
    page.write_text("keep me")
    out = tmp_path / "out"
    subprocess.run(
        [strata_bin, "generate", "-q", "--preset", "events", "--target-records", "1000", "--output-dir", str(out)],
        check=True,
    )
    r = subprocess.run([strata_bin, "report", str(out), "-o", str(page)], capture_output=True, text=True)
    assert r.returncode == 2 and "exists" in r.stderr
    assert page.read_text() == "keep me"
    r = subprocess.run([strata_bin, "report", str(tmp_path / "missing"), "-o", str(tmp_path / "m.html")], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith("strata: error"), r.stderr
    assert not (tmp_path / "m.html").exists()
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "x.parquet").write_bytes(b"PAR1 this is not parquet PAR1")
    r = subprocess.run([strata_bin, "report", str(bad), "-o", str(tmp_path / "b.html")], capture_output=True, text=True)
    assert r.returncode == 2 and "x.parquet" in r.stderr, r.stderr
    assert not (tmp_path / "b.html").exists()
    r = subprocess.run(
        [strata_bin, "generate", "-q", "--preset", "events", "--target-records", "1000", "--output-dir", str(tmp_path / "o2"), "--report", str(page)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "exists" in r.stderr
    assert not (tmp_path / "o2").exists(), "generate wrote files though its --report could not be written"


def test_spec_preset_is_found_beside_a_directory_of_its_name(strata_bin, tmp_path):
    """`strata report events --spec events` right after `generate
    --output-dir events`: the directory does not hide the preset."""
    subprocess.run(
        [strata_bin, "generate", "-q", "--preset", "events", "--target-records", "2000", "--output-dir", "events"],
        cwd=tmp_path,
        check=True,
    )
    r = subprocess.run(
        [strata_bin, "report", "events", "--spec", "events", "-o", "events.html"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert "0 of" in r.stdout and "checks against the spec flagged" in r.stdout, r.stdout
