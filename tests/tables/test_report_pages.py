"""The HTML report's pages (analysis.tables.report_pages, rule report_pages) and its captions."""

from __future__ import annotations

import base64
import re

import pandas as pd
import pytest
import yaml

from analysis.errors import InputError
from analysis.objectives import headline_set
from analysis.tables import readme
from analysis.tables import report_pages as pages
from helpers import REPO

CAPTIONS = sorted((REPO / "workflow/report").rglob("*.rst"))
# the end of a sentence: a full stop, question or exclamation mark before a space or the end
SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def test_a_table_page_holds_every_row_with_numbers_to_four_significant_digits(tmp_path):
    csv = tmp_path / "t.csv"
    pd.DataFrame({"space": ["A100/x", "W6600/<y>"], "score": [0.123456, float("nan")], "n": [3, 30]}).to_csv(
        csv, index=False)
    page = pages.table_page(csv)
    assert page.count("<tr>") == 3 and "2 rows, 3 columns" in page
    assert "<td>0.1235</td>" in page and "<td>–</td>" in page
    assert "W6600/&lt;y&gt;" in page and "<td class=text>A100/x</td>" in page  # text escaped and left-aligned


def test_a_table_that_cannot_be_read_is_named_and_nothing_is_written(tmp_path):
    good, bad = tmp_path / "good.csv", tmp_path / "bad.csv"
    pd.DataFrame({"a": [1]}).to_csv(good, index=False)
    bad.write_bytes(b"\x00\x01 not a csv \xff")
    out = tmp_path / "out"
    with pytest.raises(InputError, match="bad.csv"):
        pages.write_pages([good, bad], [out / "good.html", out / "bad.html"], out / "glance.html", REPO / "tables",
                          {"objective_sets": {"time": ["time"]}}, None)
    assert not out.exists()
    with pytest.raises(InputError, match="1 tables but 2 pages"):
        pages.write_pages([good], [out / "a.html", out / "b.html"], out / "glance.html", REPO / "tables", {}, None)


def test_the_glance_page_is_the_readme_s_findings_with_the_figure_embedded(tmp_path):
    cfg = yaml.safe_load((REPO / "config/config.yaml").read_text())
    t = readme.Tables(REPO / "tables", cfg)
    figure = REPO / readme.glance_figure(t)
    page = pages.glance_page(REPO / "tables", cfg, figure)
    for line in readme.glance_findings(t):
        assert f"<li>{line.replace(chr(39), '&#x27;')}</li>" in page, line
    assert base64.b64encode(figure.read_bytes()).decode()[:200] in page
    assert "<img" not in pages.glance_page(REPO / "tables", cfg, tmp_path / "absent.png")


@pytest.mark.parametrize("caption", CAPTIONS, ids=lambda p: str(p.relative_to(REPO / "workflow/report")))
def test_every_caption_is_at_most_three_sentences(caption):
    text = caption.read_text().strip()
    assert text and len(SENTENCE_END.findall(text)) <= 3, text


def test_the_headline_set_is_the_first_multi_objective_set_studied_else_the_first_studied():
    """README's glance figure and the report's (rule report_pages) are chosen by one rule."""
    sets = {"O3": ["time", "memory", "mre"], "O5": ["time", "memory", "mre", "nrmse", "nmae"], "time": ["time"]}
    assert headline_set(sets, ["time", "O5", "O3"]) == "O3"  # the config's order, not the studied order
    assert headline_set(sets, ["time", "O5"]) == "O5"
    assert headline_set(sets, ["time"]) == "time" and headline_set(sets, []) is None
    assert readme.glance_figure(readme.Tables(REPO / "tables", REPO / "config/config.yaml")) == \
        "figures/anytime/all_O3.png"
