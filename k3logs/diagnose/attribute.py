"""Attach a node, a global rank and a GPU to every event (log-formats.md 11), and say which witness named each.

Node, in this order of precedence (docs/how-it-decides.md; what each witness looks like is
patterns/attribution.toml):
  1. what the line is about: a Kubernetes event object's node (events JSON involvedObject / source.host), the node
     a Ray GCS or raylet line names (marked dead, health check, memory monitor), resolved to a host name;
  2. the host the line itself prints (NCCL host field, journald host / _HOSTNAME, torchelastic host, slurmstepd),
     unless it is a pod's or a container's hostname: then the node that pod or container runs on;
  3. Ray's `ip=` of a relayed line, resolved through any host <-> IP tie (NCCL bootstrap lines, /etc/hosts, notes,
     `hostname -I`, `ip addr`, pod and node IPs); the IP itself only as the name of last resort;
  4. the launcher's label: Slurm `srun -l` task -> its host (srun's own errors, the task printing its host, the
     job's node list and the step's tasks per node); `kubectl logs --prefix` pod -> its node;
  5. the file's node: its per-node folder (also the one top folder of a bundle of one node named like a host; a
     generic name such as `logs` or `incident-42` is not a node), else the host its own lines print, else the host
     it states (`uname -a`, a provenance note, the dump's hostname, docker inspect Config.Hostname under --network
     host, kubectl describe Node:), else the pod whose log it is (its path or name) -> that pod's node;
  6. a node of the bundle the line names (a Kubernetes event row 'assigned ... to NODE');
  7. the bundle's only node.
A pod name is never a node name: a pod maps to a node only where the bundle says so (pod listing NODE column, pod
JSON spec.nodeName, describe Node:, a Scheduled event; first the object of the pod uid its log folder names).

Rank: `[rankN]:` and the like on the line, then one (node, pid) -> rank map built from every file (vLLM 'rank R in
world size W is assigned as ...', 'world_size=W rank=R local_rank=L', NCCL 'rank R nranks W' lines of world-sized
communicators, torchelastic blocks, NCCL_DEBUG_FILE names), per process lifetime (a pid that comes back after the
server restarted with another rank is another process), then the Slurm task when the step says the task is the rank
(RANK=$SLURM_PROCID), the worker's name (patterns/attribution.toml [[worker]]) when the layout makes it unambiguous,
the local rank. Kernel lines about a task take the rank of that process (a host pid mapped to the container's pid
where the bundle shows both: NSpid); kernel lines about a GPU (Xid, 'fallen off the bus', AER, an HCA on the GPU's
rail) get the rank that owns that PCI address (NCCL busId, or nvidia-smi index + local rank), and the GPU's identity
(index, bus id, UUID, serial) from nvidia-smi -q / -L / the kernel's 'GPU at PCI:... GPU-<uuid>' lines.

Every map keeps its witness (file:line), so that `witness(a, row)` can say for any event, the report's root
first, how its node and its rank were named."""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from datetime import timezone

import polars as pl

from k3logs.catalogue.witnesses import Witnesses, builtin_witnesses

from .assign import apply_nodes, host_columns
from .attribution import (RX, Attribution, DumpHints, Read, elastic_entries, ensure, host_field, is_ip,
                          line_rx, line_witnesses, short_host, step_of)
from .clock import parse_iso
from .fleet import learn_sections
from .folders import folder_node_of, gpu_host_files, host_named_files, node_files, node_folders
from .raisers import learn_raisers
from .ranks import learn_gpus, learn_ranks
from .slurm import learn_stepd_errors, learn_tasks, one_node_job_files


def anchors() -> tuple[str, ...]:
    """Literals of the lines attribution reads (analyze keeps the lines that hold one; see folded_anchors)."""
    return builtin_witnesses().prefilters + builtin_witnesses().rank_keep + ("NSpid",)


