"""Which folders of a bundle are a node's: a folder per node named like a host (or holding one host's logs), looked for
under the folders that only wrap the rest (incident-42/bundle/...)."""
from __future__ import annotations

import os
import re
from collections import Counter

import polars as pl

from k3logs.catalogue.witnesses import Witnesses

from .attribution import MAX_WRAPPING_FOLDERS, RX, is_ip


def _folder_in(path: str, base: str) -> str | None:
    """The folder directly under `base` ('' = the bundle root) that holds `path`, as a path (None: none)."""
    prefix = base + "/" if base else ""
    if not path.startswith(prefix):
        return None
    head, sep, _ = path[len(prefix):].partition("/")
    return prefix + head if sep else None


def folder_node_of(path: str, folder_node: dict[str, str]) -> str | None:
    """The node of the per-node folder that holds `path`, if any (folders are keyed by their path)."""
    return next((n for d, n in folder_node.items() if path.startswith(d + "/")), None)


def _hosts_named(folder: str, known_hosts: set[str]) -> list[str]:
    """The known hosts a folder's name stands for (node-gpu-r5-07 for gpu-r5-07)."""
    return [h for h in known_hosts if h == folder or (len(h) >= 4 and (h in folder or folder in h))]


def _hosts_inside(folder: str, known_hosts: set[str]) -> list[str]:
    """The known hosts a folder's name holds as a whole part of it (sosreport-gpu-r5-07-2026-03-17-kd2q)."""
    return [h for h in known_hosts if len(h) >= 4 and re.search(rf"(?:^|[-_.]){re.escape(h)}(?:$|[-_.])", folder)]


