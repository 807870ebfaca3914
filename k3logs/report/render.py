"""Report -> markdown, JSON, the timeline SVG or the self-contained HTML report (jinja2 templates in
report_templates/). No analysis happens here: the SVG's geometry comes from timeline.layout(report)."""
from __future__ import annotations

import re
from functools import lru_cache

import jinja2
from markupsafe import Markup

from k3logs.catalogue.cache import private_cache
from k3logs.contract import Report
from k3logs.gate import visible
from k3logs.resources import data_dir

from .timeline import layout

# characters XML 1.0 forbids even escaped (C0 controls but tab and newlines, lone surrogates, U+FFFE/F):
# a bundle may hold them, and one of them would make the SVG or the HTML unparseable
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


# markdown a bundle's text must not turn into: raw HTML (and so scripts), links (javascript:), code spans
# that swallow what follows, table cells that end early
# (a backslash makes any of them a plain character: `\<script>` is text, not a tag)
_MD_ESCAPES = str.maketrans({"<": "\\<", "`": "\\`", "|": "\\|", "[": "\\["})


def md_text(value) -> Markup:
    """Any value printed into markdown as text, on one line: shown as it is, never as markdown or HTML."""
    if isinstance(value, Markup):
        return value
    return Markup(visible(str(value).replace("\n", " ")).translate(_MD_ESCAPES))


def prose(value) -> Markup:
    """Our own sentences (explanations, remediation: they may quote a flag in backticks, and a bundle value):
    no raw HTML and no links; backticks kept."""
    return Markup(visible(str(value)).replace("<", "\\<").replace("[", "\\["))


def code(value, in_table: bool = False) -> Markup:
    """An inline code span holding `value` whatever it holds (a fence longer than its longest run of
    backticks), on one line; `in_table`: its pipes escaped too (GitHub ends a cell at one even there)."""
    text = " ".join(visible(str(value)).split())
    ticks = "`" * (max((len(r) for r in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    span = f"{ticks}{pad}{text}{pad}{ticks}"
    return Markup(span.replace("|", "\\|") if in_table else span)


def cell_code(value) -> Markup:
    """A code span inside a table cell."""
    return code(value, in_table=True)


def fenced(value) -> Markup:
    """A fenced code block holding `value` (the fence longer than any run of backticks in it)."""
    text = visible(str(value))
    fence = "`" * max(3, max((len(r) for r in re.findall("`+", text)), default=0) + 1)
    return Markup(f"{fence}\n{text}\n{fence}")


def cell(value) -> Markup:
    """Safe inside a markdown table cell: one line, bounded, shown as text."""
    text = " ".join(str(value).split())
    return md_text(text if len(text) <= 200 else text[:197] + "...")


def _xml_safe(value):
    """Every value a markup template prints: characters XML cannot hold become U+FFFD (then autoescape
    escapes &, <, >, quotes). Markup already rendered by us (the inline SVG) passes through."""
    if isinstance(value, Markup) or value is None:
        return value
    return NOT_XML.sub("\ufffd", str(value))


def by_category(symptoms) -> list[tuple[str, int, list[str]]]:
    """The symptoms summed up, the largest first: (category, lines, nodes in name order)."""
    count: dict[str, int] = {}
    nodes: dict[str, set[str]] = {}
    for s in symptoms:
        count[s.category] = count.get(s.category, 0) + s.count
        nodes.setdefault(s.category, set()).update([s.node] if s.node else [])
    return [(c, n, sorted(nodes[c])) for c, n in sorted(count.items(), key=lambda x: (-x[1], x[0]))]


def gpu_identity(gpu: dict) -> str:
    """'index 4, bus 0000:9a:00, UUID GPU-4e1f..., serial 1653623018817'."""
    names = (("index", "index"), ("bus_id", "bus"), ("uuid", "UUID"), ("serial", "serial"))
    return ", ".join(f"{label} {gpu[k]}" for k, label in names if gpu.get(k) is not None)


@lru_cache(maxsize=4)
def _env(folder: str, markup: bool) -> jinja2.Environment:
    # (templates compiled once and kept by their source's hash: compiling the report's took a tenth of a second
    # of every run)
    cached = private_cache("templates")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(folder), undefined=jinja2.StrictUndefined,
                             autoescape=markup, keep_trailing_newline=True, trim_blocks=False,
                             finalize=_xml_safe if markup else md_text,
                             bytecode_cache=jinja2.FileSystemBytecodeCache(str(cached)) if cached else None)
    env.filters.update(cell=cell, code=code, cell_code=cell_code, fenced=fenced, prose=prose,
                       by_category=by_category, gpu_identity=gpu_identity)
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