def folded_anchors() -> tuple[str, ...]:
    """The literals of anchors() a line may hold in any case (those of case-insensitive witnesses)."""
    return builtin_witnesses().folded_prefilters


class Names:
    """Resolves a name a line prints to a node: a pod's or a container's hostname to the node it runs on (or to
    nothing when the bundle does not say), an IP to its host (or itself: the name of last resort)."""

    def __init__(self, a: Attribution, w: Witnesses, not_hosts: Iterable[str] = ()):
        self.a, self.w, self.not_hosts = a, w, frozenset(not_hosts)   # (the served model's names)

    def host(self, name: str | None) -> str | None:
        if not name:
            return None
        if name in self.a.alias_node:
            return self.a.alias_node[name]
        if is_ip(name):
            return self.a.ip_node.get(name, name)
        return None if short_host(name).lower() in self.not_hosts else short_host(name)


def learn(events: pl.DataFrame, hints: DumpHints | None = None, files: Iterable[str] = (),
          top: str | None = None) -> Attribution:
    """Learn the node and rank maps of a bundle from its parsed events and what its dumps say. `files`
    names every file of the bundle, so that files with no line kept still get their folder's node; `top` is the
    folder every file of an archive was in (dropped from the names)."""
    w = builtin_witnesses()
    hints = hints or DumpHints()
    a = Attribution(finished_pods=hints.finished_pods)
    ev = host_columns(elastic_entries(ensure(events)))
    reads = line_witnesses(ev, w)
    names = Names(a, w, hints.not_hosts)

    # 1. pods and the nodes they run on; the names lines print that are a pod's or a container's, not a node's
    for pod, node in sorted(hints.pod_node.items()):
        a.pod_node[pod] = short_host(node)
        a.said("pod", pod, hints.where.get(("pod", pod), "a pod listing"))
    for r in reads["pod_node"]:
        if a.pod_node.setdefault(r.g["pod"], short_host(r.g["node"])) == short_host(r.g["node"]):
            a.said("pod", r.g["pod"], f"the Scheduled event on {r.file}:{r.line}")
    pods = a.pods = set(a.pod_node) | hints.pods | set(ev["w_pod"].drop_nulls().unique().to_list()) | \
        {r.g["pod"] for r in reads["about_pod"] if r.name == "k8s_object_pod"}   # (an event row's 'pod/NAME')
    for f in [*files, *ev["file"].unique().to_list()]:
        if m := RX["pod_log_dir"].search(f) or RX["container_log"].search(f):
            pods.add(m.group("pod"))
            # (the object of its folder's pod uid names the node, whatever later pod of that name a listing shows)
            if (uid := m.groupdict().get("uid")) in a.pod_node and a.pod_node.get(m.group("pod")) != a.pod_node[uid]:
                a.pod_node[m.group("pod")] = a.pod_node[uid]
                a.why["pod", m.group("pod")] = f"the object of its log folder's pod uid {uid} ({a.why['pod', uid]})"
    for pod in sorted(pods):
        a.alias_node[pod] = a.pod_node.get(pod)
        a.said("alias", pod, f"{pod} is a pod" + (f" on {a.pod_node[pod]} ({a.why[('pod', pod)]})"
                                                  if pod in a.pod_node else ""))
    line_hosts = set(ev["_h"].drop_nulls().unique().to_list())
    for h in sorted(hints.container_hosts | {h for h in line_hosts if RX["container_id_host"].match(h)}):
        if h not in a.alias_node:
            a.alias_node[h] = None  # the container's: its file's node
            a.said("alias", h, f"{h} is a container's hostname")

    # 2. ip -> host: NCCL bootstrap lines, notes and /etc/hosts, node and pod IPs, Ray's registrations
    boot = ev.filter(pl.col("_h").is_not_null() & (pl.col("source") == "nccl")).select(
        "_h", pl.coalesce(pl.col("text").str.extract(line_rx("nccl_boot"), 1), pl.col("ip")).alias("_ip"),
        "file", "line").drop_nulls(["_h", "_ip"]).unique(["_h", "_ip"], keep="first").sort("_ip", "_h")
    # (a host name several machines print, each with its own bootstrap address in its own files, an image's
    # default 'ubuntu', names none of them: its lines are their files' nodes', told by those addresses)
    shared = set(boot.group_by("_h").agg(pl.col("_ip").n_unique().alias("n"), pl.col("file").n_unique().alias("k"))
                 .filter((pl.col("n") >= 2) & (pl.col("k") >= 2))["_h"].to_list())
    for h in sorted(shared):
        a.alias_node[h] = None
        a.said("alias", h, f"{h} is the host name of several machines (each its own NCCL bootstrap address)")
    for h, ip, f, ln in boot.iter_rows():
        if h not in shared and (node := names.host(h)) and a.ip_node.setdefault(ip, node) == node:
            a.said("ip", ip, f"NCCL bootstrap on {f}:{ln} ({h} uses {ip})")
    for ip, h in sorted(hints.ip_host.items()):
        if w.is_host(short_host(h)) and a.ip_node.setdefault(ip, short_host(h)) == short_host(h):
            a.said("ip", ip, f"{hints.where.get(('ip_host', ip), 'a note')} ({short_host(h)} = {ip})")
    for ip, node in sorted(hints.node_ip.items()):
        if a.ip_node.setdefault(ip, short_host(node)) == short_host(node):
            a.said("ip", ip, f"the node IP in {hints.where.get(('node_ip', ip))}")
    for ip, pod in sorted(hints.pod_ip.items()):
        if a.pod_node.get(pod) and a.ip_node.setdefault(ip, a.pod_node[pod]) == a.pod_node[pod]:
            a.said("ip", ip, f"pod {pod}'s IP in {hints.where.get(('pod_ip', ip))}; {pod} runs on {a.pod_node[pod]} "
                             f"({a.why[('pod', pod)]})")
    # (an IP a note ties to a pod's hostname: that pod's node, if the bundle says which)
    a.ip_node = {ip: a.alias_node.get(node, node) for ip, node in a.ip_node.items() if a.alias_node.get(node, node)}
    ray_ids: dict[str, str] = {}
    for r in reads["ray_node"] + reads["subject"]:
        if r.g.get("node_id") and r.g.get("ip"):
            ray_ids.setdefault(r.g["node_id"], r.g["ip"])
        if r.kind == "ray_node" and (name := r.g.get("name")) and not is_ip(name) and w.is_host(name) \
                and r.g.get("ip") and a.ip_node.setdefault(r.g["ip"], name) == name:
            a.said("ip", r.g["ip"], f"Ray's node address on {r.file}:{r.line} ({name} at {r.g['ip']})")

    # 3. the host each file's own lines name (Ray's relayed lines carry ip=; pdsh labels each merged host's), resolved
    own = ev.filter(pl.col("_h").is_not_null() & pl.col("ip").is_null() & pl.col("wrapper").ne_missing("pdsh")) \
        .group_by("file", "_h").agg(pl.len(), pl.col("line").min().alias("first"), pl.col("source").first(),
                                    pl.col("wrapper").first())
    file_hosts, file_why = {}, {}   # file -> its host, and the witness
    for f in sorted(own["file"].unique().to_list()):
        rows = own.filter(pl.col("file") == f).with_columns(
            pl.col("_h").map_elements(names.host, return_dtype=pl.String).alias("_n")).drop_nulls("_n")
        rows = rows.group_by("_n").agg(pl.col("len").sum(), pl.col("first").min(), pl.col("_h").first(),
                                       pl.col("source").first(), pl.col("wrapper").first()) \
            .sort(["len", "_n"], descending=[True, False])
        if rows.height and (rows.height == 1 or rows["len"][0] > 3 * rows["len"][1]):
            r = rows.row(0, named=True)
            file_hosts[f] = r["_n"]
            file_why[f] = f"{host_field(r['source'], r['wrapper'])} {r['_h']!r} on {f}:{r['first']}" + \
                (f" ({a.why[('alias', r['_h'])]})" if r["_h"] in a.alias_node else "")
    for r in reads["file_host"]:
        # (a daemon's own address, a raylet's: the host the bundle ties it to)
        if (node := a.ip_node.get(ip := r.g["host"])) and is_ip(ip) and w.is_host(node) and r.file not in file_hosts:
            file_hosts[r.file] = node
            file_why[r.file] = f"its own address {ip} on {r.file}:{r.line}, {node}'s ({a.why.get(('ip', ip), '')})"
        elif (node := names.host(r.g["host"])) and w.is_host(node) and r.file not in file_hosts:   # (a pod: its node)
            file_hosts[r.file] = node
            how = "`uname -a`" if r.name == "uname" else "the provenance note"
            of = f" (pod {r.g['host']}, {a.why.get(('pod', r.g['host']))})" if r.g["host"] in pods else ""
            file_why[r.file] = f"{how} on {r.file}:{r.line}{of}"
    for f, h in sorted(hints.file_host.items()):
        if (node := names.host(h)) and w.is_host(node) and f not in file_hosts:
            file_hosts[f], file_why[f] = node, hints.where.get(("file_host", f), f"the hostname in {f}")
    def hosts(ip_hosts: Iterable[str]) -> set[str]:
        return {h for h in [*file_hosts.values(), *ip_hosts, *map(names.host, line_hosts),
                            *map(names.host, hints.named_hosts), *a.working_pod_nodes()]
                if h and not is_ip(h) and w.is_host(h)}

    known_hosts = hosts(a.ip_node.values())
    files = sorted(set(ev["file"].unique().to_list()) | set(hints.file_host) | set(hints.gpu_buses) | set(files))
    folder_why: dict[str, str] = {}
    seen_ips = set(ev["ip"].drop_nulls().to_list()) | {r.g["ip"] for r in reads["ray_head"]}
    in_play = hosts(a.ip_node[ip] for ip in seen_ips if ip in a.ip_node)  # (not every host /etc/hosts lists)
    # the files that log something or are a node's dumps (not only plain text: launch scripts, notes)
    logged = {*ev.filter(pl.col("source") != "plain")["file"].unique().to_list(), *hints.file_host, *hints.gpu_buses}
    bare = {ip: ip for ip in seen_ips if ip not in a.ip_node}   # (a Ray node's ip= that names no host: its own name)
    units = {m.group("unit") for f in files if (m := RX["unit_file"].search(f))}   # (a unit's folder is no host's)
    a.folder_node = node_folders(files, file_hosts, known_hosts, w, folder_why, pods | set(a.alias_node) | units,
                                 in_play=in_play, logged=logged, named_node={**bare, **hints.alias_host, **a.ip_node})
    if top and not a.folder_node and w.is_node_folder_name(top) and set(file_hosts.values()) <= {top}:
        a.top_node = top
    pods_longest = sorted(a.pod_node, key=len, reverse=True)  # the longest name first: kimi-k3-0-1, then kimi-k3-0
    relayed = {f: set(ips) for f, ips in ev.filter(pl.col("ip").is_not_null()).group_by("file")
               .agg(pl.col("ip").unique()).iter_rows()}
    for f in files:
        if node := folder_node_of(f, a.folder_node):
            d = next(d for d, n in a.folder_node.items() if f.startswith(d + "/"))
            a.file_node[f], why = node, folder_why[d]
        elif a.top_node:
            a.file_node[f], why = a.top_node, f"the archive's one top folder {a.top_node}/ (named like a host)"
        elif f in file_hosts:
            a.file_node[f], why = file_hosts[f], file_why[f]
        elif (m := RX["pod_log_dir"].search(f) or RX["container_log"].search(f)
              or RX["docker_container_log"].search(f)) and a.pod_node.get(m.group("pod")):
            pod, what = m.group("pod"), "container" if RX["docker_container_log"].search(f) else "pod"
            a.file_node[f], why = a.pod_node[pod], f"the log of {what} {pod} (its path), on {a.pod_node[pod]} " \
                                                   f"({a.why[('pod', pod)]})"
        elif pod := next((p for p in pods_longest
                          if re.search(rf"(?<![A-Za-z0-9]){re.escape(p)}(?![A-Za-z0-9])", f)), None):
            # 'kubectl-logs-POD-c-CONTAINER.txt': the node a pod listing places POD on
            a.file_node[f], why = a.pod_node[pod], f"the file of pod {pod} (its name), on {a.pod_node[pod]} " \
                                                   f"({a.why[('pod', pod)]})"
        elif head := next((r for r in reads["ray_head"] if r.file == f and a.ip_node.get(r.g["ip"])
                           and r.g["ip"] not in relayed.get(f, ())), None):
            # a Ray driver on the head: none of its relayed workers' lines comes from the head's address
            node = a.ip_node[head.g["ip"]]
            a.file_node[f], why = node, f"the Ray driver's head {head.g['ip']} (line {head.line}; no worker line " \
                                        f"relayed from it), via {a.why.get(('ip', head.g['ip']), '')}"
        else:
            a.file_node[f], why = None, None
        if why:
            a.said("file", f, why)
    acting = {n for r in [*reads["line_host"], *reads["task_hosts"]] if (n := names.host(r.g["host"])) and w.is_host(n)}
    # (the hosts a Slurm job ran on are hosts of the deployment, those that printed nothing too)
    job = {h for h in hints.job_hosts if w.is_host(h)}
    for f, (node, why) in node_files(a.file_node, known_hosts | acting | job, w).items():
        a.file_node[f] = node
        a.said("file", f, why)
    # (a container its host's `docker ps` lists, a pod its `crictl pods` lists: their own files are that host's)
    for r in reads["container_listed"]:
        if (node := a.file_node.get(r.file)) and a.pod_node.setdefault(r.g["container"], node) == node:
            a.said("pod", r.g["container"], f"the container or pod its host lists ({r.file}:{r.line}), a file of "
                                            f"{node}")
    listed = sorted({r.g["container"] for r in reads["container_listed"]}, key=len, reverse=True)
    for f in [f for f, n in a.file_node.items() if not n]:
        if (m := RX["docker_container_log"].search(f)) and (node := a.pod_node.get(m.group("pod"))):
            a.file_node[f] = node
            a.said("file", f, f"the log of container {m.group('pod')}, on {node} ({a.why[('pod', m.group('pod'))]})")
        elif (pod := next((p for p in listed if re.search(rf"(?<![A-Za-z0-9]){re.escape(p)}(?![A-Za-z0-9-])", f)),
                          None)) and (node := a.pod_node.get(pod)):
            # (a pod's log named after it: the host whose `crictl pods` lists it)
            a.file_node[f] = node
            a.said("file", f, f"the file of pod {pod} (its name), on {node} ({a.why[('pod', pod)]})")
    for pod in listed:   # (a pod's hostname its lines print, or its file took: the node that lists the pod)
        if (node := a.pod_node.get(pod)) and node != pod and a.alias_node.get(pod) is None:
            a.alias_node[pod] = node
            for f in [f for f, n in a.file_node.items() if n == pod]:
                a.file_node[f] = node
                a.said("file", f, f"the hostname of pod {pod}, on {node} ({a.why[('pod', pod)]})")
    host_files = set(ev.filter(pl.col("source") == "kernel")["file"].unique().to_list()) | set(hints.gpu_buses)
    for find in (lambda: one_node_job_files([f for f, n in a.file_node.items() if not n], hints),
                 lambda: host_named_files([f for f, n in a.file_node.items() if not n], host_files, w),
                 lambda: gpu_host_files(a.file_node, host_files, ev)):   # (each after the ones before)
        for f, (node, why) in find().items():
            a.file_node[f] = node
            a.said("file", f, why)
    for f, ips in boot.filter(pl.col("_h").is_in(list(shared))).group_by("file").agg(pl.col("_ip").unique()).rows():
        if not a.file_node.get(f) and len(ips) == 1 and (node := a.ip_node.get(ips[0])) and not is_ip(node):
            a.file_node[f] = node
            a.said("file", f, f"its NCCL bootstrap address {ips[0]}, {node}'s ({a.why.get(('ip', ips[0]), '')})")
    # a dump's own addresses are its node's, and so is the address a node's own log says it registers with
    for f, ips in sorted(hints.file_ips.items()):
        if node := a.file_node.get(f):
            for ip in ips:
                if a.ip_node.setdefault(ip, node) == node:
                    a.said("ip", ip, f"`ip addr` in {hints.where.get(('file_ip', f, ip), f)} (the dump of {node})")
    learn_tasks(ev, reads, a, names, hints)   # (an srun -l task's line is its node's, not its file's)
    # (a task label, or a file's lines under none, that prints two addresses ran on two nodes: `srun -w HOST` steps)
    addresses = defaultdict(set)
    for r in reads["own_ip"]:
        addresses[(r.file, step_of(a, r.file, r.line), r.task)].add(r.g["ip"])
    for r in reads["own_ip"]:
        task = (r.file, step_of(a, r.file, r.line), r.task)
        if r.task is not None and len(addresses[task]) == 1 and (node := a.task_node.get(task)):
            if a.ip_node.setdefault(r.g["ip"], node) == node:
                a.said("ip", r.g["ip"], f"'Local node IP' on {r.file}:{r.line}, printed by srun task {r.task} "
                                        f"on {node}")
        elif (node := a.file_node.get(r.file) if len(addresses[task]) == 1 else None) \
                and a.ip_node.setdefault(r.g["ip"], node) == node:
            a.said("ip", r.g["ip"], f"'Local node IP' on {r.file}:{r.line} (a file of {node})")
        elif not node and (start := _launched_on(r, reads, w)) and a.ip_node.setdefault(r.g["ip"], start.g["host"]) \
                == start.g["host"]:
            a.said("ip", r.g["ip"], f"'Local node IP' on {r.file}:{r.line}, printed by the `ray start` that line "
                                    f"{start.line} launches on {start.g['host']}")
    # a Ray driver that relays no worker line from the head it joins runs on the head: a file of a known node
    for r in reads["ray_head"]:
        if (node := a.file_node.get(r.file)) and r.g["ip"] not in relayed.get(r.file, ()) \
                and a.ip_node.setdefault(r.g["ip"], node) == node:
            a.said("ip", r.g["ip"], f"the Ray driver on {r.file}:{r.line} joins the head at {r.g['ip']} and relays no "
                                    f"worker line from it: it runs on the head, {node}")
    # the deployment's one node no address is given for (the Slurm job's, else a node folder's): the Ray address left,
    # of the deployment's relayed lines, else of any Ray record (the GCS also marks dead a node that left before)
    recorded = {r.g["ip"] for r in reads["ray_node"] + reads["subject"] if r.g.get("ip")}
    left_ips = [ip for ip in sorted(seen_ips) if ip not in a.ip_node] or sorted(recorded - set(a.ip_node))
    deployment = set(hints.job_hosts) or set(a.folder_node.values())
    left_hosts = sorted(h for h in deployment if w.is_host(h) and h not in set(a.ip_node.values()))
    if len(deployment) >= 2 and len(left_ips) == 1 and len(left_hosts) == 1:
        a.ip_node[left_ips[0]] = left_hosts[0]
        a.said("ip", left_ips[0], f"the one Ray address no host is tied to, and the one node of the "
                                  f"{'Slurm job' if hints.job_hosts else 'bundle'} ({', '.join(sorted(deployment))}) "
                                  f"whose address nothing gives")

    # 4. what a line is about, or where it happened; Kubernetes event objects; Slurm tasks
    for r in reads["subject"]:
        node, how = _subject(r, a, ray_ids, names)
        if node:
            a.subject_node[(r.file, r.line)] = node
            a.said("subject", (r.file, r.line), how)
            if r.g.get("pid"):
                a.subject_pid[(r.file, r.line)] = (node, int(r.g["pid"]))
    for r in reads["about_pod"]:
        if node := a.pod_node.get(r.g["pod"]):
            a.subject_node.setdefault((r.file, r.line), node)
            a.said("subject", (r.file, r.line), f"the pod the line is about ({r.g['pod']}, line {r.line}), on {node} "
                                                f"({a.why[('pod', r.g['pod'])]})")
    # a line naming where it happened, and srun's report of the tasks that ended on a host, are about that host
    for r in [*reads["line_host"], *reads["task_hosts"]]:
        if (node := names.host(r.g["host"])) and w.is_host(node):
            a.subject_node.setdefault((r.file, r.line), node)
            a.said("subject", (r.file, r.line), f"the host the line names ({r.g['host']}, {r.name})")
    for f, spans in hints.span_node.items():
        resolved = []
        for s, e, n in sorted(spans):
            pod = n[4:] if n.startswith("pod/") else None
            node = a.pod_node.get(pod) if pod else names.host(n)
            if node:
                resolved.append((s, e, node))
                how = hints.where.get(("span", f, s), f"{f}:{s}")
                a.said("span", (f, s), f"{how}, on {node} ({a.why[('pod', pod)]})" if pod else how)
        if resolved:
            a.span_node[f] = resolved
    a.span_time = {f: sorted((s, e, t.astimezone(timezone.utc).replace(tzinfo=None))
                             for s, e, iso in spans if (t := parse_iso(iso))) for f, spans in hints.span_time.items()}
    learn_stepd_errors(ev, reads, a, names)
    learn_sections(reads, a, names)

    nodes_seen = {n for n in a.file_node.values() if n} | known_hosts | set(a.subject_node.values()) | \
        set(a.task_node.values()) | {n for spans in a.span_node.values() for _, _, n in spans} | a.working_pod_nodes()
    nodes_seen = {n for n in nodes_seen if n and (not is_ip(n) or n in a.subject_node.values())}
    a.single_node = next(iter(nodes_seen)) if len(nodes_seen) == 1 else None
    named = sorted(h for h, n in a.alias_node.items() if n is None and h not in pods)
    if not nodes_seen and len(named) == 1:
        # a container's own hostname (its id, or a name set with --hostname), and no other name for the machine:
        # it stands for its host, as an IP would (the name of last resort)
        h = named[0]
        how = f"docker inspect in {hints.where[('container_host', h)]}" if ("container_host", h) in hints.where \
            else "its lines print it"
        a.single_node = h
        a.said("single", h, f"the bundle's only node: the container's hostname {h} ({how}), no other name for its "
                            f"host")
    elif a.single_node:
        src = next((a.why[("file", f)] for f, n in sorted(a.file_node.items()) if n == a.single_node
                    and ("file", f) in a.why), None) or hints.where.get(("named", a.single_node)) or \
            next((a.why[("ip", ip)] for ip, n in sorted(a.ip_node.items()) if n == a.single_node), None)
        a.said("single", a.single_node, f"the bundle's only node ({src})" if src else "the bundle's only node")
    a.nodes = sorted(n for n in nodes_seen if n and not is_ip(n))
    ev = apply_nodes(ev, a)
    a.nodes = sorted(ev["node"].drop_nulls().unique().to_list())
    learn_ranks(ev, a, hints)
    learn_raisers(ev, reads, a)
    for key, (node, pid) in a.subject_pid.items():
        if (node, pid) in a.pid_rank:
            a.subject_rank[key] = a.pid_rank[(node, pid)]
            a.said("subject_rank", key, f"the process the line is about, pid {pid} on {node} (line {key[1]}): "
                                        f"{a.why.get(('pid', (node, pid)), '')}")
    learn_gpus(ev, a, hints)
    a.full_name = _full_names([*hints.pod_node.values(), *hints.file_host.values(), *line_hosts,
                               *(r.g.get("node") or r.g.get("host") or r.g.get("name") or "" for rs in reads.values()
                                 for r in rs)],
                              set(a.nodes), w)
    return a


