"""Facts from Slurm's job dumps: `scontrol show job` and `sacct -j` (the nodes a job ran on)."""
from __future__ import annotations

import re

from .util import FACTS, Sink


def job_nodelists(lines: list[str]) -> list[tuple[int, str]]:
    """The node list cells (line index, cell) of a scheduler's job table of one job (`sacct -j`: the job and
    its steps), read in the column the dashes under the header give; [] for a table of several jobs (a queue
    names other users' nodes) or one without its dashes."""
    rows = job_rows(lines)
    if len({job for _, job, _ in rows}) != 1:
        return []
    return [(i, cell) for i, _, cell in rows]


def job_rows(lines: list[str]) -> list[tuple[int, str, str]]:
    """(line index, job id, node list cell) of each row of a scheduler's job table with its dashes (a step's row,
    '88214.0', is its job's)."""
    head = next((i for i, ln in enumerate(lines) if FACTS["job_table_header"].search(ln)), None)
    if head is None or head + 1 >= len(lines) or not re.fullmatch(r"[\s-]+", lines[head + 1]):
        return []
    col = lines[head].lower().find("nodelist")
    span = next(((m.start(), m.end()) for m in re.finditer(r"-+", lines[head + 1]) if m.start() <= col < m.end()), None)
    rows = []
    for i in range(head + 2, len(lines)):
        if not lines[i].strip():
            break
        rows.append(i)
    if span is None:
        return []
    return [(i, lines[i].split()[0].split(".")[0].split("_")[0], cell) for i in rows if (cell := _cell(lines[i], span))]


def _cell(line: str, span: tuple[int, int]) -> str:
    """The word of `line` that overlaps the column `span` most (a hand-aligned table may be off by a character or
    two: a cut at the dashes would halve its words)."""
    words = [(min(m.end(), span[1]) - max(m.start(), span[0]), m.group()) for m in re.finditer(r"\S+", line)]
    best = max(words, default=(0, ""))
    return best[1] if best[0] > 0 else ""


def parse_launchers(sink: Sink, lines: list[str], base: int) -> None:
    """How a text launches its command: in a container (a batch script's `srun --container-image`, a `docker run`:
    the `container_launch` fact, where the deployment's processes keep the container's clock zone) or as a Slurm
    job's steps (`#SBATCH`, `srun`: `slurm_launch`, on the hosts unless in a container)."""
    for fact, rx, comments in (("container_launch", FACTS["container_launch"], False),
                               ("slurm_launch", FACTS["slurm_launch"], True)):
        hit = next((i for i, ln in enumerate(lines) if (comments or not ln.lstrip().startswith("#"))
                    and rx.search(ln)), None)
        if hit is not None:
            sink.add(fact, lines[hit].strip()[:120], base + hit + 1)


def parse_slurm_job(sink: Sink, lines: list[str], base: int) -> None:
    """`scontrol show job` of a job of one node: its NodeList is the node its batch step ran on; so is the one
    host every row of `sacct -j` gives (the job and its steps). Each row's node list is a `job_nodes` fact (the
    nodes that took part: missing.py). The job's own list (scontrol's one NodeList, sacct's job row) is its
    `slurm_nodelist`, as the job's environment gives it (srun -l tasks over its nodes: slurm.learn_tasks)."""
    lists = [(i, m.group("nodes")) for i, ln in enumerate(lines) if (m := FACTS["slurm_job_nodes"].match(ln))]
    if len(lists) == 1:
        sink.add("slurm_nodelist", lists[0][1], base + lists[0][0] + 1)
    if any(FACTS["slurm_job_one_node"].search(ln) for ln in lines):
        hit = next(((i, m) for i, ln in enumerate(lines) if (m := FACTS["slurm_job_nodelist"].match(ln))), None)
        if hit:
            sink.add("node_name", hit[1].group("host"), base + hit[0] + 1)
        return
    # (a table of several jobs names each job's nodes on its own row: the list of that job only, by its id)
    for i, job, cell in job_rows(lines):
        if job.isdigit() and lines[i].split()[0] == job:
            sink.add("job_nodelist", f"{job} {cell}", base + i + 1)
    cells = job_nodelists(lines)
    for i, cell in cells:
        sink.add("job_nodes", cell, base + i + 1)
    if cells and not lists:
        sink.add("slurm_nodelist", cells[0][1], base + cells[0][0] + 1)
    if len({c for _, c in cells}) == 1 and FACTS["host_token"].fullmatch(cells[0][1]):
        sink.add("node_name", cells[0][1], base + cells[0][0] + 1)
