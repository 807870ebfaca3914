"""Report -> markdown, JSON, the timeline SVG or the self-contained HTML report (jinja2 templates in
report_templates/). No analysis happens here: the SVG's geometry comes from timeline.layout(report)."""
from __future__ import annotations

import re
from functools import lru_cache

import jinja2
from markupsafe import Markup

from .report import Report
from .resources import data_dir
from .timeline import layout

# characters XML 1.0 forbids even escaped (C0 controls but tab and newlines, lone surrogates, U+FFFE/F):
# a bundle may hold them, and one of them would make the SVG or the HTML unparseable
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


def cell(value) -> str:
    """Safe inside a markdown table cell: one line, pipes escaped, bounded."""
    text = " ".join(str(value).split())
    text = text.replace("|", "\\|")
    return text if len(text) <= 200 else text[:197] + "..."


def _xml_safe(value):
    """Every value a markup template prints: characters XML cannot hold become U+FFFD (then autoescape
    escapes &, <, >, quotes). Markup already rendered by us (the inline SVG) passes through."""
    if isinstance(value, Markup) or value is None:
        return value
    return NOT_XML.sub("\ufffd", str(value))


@lru_cache(maxsize=4)
def _env(folder: str, markup: bool) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(folder), undefined=jinja2.StrictUndefined,
                             autoescape=markup, keep_trailing_newline=True, trim_blocks=False,
                             finalize=_xml_safe if markup else None)
    env.filters["cell"] = cell
    return env


def _template(name: str, markup: bool = False) -> jinja2.Template:
    return _env(str(data_dir("report_templates")), markup).get_template(name)


def render_markdown(report: Report, template: str = "report.md.j2", picture: str | None = None) -> str:
    """The markdown report; `picture` is the relative path of the timeline SVG written beside it."""
    return _template(template).render(r=report, picture=picture)


def render_json(report: Report) -> str:
    return report.to_json()


def render_svg(report: Report, inline: bool = False) -> str:
    """The timeline picture as a standalone SVG file, or (`inline`) to embed in HTML."""
    return _template("timeline.svg.j2", markup=True).render(p=layout(report), inline=inline)


def render_html(report: Report) -> str:
    """One self-contained HTML file: inline CSS and SVG, no script, nothing fetched."""
    context = {f"{e.file}:{e.line}": e for e in report.evidence_context}
    return _template("report.html.j2", markup=True).render(
        r=report, svg=Markup(render_svg(report, inline=True)), context=context)