def _launched_on(own_ip: Read, reads: dict[str, list[Read]], w: Witnesses, within: int = 10) -> Read | None:
    """The launcher line that starts Ray on the host whose 'Local node IP' `own_ip` is, in one job output of
    several nodes. A launcher announces each node before the `ray start` it runs there prints the address: the
    k-th announcement of the file is the k-th address's, when they are as many and each address comes after
    its own (announced all first, or one by one). Else it is the last Ray line before `own_ip` within a few
    lines, when that is an announcement and the Ray line before it is none (several announced in a row: which
    one is it?)."""
    starts = sorted((r for r in reads["starts_ray"] if r.file == own_ip.file), key=lambda r: r.line)
    ips = sorted((r for r in reads["own_ip"] if r.file == own_ip.file), key=lambda r: r.line)
    if len(starts) == len(ips) and all(s.line < o.line for s, o in zip(starts, ips)):
        start = starts[[o.line for o in ips].index(own_ip.line)]
        return start if w.is_host(start.g["host"]) else None
    *earlier, last = [None, *sorted((r for r in [*starts, *ips] if r.line < own_ip.line), key=lambda r: r.line)]
    if last is None or last.kind != "starts_ray" or last.line < own_ip.line - within or not w.is_host(last.g["host"]):
        return None
    return None if earlier[-1] is not None and earlier[-1].kind == "starts_ray" else last


