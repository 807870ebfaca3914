"""The report. In: the analysis (every stage's output). Out: the Report of contract.py, the lines around its
cited lines, and its renderings (markdown, JSON, HTML, the timeline SVG), events exported as tables."""