def node_folders(files: list[str], file_hosts: dict[str, str], known_hosts: set[str], w: Witnesses,
                  why: dict[str, str], pods: set[str] = frozenset(), base: str = "", depth: int = 0,
                  in_play: set[str] | None = None, lone: bool = True, logged: set[str] | None = None,
                  named_node: dict[str, str] | None = None) -> dict[str, str]:
    """Which folders directly under `base` (the bundle root first) are per-node folders, and the node each
    stands for (`why` gets how each was told). A bundle whose folders are all in one that names no host (a
    ticket's 'incident-42/node-a/...') has them inside that one: those are tried first, a few levels down. A
    generic folder (`logs`, `incident-42`: patterns/attribution.toml [folders]), a pod's folder (named after a
    pod, NS_POD, or /var/log/pods' NS_POD_UID) is never a node's."""
    dirs = sorted({d for f in files if (d := _folder_in(f, base))})
    name = {d: RX["archive_suffix"].sub("", d.rsplit("/", 1)[-1]) for d in dirs}  # node-a.tar.gz/...: node-a
    if len(dirs) == 1 and depth < MAX_WRAPPING_FOLDERS and not _hosts_named(name[dirs[0]], known_hosts):
        inner_why: dict[str, str] = {}
        if inner := node_folders(files, file_hosts, known_hosts, w, inner_why, pods, dirs[0], depth + 1, in_play,
                                 logged=logged, named_node=named_node):
            why.update(inner_why)
            return inner
    # (a folder named by a node's address or by another name of it, an inventory's rack slot, is that node's,
    # though an address reads as a version number; so is one named by an address the lines use that names no host,
    # a Ray node's ip=, the node's own name)
    addressed = {d for d in dirs if (named_node or {}).get(name[d])}
    # (a collector's folder that names one host of the bundle, sosreport-HOST-DATE-ID, logs-HOST: that host's)
    addressed |= {d for d in dirs if w.is_generic_folder(name[d]) and len(_hosts_inside(name[d], known_hosts)) == 1}
    layout = [d for d in dirs if w.is_generic_folder(name[d]) and d not in addressed]
    # (a pod's folder: its name, NS_POD as kubelet's without the uid, or /var/log/pods' NS_POD_UID)
    dirs = [d for d in dirs if (not w.is_generic_folder(name[d]) or d in addressed)
            and not {name[d], name[d].partition("_")[2]} & pods and not RX["pod_log_dir"].search(name[d] + "/")]
    out: dict[str, str] = {}
    def in_pod(f: str) -> bool:   # (a file in a pod's folder witnesses that pod's node, not its parents')
        return any({p, p.partition("_")[2]} & pods or RX["pod_log_dir"].search(p + "/") for p in f.split("/")[:-1])

    for d in dirs + [d for d in layout if w.is_container_folder(name[d])]:
        hosts = Counter(h for f, h in file_hosts.items() if _folder_in(f, base) == d and not in_pod(f))
        if len(hosts) == 1:
            out[d] = next(iter(hosts))
            why[d] = (f"node folder {d}/ (its files print the host {out[d]})" if d in dirs else
                      f"container folder {d}/ (one container's files: the host they name, {out[d]})")
            continue
        if len(match := _hosts_named(name[d], known_hosts)) == 1:
            out[d] = match[0]
            why[d] = f"node folder {d}/ (named after the host {out[d]})"
        elif d in addressed:
            out[d] = named_node[name[d]]
            why[d] = f"node folder {d}/ (named after the {'address' if is_ip(name[d]) else 'inventory name'} of " \
                     f"{out[d]})"
    # one folder left and one host of the deployment left: that folder is that host (the deployment's hosts:
    # `in_play`, those its lines use; a listing such as /etc/hosts names many more)
    # (a folder of launch scripts and notes, `logged` none of its files, is no node's)
    left = [d for d in dirs if d not in out and not w.is_generic_folder(name[d])
            and (logged is None or any(_folder_in(f, base) == d for f in logged))]
    # (a short name notes use of a host already placed, 'n17' of 'b300-r2-n17', is that host: not left)
    unplaced = {h for h in (known_hosts if in_play is None else in_play) - set(out.values())
                if not any(n.endswith("-" + h) for n in out.values())}
    if out and len(left) == 1 and len(unplaced) == 1:
        host, folder = next(iter(unplaced)), name[left[0]]
        # (the short name notes use, 'n32', of the host a folder names in full, 'b200-n32': the folder's name)
        full = folder.endswith("-" + host) and w.is_host(folder)
        out[left[0]] = folder if full else host
        why[left[0]] = f"node folder {left[0]}/ (the one folder and the one host left: {host}" + \
            (f", short for the folder's {folder})" if full else ")")
    # the other folders are nodes only when they look like siblings of another node folder (node-a, node-b; a
    # prefill and a decode node beside a gateway's), not like a layout (var-lib-docker, host)
    candidates = [d for d in dirs if d not in out and not w.is_generic_folder(name[d])]
    if candidates and len(candidates) + len(out) >= 2:
        everyone = [*candidates, *out]
        for d in [d for d in candidates if any(len(os.path.commonprefix([name[d], name[o]])) >= 3
                                               for o in everyone if o != d)]:
            out[d] = name[d]
            why[d] = f"node folder {d}/"
    # a folder named like a host that holds a host's own file tree (var/log/..., etc/...): that host's capture
    for d in [d for d in dirs if d not in out and w.is_node_folder_name(name[d])
              and any(f.startswith((d + "/var/", d + "/etc/")) for f in files)]:
        out[d] = name[d]
        why[d] = f"node folder {d}/ (named like a host, it holds that host's var/ or etc/)"
    # a bundle of one node: its one folder, named like a host, whose files print no other host (not one folder
    # inside a layout folder: pods/POD/ is a pod's)
    if not out and lone and len(dirs) == 1 and w.is_node_folder_name(name[dirs[0]]) and \
            not any(_folder_in(f, base) == dirs[0] for f in file_hosts):
        out[dirs[0]] = name[dirs[0]]
        why[dirs[0]] = f"node folder {dirs[0]}/ (the bundle's one folder, named like a host)"
    # none here: the node folders may sit in a layout folder beside others (nodes/HOST/..., launch/)
    if not out and depth < MAX_WRAPPING_FOLDERS:
        for d in layout:
            out.update(node_folders(files, file_hosts, known_hosts, w, why, pods, d, depth + 1, in_play, lone=False,
                                    logged=logged, named_node=named_node))
    return out


def _token_in(host: str, name: str) -> bool:
    """`host` is a whole token of the file name `name` (not part of a longer name: gpu-b1 in gpu-b12 or gpu-b1-2)."""
    i = name.find(host)
    while i >= 0:
        before, after = name[i - 1:i], name[i + len(host):i + len(host) + 2]
        if not (before.isalnum() or after[:1].isalnum() or (after[:1] == "-" and after[1:].isdigit())):
            return True
        i = name.find(host, i + 1)
    return False


