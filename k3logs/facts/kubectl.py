"""Facts from kubectl's and docker's tables: which node each pod (or container) runs on, its IP, the image it runs
and its restarts."""
from __future__ import annotations

import re

from k3logs.ingest.dumps import prompt_of

from .util import FACTS, Sink

POD_NAME_COLS, NODE_COLS, IP_COLS = ("NAME", "POD", "POD_NAME", "POD-NAME"), ("NODE", "NODENAME", "NODE_NAME"), \
    ("IP", "POD-IP", "POD_IP", "PODIP")
FINISHED_POD = ("Completed", "Succeeded")   # a pod's STATUS once its containers all exited 0: its work is done


def parse_pod_tables(sink: Sink, lines: list[str], base: int) -> None:
    """`kubectl get pods -o wide` tables anywhere in a text (also as comments), in any column layout (with or
    without NAMESPACE, NOMINATED NODE, READINESS GATES; custom columns naming a pod and a NODE): each pod's node
    (`node_name`, `pod_node` 'POD NODE'), IP (`pod_ip` 'POD IP'), image (`image`, and a vLLM image's release as
    `vllm_version`, on the pod's node), RESTARTS of a pod not ready (`restart_count`);
    `kubectl get nodes -o wide`: each node's INTERNAL-IP (`node_ip` 'NODE IP'). Cells are read at their column's
    place (kubectl aligns them)."""
    i, ipv4, host_word = 0, FACTS["ipv4"], FACTS["host_name_word"]
    while i < len(lines):
        table = _table_header(lines[i])
        if table is None:
            i += 1
            continue
        lead, cols = table
        names = [c for c, _ in cols]
        pod_col = next((c for c in POD_NAME_COLS if c in names), None)
        node_col = next((c for c in NODE_COLS if c in names), None)
        ip_col = next((c for c in IP_COLS if c in names), None)
        node_ip_col = "INTERNAL-IP" if "INTERNAL-IP" in names else None
        image_col = next((c for c in ("IMAGE", "IMAGES") if c in names), None)
        i += 1
        while i < len(lines):
            row, no = lines[i], base + i + 1
            if lead and row.startswith(lead.rstrip()):
                row = row[len(lead):] if row.startswith(lead) else row.lstrip("#").lstrip()
            # (a table ends at a blank line, at the next table, or at the next command typed: its output is another's)
            if not row.strip() or _table_header(lines[i]) is not None or prompt_of(lines[i]):
                break
            cell = lambda c: _cell(row, cols, c)  # noqa: E731
            i += 1
            finished = cell("STATUS") in FINISHED_POD
            if node_col and pod_col:
                pod, node = cell(pod_col), cell(node_col)
                if node and node not in ("<none>",) and host_word.match(node):
                    # (a finished Job's pod names its node as the pod's, not as one of the deployment's)
                    if pod and finished:
                        sink.add("pod_finished", pod, no)
                    else:
                        sink.add("node_name", node, no)
                    if pod:
                        sink.add("pod_node", f"{pod} {node}", no)
                    if image_col and (image := cell(image_col)):   # the image each pod runs, on its node
                        sink.add("image", image, no, node=node, source="pod_table")
                        if (release := FACTS["vllm_image_release"].search(image)):
                            sink.add("vllm_version", release.group("version"), no, node=node, source="pod_table")
                ip = cell(ip_col) if ip_col else None
                if pod and ip and ipv4.fullmatch(ip) and not finished:   # (a finished pod's address is free again)
                    sink.add("pod_ip", f"{pod} {ip}", no)
            # a pod not ready is the incident's (a ready one beside it, a monitoring agent, restarted days ago)
            ready = (cell("READY") or "0/1").lower().split("/")  # (custom columns: true / false)
            if pod_col and "RESTARTS" in names and (n := (cell("RESTARTS") or "").split(" ")[0]).isdigit() \
                    and (ready[0] != ready[-1] or ready == ["false"]):
                sink.add("restart_count", n, no)  # ('3 (2m ago)')
            elif node_ip_col and pod_col == "NAME":
                node, ip = cell("NAME"), cell(node_ip_col)
                if node and ip and ipv4.fullmatch(ip):
                    sink.add("node_ip", f"{node} {ip}", no)


def parse_container_hosts(sink: Sink, lines: list[str], base: int) -> None:
    """`docker ps` run on many hosts at once (ansible's 'HOST | CHANGED | rc=0 >>' before each host's output):
    each container's host (`pod_node` 'ID HOST', its id's first 12 digits: docker's own folder for its log is
    named by the id)."""
    host, table = None, False
    for i, line in enumerate(lines):
        if m := FACTS["host_section"].match(line):
            host, table = m.group("host"), False
        elif line.startswith("CONTAINER ID"):
            table = True
        elif table and host and (m := FACTS["container_row"].match(line)):
            sink.add("pod_node", f"{m.group('id')} {host}", base + i + 1)


def _table_header(line: str) -> tuple[str, list[tuple[str, int]]] | None:
    """(comment lead, [(column, start)]) of a kubectl table header that names pods and nodes, else None."""
    lead = re.match(r"^#\s*", line)  # the comment lead a table may sit behind
    lead = lead.group(0) if lead else ""
    cols = [(m.group(0), m.start()) for m in FACTS["table_column"].finditer(line[len(lead):])]
    names = [c for c, _ in cols]
    if len(cols) < 2 or not any(c in names for c in POD_NAME_COLS):
        return None
    if any(c in names for c in NODE_COLS) or ("INTERNAL-IP" in names and names[0] == "NAME"):
        return lead, cols
    return None


def _cell(row: str, cols: list[tuple[str, int]], name: str) -> str | None:
    """The value in column `name` of a table row: the first word that reaches into the column's place (a
    hand-made table may be off by a space or two)."""
    k = next((k for k, (c, _) in enumerate(cols) if c == name), None)
    if k is None:   # (custom columns: a table may have no READY)
        return None
    start = cols[k][1]
    end = cols[k + 1][1] if k + 1 < len(cols) else len(row) + 1
    for m in re.finditer(r"\S+", row):  # the row's words
        if m.end() > start and m.start() < end:
            return m.group(0)
    return None
