"""The pages of the HTML report (`snakemake --report`) that the tables need to be read there: every published table
as an HTML table (Snakemake's report shows an HTML file on the page and offers a CSV only as a download), and the
results at a glance (README's lines, with the figure embedded)."""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from analysis.errors import InputError
from analysis.io import write_text
from analysis.tables.readme.data import Tables
from analysis.tables.readme.glance import GLANCE_ALT, GLANCE_LEGEND, glance_findings

STYLE = """<style>
body { font-family: system-ui, sans-serif; font-size: 13px; margin: 8px; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; white-space: nowrap; }
th { background: #f2f2f2; position: sticky; top: 0; }
td.text { text-align: left; white-space: normal; max-width: 40em; }
img { max-width: 100%; }
</style>"""


def cell(value: object) -> str:
    """A table cell: numbers to 4 significant digits, a missing value as an en dash."""
    if isinstance(value, float):
        return "–" if pd.isna(value) else f"{value:.4g}"
    return html.escape(str(value))


def table_page(csv: str | Path) -> str:
    """One published table as a page: its name, size and every row."""
    try:
        df = pd.read_csv(csv)
    except (OSError, ValueError) as exc:
        raise InputError(csv, f"cannot be read as a table: {exc}") from exc
    text = [c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c])]
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    rows = "\n".join("<tr>" + "".join(f'<td{" class=text" if c in text else ""}>{cell(v)}</td>'
                                      for c, v in zip(df.columns, row, strict=True)) + "</tr>"
                     for row in df.itertuples(index=False))
    name = html.escape(Path(csv).name)
    return (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{name}</title>{STYLE}</head><body>\n"
            f"<p><b>{name}</b>: {len(df):,} rows, {len(df.columns)} columns (numbers to 4 significant digits; the "
            f"CSV has them all)</p>\n<table>\n<tr>{head}</tr>\n{rows}\n</table>\n</body></html>\n")


def glance_page(tables: str | Path, config: Mapping, figure: str | Path | None) -> str:
    """README's results at a glance as a page: the figure (embedded, when it exists) and one line per finding."""
    t = Tables(tables, config)
    image = ""
    if figure is not None and Path(figure).is_file():
        data = base64.b64encode(Path(figure).read_bytes()).decode()
        image = f"<img alt='{html.escape(GLANCE_ALT)}' src='data:image/png;base64,{data}'>\n"
    items = "\n".join(f"<li>{html.escape(line)}</li>" for line in glance_findings(t))
    return (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>Results at a glance</title>{STYLE}</head>"
            f"<body>\n{image}<p>{html.escape(GLANCE_LEGEND)}</p>\n<ul>\n{items}\n</ul>\n</body></html>\n")


def write_pages(tables: Sequence[str | Path], pages: Sequence[str | Path], glance: str | Path, tables_dir: str | Path,
                config: Mapping, figure: str | Path | None) -> None:
    """Every table's page (`tables[i]` to `pages[i]`) and the glance page; each file written whole or not at all."""
    if len(tables) != len(pages):
        raise InputError(None, f"{len(tables)} tables but {len(pages)} pages to write", field="pages")
    rendered = [table_page(csv) for csv in tables]  # every table read before anything is written
    for text, page in zip(rendered, pages, strict=True):
        write_text(text, page)
    write_text(glance_page(tables_dir, config, figure), glance)
