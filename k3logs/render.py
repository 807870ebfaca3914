"""Report -> markdown (jinja2 templates in report_templates/) or JSON. No analysis happens here."""
from __future__ import annotations

from functools import lru_cache

import jinja2

from .report import Report
from .resources import data_dir


def cell(value) -> str:
    """Safe inside a markdown table cell: one line, pipes escaped, bounded."""
    text = " ".join(str(value).split())
    text = text.replace("|", "\\|")
    return text if len(text) <= 200 else text[:197] + "..."


@lru_cache(maxsize=4)
def _env(folder: str) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(folder), undefined=jinja2.StrictUndefined,
                             autoescape=False, keep_trailing_newline=True, trim_blocks=False)
    env.filters["cell"] = cell
    return env


def render_markdown(report: Report, template: str = "report.md.j2") -> str:
    return _env(str(data_dir("report_templates"))).get_template(template).render(r=report)


def render_json(report: Report) -> str:
    return report.to_json()
