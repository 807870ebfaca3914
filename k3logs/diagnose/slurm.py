"""Slurm `srun -l` task labels -> nodes and ranks (attribution's witness 4: docs/how-it-decides.md)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from k3logs.catalogue.witnesses import expand_nodelist, expand_tasks

from .attribution import RX, Attribution, DumpHints, Read, line_rx, nth, step_of

if TYPE_CHECKING:
    from .attribute import Names


def learn_tasks(ev: pl.DataFrame, reads: dict[str, list[Read]], a: Attribution, names: Names,
                hints: DumpHints) -> None:
    """Slurm `srun -l` task labels -> nodes (and ranks when the task is the rank), per file and job step: the
    tasks srun's own errors place on a host, the host a task prints, else the step's tasks per node over the job's
    node list (block distribution, Slurm's default): the file's own, else the one node list the bundle's dumps
    give (an `env` printed by the batch step), else the list a job table gives the job the file's name numbers."""
    dumped = hints.nodelists
    labelled = ev.filter(pl.col("w_task").is_not_null())
    if not labelled.height:
        return
    for f in sorted(labelled["file"].unique().to_list()):
        steps = sorted(r.line for r in reads["step"] if r.file == f and r.task is None)
        a.steps[f] = steps
        lists = sorted((r.line, expand_nodelist(r.g["nodelist"])) for r in reads["nodelist"] if r.file == f)
        nodelist = next((nl for _, nl in lists if nl), [])
        nl_at = next((f"line {ln}" for ln, nl in lists if nl), None)
        if not nodelist and len(dumped) == 1:
            (text, nl_at), = dumped.items()
            nodelist = expand_nodelist(text)
        if not nodelist and (job := RX["job_output_id"].search(f)) and job.group("job") in hints.job_nodelists:
            text, at = hints.job_nodelists[job.group("job")]
            nodelist, nl_at = expand_nodelist(text), f"job {job.group('job')}'s row, {at}"
        env = " ".join(t for t in ev.filter((pl.col("file") == f) & pl.col("text").str.contains("SLURM_N"))["text"])
        tasks_here = labelled.filter(pl.col("file") == f)
        here_steps = np.searchsorted(np.array(steps, dtype=np.int64), tasks_here["line"].to_numpy(), side="right")
        for step in range(len(steps) + 1):
            args = next((r.g["args"] for r in reads["step"] if r.file == f and r.task is None and step
                         and r.line == steps[step - 1]), "")
            in_step = tasks_here.filter(pl.Series(here_steps == step))
            ids = sorted(set(in_step["w_task"].to_list()))
            # a step given its own nodes (srun -w) lays its tasks over those, not over the job's
            own = RX["step_nodelist"].search(args)
            nodes, at, whose = ((expand_nodelist(own.group("nodelist")), f"-w on line {steps[step - 1]}", "step's")
                                if own and expand_nodelist(own.group("nodelist")) else (nodelist, nl_at, "job's"))
            per_node = _per_node(args, "" if own else env, len(nodes), max(ids) + 1 if ids else 0)
            # every task of the step, also those whose lines analyze did not keep
            n_tasks = max(ids) + 1 if ids else 0
            if m := RX["step_ntasks"].search(args):
                n_tasks = max(n_tasks, int(m.group(1)))
            elif nodes and per_node:
                n_tasks = max(n_tasks, per_node * len(nodes))
            ids = list(range(min(n_tasks, 1 << 16)))
            if not ids:
                continue
            header = f"the step on line {steps[step - 1]}" if step else "the job's first step"
            for r in [*reads["task_hosts"], *reads["task_host"]]:
                if r.file != f or step_of(a, f, r.line) != step:
                    continue
                node = names.host(r.g["host"])
                if not node or not names.w.is_host(node):
                    continue
                for t in (expand_tasks(r.g["tasks"]) if r.kind == "task_hosts" else [r.task]):
                    if t is not None and a.task_node.setdefault((f, step, t), node) == node:
                        a.said("task", (f, step, t), f"srun -l task {t}: " + (
                            f"srun's own line {r.line} places it on {r.g['host']}" if r.kind == "task_hosts"
                            else f"it prints its host {r.g['host']} on line {r.line}"))
            # (one task's output in a file of a node the bundle names, `srun -o out-%t-%N`: that node's, not the job's
            # first one, where the step names no nodes of its own)
            if not own and len(labels := set(in_step["w_task"].to_list())) == 1 and (node := a.file_node.get(f)):
                t = labels.pop()
                if a.task_node.setdefault((f, step, t), node) == node:
                    a.said("task", (f, step, t), f"srun -l task {t}, the one task in {f}, a file of {node} "
                                                 f"({a.why.get(('file', f), 'its name')})")
            if nodes and per_node:
                for t in ids:
                    if (f, step, t) not in a.task_node and t // per_node < len(nodes):
                        node = names.host(nodes[t // per_node])
                        a.task_node[(f, step, t)] = node
                        a.said("task", (f, step, t), f"srun -l task {t} of {header}: {per_node} task(s) per node "
                                                     f"over the {whose} nodes ({at}), the "
                                                     f"{nth(t // per_node + 1)} is {nodes[t // per_node]}")
            if args and RX["task_is_rank"].search(args):
                for t in ids:
                    a.task_rank[(f, step, t)] = t
                    a.said("task_rank", (f, step, t), f"srun -l task {t}: {header} gives each task its id as RANK "
                                                      f"(SLURM_PROCID)")
    _stated_ranks(labelled, a)
    _job_siblings(sorted(labelled["file"].unique().to_list()), a)


def _stated_ranks(labelled: pl.DataFrame, a: Attribution) -> None:
    """A task that states one rank ('rank 12 in world size 16 is assigned as ...', behind its label) is that rank
    (a task that states several runs several workers: a node's launcher)."""
    said = labelled.select("file", "line", "w_task", pl.col("text").str.extract(line_rx("assigned"), 1).alias("r"))
    stated: dict[tuple, dict[int, int]] = {}
    for f, ln, t, r in said.drop_nulls("r").iter_rows():
        if int(r) < 1 << 31:   # (a rank no int32 holds is no rank)
            stated.setdefault((f, step_of(a, f, ln), t), {}).setdefault(int(r), ln)
    for key, ranks in stated.items():
        if len(ranks) != 1:
            continue
        (rank, ln), = ranks.items()
        if a.task_rank.setdefault(key, rank) == rank:
            a.said("task_rank", key, f"srun -l task {key[2]} states its rank on {key[0]}:{ln}")


def _job_siblings(files: list[str], a: Attribution) -> None:
    """The outputs of one job's tasks (its stdout and stderr: 'NAME-JOBID.out' and '.err', with as many steps) are
    written by the same tasks: what one says of a task's node and rank holds in the other."""
    stem = {f: RX["job_output_suffix"].sub("", f) for f in files}
    for f in files:
        for g in (g for g in files if g != f and stem[g] == stem[f] and len(a.steps.get(g, [])) ==
                  len(a.steps.get(f, []))):
            for table, kind in ((a.task_node, "task"), (a.task_rank, "task_rank")):
                for (h, step, t), v in list(table.items()):
                    if h == g and table.setdefault((f, step, t), v) == v:
                        a.said(kind, (f, step, t), f"the same job's {g.rsplit('/', 1)[-1]}: "
                                                   f"{a.why.get((kind, (g, step, t)), '')}")


def _per_node(args: str, env: str, nnodes_listed: int, ntasks_seen: int) -> int | None:
    """Tasks per node of a step: --ntasks-per-node, else its tasks over its nodes (or the job's)."""
    if m := RX["step_per_node"].search(args):
        return int(m.group(1)) or None
    ntasks = RX["step_ntasks"].search(args) or RX["job_ntasks"].search(env)
    nnodes = RX["step_nnodes"].search(args) or RX["job_nnodes"].search(env)
    n_t = int(ntasks.group(1)) if ntasks else ntasks_seen
    n_n = int(nnodes.group(1)) if nnodes else nnodes_listed
    return -(-n_t // n_n) if n_t and n_n else None


STEPD_RUN = 8   # slurmstepd lines that lead up to srun's report of the task they were about, at most


def learn_stepd_errors(ev: pl.DataFrame, reads: dict[str, list[Read]], a: Attribution, names: Names) -> None:
    """The unlabelled `slurmstepd: error:` lines right before srun's 'error: HOST: task N: Exited' are that
    host's step daemon reporting why the task could not run (a container that would not start, a plugin that
    failed, an OOM kill in the step): they are about HOST, and, with srun's report, about the rank of the one task
    it names where that task is a rank."""
    reports = [(r, node) for r in reads["task_hosts"]
               if (node := names.host(r.g["host"])) and names.w.is_host(node)]
    if not reports:
        return
    # (the step daemon's unlabelled error lines of the files with such reports, found once)
    rows = ev.filter(pl.col("file").is_in(list({r.file for r, _ in reports})) & pl.col("w_task").is_null()
                     & pl.col("text").str.starts_with("slurmstepd"))
    errors = {(f, n) for f, n, t in rows.select("file", "line", "text").iter_rows() if RX["stepd_error"].match(t)}
    for r, node in reports:
        tasks = expand_tasks(r.g["tasks"])
        task = (r.file, step_of(a, r.file, r.line), tasks[0])
        rank = a.task_rank.get(task) if len(tasks) == 1 else None
        line = r.line
        while line == r.line or ((r.file, line) in errors and line >= r.line - STEPD_RUN):
            if line < r.line:
                a.subject_node.setdefault((r.file, line), node)
                a.said("subject", (r.file, line), f"slurmstepd's error before srun's report of the task on "
                                                  f"{r.g['host']} (line {r.line})")
            if rank is not None and a.subject_rank.setdefault((r.file, line), rank) == rank:
                a.said("subject_rank", (r.file, line), f"srun's report of task {tasks[0]} (line {r.line}), rank {rank} "
                                                       f"({a.why.get(('task_rank', task), '')})")
            line -= 1


def one_node_job_files(files: list[str], hints: DumpHints) -> dict[str, tuple[str, str]]:
    """A batch job's output whose name numbers a job that a job table shows ran on one node ('k2-serve-884213.out',
    `scontrol show job 884213`: NodeList=b200-r2-n14): every line of it was written on that node."""
    out = {}
    for f in files:
        if (job := RX["job_output_id"].search(f)) and (row := hints.job_nodelists.get(job.group("job"))):
            text, at = row
            if len(nodes := expand_nodelist(text)) == 1:
                out[f] = (nodes[0], f"job {job.group('job')}, which its name numbers, ran on {nodes[0]} alone ({at})")
    return out
