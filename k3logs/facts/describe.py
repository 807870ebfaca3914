"""Facts from kubectl describe pod / node: the pod's node, image, command, limits and events, and a node's GPU feature
discovery labels (driver branch, GPU model and count)."""
from __future__ import annotations

import shlex

from .k8s import command_facts
from .util import FACTS, Sink, digest_of, emit_env, parse_date, parse_size

# ------------------------------------------------------------------------------------------
# kubectl describe pod / node
# ------------------------------------------------------------------------------------------
_GFD = {"nvidia.com/cuda.driver.major": "driver_branch", "nvidia.com/gpu.product": "gpu_model",
        "nvidia.com/gpu.count": "gpu_count", "nvidia.com/cuda.runtime.major": None}


def parse_describe(sink: Sink, lines: list[str], base: int) -> None:
    top = {}
    key_value, event = FACTS["describe_key_value"], FACTS["describe_event"]
    for i, ln in enumerate(lines):
        m = key_value.match(ln)
        if m and not m.group("indent"):
            top.setdefault(m.group("key"), (m.group("val") or "", base + i + 1))
    # (a volume's or its claim's describe has a Capacity too, and a storage class: it is no node's)
    is_node = ("Capacity" in top or "Roles" in top or "Taints" in top) and "StorageClass" not in top
    if "Name" in top and is_node:
        sink.add("node_name", top["Name"][0], top["Name"][1])
    if "Node" in top and top["Node"][0] not in ("<none>", ""):
        name, _, node_ip = top["Node"][0].partition("/")
        sink.add("node_name", name, top["Node"][1])
        sink.add("hostname", name, top["Node"][1])
        if FACTS["ipv4"].fullmatch(node_ip):
            sink.add("node_ip", f"{name} {node_ip}", top["Node"][1])
        if "Name" in top and not is_node:
            sink.add("pod_node", f"{top['Name'][0]} {name}", top["Node"][1])
    if "Name" in top and not is_node and ("Containers" in top or "Node" in top):
        sink.add("pod_name", top["Name"][0], top["Name"][1])
        if "IP" in top and FACTS["ipv4"].fullmatch(top["IP"][0]):
            sink.add("pod_ip", f"{top['Name'][0]} {top['IP'][0]}", top["IP"][1])
        if "Start Time" in top and (started := parse_date(top["Start Time"][0])):
            sink.add("pod_started", started, top["Start Time"][1])
    if is_node and "Name" in top:
        internal_ip = FACTS["describe_internal_ip"]
        for i, ln in enumerate(lines):
            m = internal_ip.match(ln)
            if m:
                sink.add("node_ip", f"{top['Name'][0]} {m.group(1)}", base + i + 1)
    section, field, sub, image, container = "", "", "", None, ""
    reason_line = None   # (the line of the last state's Reason, which its Finished time times)
    volumes: dict[str, dict] = {}
    shm_vol = None
    cmd: list[str] = []
    cmd_line = None
    gfd: dict[str, tuple[str, int]] = {}
    optional, shm_mount = FACTS["describe_env_optional"], FACTS["describe_shm_mount"]
    repeats = FACTS["describe_event_count"]
    for i, ln in enumerate(lines):
        no = base + i + 1
        if not ln.strip():
            continue
        indent = len(ln) - len(ln.lstrip(" "))
        m = key_value.match(ln)
        if indent == 0:
            section = m.group("key") if m else section
            field = sub = ""
            if section == "Labels" and m and m.group("val"):
                _label(gfd, m.group("val"), no)
            continue
        if section == "Labels":
            _label(gfd, ln.strip(), no)
        elif section in ("Containers", "Init Containers"):
            if indent == 2 and m and not m.group("val"):
                field, container = "", m.group("key")
                continue
            if indent == 4 and m:
                field, val, reason_line = m.group("key"), m.group("val"), None
                if field == "Image" and val:
                    image = val
                    sink.add("image", val, no)
                elif field == "Image ID" and val:
                    sink.add("image_digest", digest_of(val), no)
                elif field in ("Command", "Args"):
                    cmd_line = cmd_line or no
                    if val:
                        cmd.extend(shlex.split(val) if "'" not in val else val.split())
                elif field == "Restart Count" and val:
                    sink.add("restart_count", val, no)
                continue
            if field in ("Command", "Args") and indent >= 6:
                cmd.append(ln.strip())
            elif field == "Last State" and m and m.group("key") == "Reason":
                sink.add("last_state_reason", m.group("val"), no)
                reason_line = no
                if m.group("val") == "OOMKilled":
                    sink.add("oom_killed", "true", no)
            elif field == "Last State" and m and m.group("key") == "Finished" and reason_line \
                    and (when := parse_date(m.group("val") or "")):
                # (the last state's reason ended the run when it finished: its lines take that time)
                sink.add("span_time", f"{reason_line} {no} {when}", reason_line)
            elif field == "Last State" and m and m.group("key") == "Exit Code":
                sink.add("exit_code", m.group("val"), no)
                sink.add("run_ended", f"{m.group('val')} {container} {image or ''}".strip(), no)
            elif field == "Limits" and m and m.group("key") == "nvidia.com/gpu":
                sink.add("gpu_request", m.group("val"), no)
            elif field == "Environment" and m and m.group("val"):
                emit_env(sink, m.group("key").strip(), optional.sub("", m.group("val")), no)
            elif field == "Mounts":
                mm = shm_mount.match(ln)
                if mm:
                    shm_vol = mm.group(1)
        elif section == "Volumes":
            if indent == 2 and m and not m.group("val"):
                sub = m.group("key")
                volumes[sub] = {}
            elif sub and m and m.group("val"):
                volumes[sub][m.group("key")] = (m.group("val"), no)
        elif section in ("Capacity", "Allocatable") and m and m.group("key") == "nvidia.com/gpu":
            sink.add("gpu_capacity" if section == "Capacity" else "gpu_allocatable", m.group("val"), no)
        elif section == "System Info" and m and m.group("key") == "Kernel Version":
            sink.add("kernel_version", m.group("val"), no)
        elif section == "Events":
            e = event.match(ln)
            if e:
                count = repeats.search(e.group("age"))
                sink.add("pod_events", f"{e.group('type')} {e.group('reason')}"
                                       f"{' (' + count.group(1) + ')' if count else ''}: {e.group('msg')}", no)
    if cmd:
        at = lambda *needles: next((base + k + 1 for k in range(len(lines)) for n in needles  # noqa: E731
                                    if lines[k].strip() == n.strip()), cmd_line)
        command_facts(sink, cmd, image, cmd_line, at)
    vol = volumes.get(shm_vol or "", {})
    if vol.get("Medium", ("",))[0] == "Memory":
        size = vol.get("SizeLimit")
        sink.add("shm_size", parse_size(size[0]) if size and size[0] != "<unset>" else "unlimited",
                 size[1] if size else vol["Medium"][1])
    for key, (val, no) in gfd.items():
        if _GFD.get(key):
            sink.add(_GFD[key], val, no)
        if key == "kubernetes.io/hostname":
            sink.add("hostname", val, no)
    if all(k in gfd for k in ("nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor")):
        rev = gfd.get("nvidia.com/cuda.driver.rev", ("", 0))[0]
        ver = f"{gfd['nvidia.com/cuda.driver.major'][0]}.{gfd['nvidia.com/cuda.driver.minor'][0]}"
        ver += f".{rev}" if rev else ""
        sink.add("driver_version", ver, gfd["nvidia.com/cuda.driver.major"][1])


def _label(gfd: dict, text: str, no: int) -> None:
    key, eq, val = text.partition("=")
    if eq and (key.startswith("nvidia.com/") or key == "kubernetes.io/hostname"):
        gfd.setdefault(key, (val, no))