def _full_names(names: Iterable[str], nodes: set[str], w: Witnesses) -> dict[str, str]:
    """The fully qualified name the bundle gives each node, where it gives exactly one (EKS names its nodes
    ip-10-0-1-2.us-west-2.compute.internal, which is what `kubectl describe node` takes; NCCL prints the
    short one). Nodes are keyed by their short name."""
    full: dict[str, set[str]] = defaultdict(set)
    for name in names:
        if name and "." in name and not is_ip(name) and (short := short_host(name)) in nodes and w.is_host(short):
            full[short].add(name.strip().rstrip("."))
    return {short: next(iter(f)) for short, f in full.items() if len(f) == 1}


def _subject(r: Read, a: Attribution, ray_ids: dict[str, str], names: Names) -> tuple[str | None, str]:
    """The node a line is about (a Ray node's name or address), and how it was told."""
    g = r.g
    ip = g.get("ip") or ray_ids.get(g.get("node_id", ""))
    name = g.get("name")
    label = {"gcs_marked_dead": "the node the GCS marks dead", "gcs_health_check": "the node whose health check failed",
             "gcs_removing_node": "the node the GCS removes", "raylet_memory_monitor": "the node of the memory monitor",
             "ray_worker_died_address": "the dead worker's node"}.get(r.name, "the node the line is about")
    if name and not is_ip(name) and names.w.is_host(name):
        return names.host(name), f"{label} ({name}, on line {r.line})"
    if ip:
        node = names.host(ip)
        via = a.why.get(("ip", ip))
        how = f"{label}, Ray node IP {ip}" + (f" via {via}" if via and node != ip else " (no host named for it)")
        return node, how
    return None, ""