def node_files(file_node: dict[str, str | None], known_hosts: set[str], w: Witnesses) -> dict[str, tuple[str, str]]:
    """Files of no node yet that a file name places on one (Slurm's `-o job-%N.out`, NCCL_DEBUG_FILE=%h.%p, a
    collector's `dmesg-HOST.txt`): the name holds one host the bundle knows, as a whole token; or it is a sibling
    of a file placed on its node, made from the same template with another host-like token in the place where
    that file's name holds its node (job-7-gpu-a.out on gpu-a, so job-7-gpu-b.out is gpu-b's)."""
    out: dict[str, tuple[str, str]] = {}
    for f, node in file_node.items():
        hosts = [h for h in known_hosts if len(h) >= 4 and _token_in(h, f.rsplit("/", 1)[-1])]
        if not node and len(hosts) == 1:
            out[f] = (hosts[0], f"its file name holds the host {hosts[0]}")
    placed = [(f, n) for f, n in [*file_node.items(), *((f, n) for f, (n, _) in out.items())]
              if n and _token_in(n, f.rsplit("/", 1)[-1])]
    for f, node in file_node.items():
        if node or f in out:
            continue
        folder, _, name = f.rpartition("/")
        for g, n in placed:
            g_folder, _, g_name = g.rpartition("/")
            head, _, tail = g_name.partition(n)
            token = name[len(head):len(name) - len(tail)] if len(name) > len(head) + len(tail) else ""
            if g_folder == folder and name.startswith(head) and name.endswith(tail) and token != n \
                    and w.is_node_folder_name(token) and _token_in(token, name):
                out[f] = (token, f"its file name, made as {g_name} (on {n}) is, names its node")
                break
    return out


def _host_tokens(name: str, w: Witnesses) -> set[str]:
    """The host-like tokens of a file name: runs of its dash-separated words within a part between dots and
    underscores ('vllm-h200-pod3-b14.log': h200-pod3-b14, pod3-b14, b14, vllm-h200-pod3-b14, ...)."""
    out = set()
    for part in re.split(r"[._]", name):
        words = part.split("-")
        out |= {t for i in range(len(words)) for j in range(i + 1, len(words) + 1)
                if w.is_node_folder_name(t := "-".join(words[i:j]))}
    return out


def host_named_files(files: list[str], host_files: set[str], w: Witnesses) -> dict[str, tuple[str, str]]:
    """Files of one folder named by host with no host the bundle knows (`for h in ...; ssh $h dmesg >
    dmesg.$h.txt`): a host-like token that names two or more files of different names, one of them a host's own
    (a kernel log, an nvidia-smi dump: `host_files`), is a node when another such token makes names from the same
    template (vllm-h200-b12.log and vllm-h200-b14.log), or when every file of the folder holds it
    (gpu-h100-14.vllm-serve.log, gpu-h100-14.dmesg.txt); of the tokens naming the same files, the longest. Names
    of ranks or workers (nccl-rank0.log) name no host dump and stay no node's."""
    by_folder: dict[str, list[str]] = {}
    for f in files:
        by_folder.setdefault(f.rpartition("/")[0], []).append(f)
    out: dict[str, tuple[str, str]] = {}
    for fs in by_folder.values():
        holders: dict[str, frozenset[str]] = {}
        for f in fs:
            for t in _host_tokens(f.rsplit("/", 1)[-1], w):
                holders[t] = holders.get(t, frozenset()) | {f}
        tokens = {t: h for t, h in holders.items() if len(h) >= 2 and h & host_files
                  and not any(len(u) > len(t) and holders[u] == h for u in holders)}
        templates = {t: {f.rsplit("/", 1)[-1].replace(t, "{}", 1) for f in h} for t, h in tokens.items()}
        hosts = {t: h for t, h in tokens.items() if any(u != t and templates[u] & templates[t] for u in tokens)}
        # else, in a folder of one host's files, the one token every name holds (gpu-h100-14.vllm-serve.log,
        # gpu-h100-14.nvidia-smi.txt: a collector's files)
        hosts = hosts or {t: h for t, h in tokens.items() if len(h) == len(fs) and not any(
            t in u and u != t and len(holders[u]) >= 2 for u in holders)}  # (not the start two hosts' names share)
        for t, h in hosts.items():
            for f in h:
                if sum(f in g for g in hosts.values()) == 1:
                    out[f] = (t, f"its file name: {f.rsplit('/', 1)[-1]} is one of the files named by host "
                                 f"({', '.join(sorted(templates[t]))})")
    return out



def gpu_host_files(file_node: dict[str, str | None], host_files: set[str],
                   ev: pl.DataFrame) -> dict[str, tuple[str, str]]:
    """The server's files (of vLLM's lines) that name no host, in a bundle whose host dumps (kernel log, nvidia-smi)
    are all of one host: the server ran where its GPUs are, and the bundle's other hosts (a client's log, a
    gateway's) show none. Nothing where a host dump names no host, or two hosts hold them."""
    holders = {file_node.get(f) for f in host_files}
    if len(holders) != 1 or None in holders:
        return {}
    (host,) = holders
    why = f"the one host whose GPUs the bundle shows ({', '.join(sorted(host_files))}: {host})"
    server = ev.filter(pl.col("source") == "vllm")["file"].unique().sort().to_list()
    return {f: (host, why) for f in server if not file_node.get(f)}
