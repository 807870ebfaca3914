"""Facts from container runtimes and Kubernetes: docker inspect JSON, pod specs (YAML or JSON), kubectl describe."""
from __future__ import annotations

import json
import shlex

from .cmdline import facts_from_command_text, parse_vllm_tokens, tokenize, vllm_arg_facts
from .util import FACTS, Sink, digest_of, emit_env, find_line, norm_image, parse_date, parse_size, templated_inspect

try:  # PyYAML reads pod specs; without it only JSON specs and the image lines of YAML are read
    import yaml
except ImportError:  # pragma: no cover
    yaml = None


def _d(x: object) -> dict:
    return x if isinstance(x, dict) else {}


def _l(x: object) -> list:
    """A YAML/JSON list as a list; a lone string (a common mistake for command/args) as one item."""
    return x if isinstance(x, list) else [x] if isinstance(x, str) else []


def _locator(lines: list[str], base: int, start: int):
    def at(*needles: str) -> int:
        for n in needles:
            k = find_line(lines, f'"{n}' if not n.startswith('"') else n, start)
            if k is None:
                k = find_line(lines, n, start)
            if k is not None:
                return base + k + 1
        return base + start + 1
    return at


def command_facts(sink: Sink, tokens: list[str], image: str | None, line: int, at) -> None:
    tokens = [str(t) for t in tokens if t is not None]
    if not tokens:
        return
    text = shlex.join(tokens)
    if facts_from_command_text(sink, text, line, at):
        return
    sink.add("launch_command", text, line)
    if isinstance(image, str) and "vllm" in image:  # the vllm-openai entrypoint is `vllm serve`: args alone are vLLM's
        opts, pos = parse_vllm_tokens(tokens)
        vllm_arg_facts(sink, opts, pos, at)


def parse_docker_inspect(sink: Sink, lines: list[str], base: int, command: str | None = None) -> None:
    try:
        doc = json.loads("\n".join(lines))
    except ValueError:
        doc = templated_inspect(lines, command)
        if doc is None:
            return
    start = 0
    for d in (doc if isinstance(doc, list) else [doc]):
        if not isinstance(d, dict):
            continue
        if d.get("Id"):
            start = find_line(lines, str(d["Id"]), start) or start
        at = _locator(lines, base, start)
        cfg, host = _d(d.get("Config")), _d(d.get("HostConfig"))
        state = d.get("State") if isinstance(d.get("State"), dict) else None
        image = cfg.get("Image") if isinstance(cfg.get("Image"), str) and not cfg["Image"].startswith("sha256:") else None
        tags = [t for t in _l(d.get("RepoTags")) if isinstance(t, str)]
        image = image or (tags[0] if tags else None)
        if image:
            sink.add("image", norm_image(image) if "@" in image else image, at(f'"{image}"'))
            sink.add("image_digest", digest_of(image), at(f'"{image}"'))
        for ref in _l(d.get("RepoDigests")):
            sink.add("image_digest", digest_of(str(ref)), at(str(ref)))
            break
        if isinstance(d.get("Image"), str) and d["Image"].startswith("sha256:"):
            sink.add("image_id", d["Image"], at('"Image": "sha256'))
        if state is not None:
            path = d.get("Path")
            args = [a for a in _l(d.get("Args")) if a is not None]
            if path or args:
                command_facts(sink, ([path] if isinstance(path, str) and path else []) + args, image, at('"Path"', '"Args"'), at)
        for item in _l(cfg.get("Env")):
            name, eq, val = str(item).partition("=")
            if eq:
                emit_env(sink, name, val, at(f'"{name}='))
        if isinstance(host.get("ShmSize"), int):
            sink.add("shm_size", host["ShmSize"], at('"ShmSize"'))
        if host.get("IpcMode"):
            sink.add("ipc_mode", host["IpcMode"], at('"IpcMode"'))
        if host.get("NetworkMode"):
            sink.add("network_mode", host["NetworkMode"], at('"NetworkMode"'))
        hn = cfg.get("Hostname")
        if isinstance(hn, str) and hn:
            # under --network host the container's hostname is its host's; else it is the container's own (its id,
            # or --hostname): a name its lines may print, never a node's. A hostname that is the container's own
            # name was given to it (--hostname, a compose service), not taken from its host
            own = hn == str(d.get("Name") or "").lstrip("/")
            if host.get("NetworkMode") == "host" and not own:
                sink.add("hostname", hn, at('"Hostname"'))
                if isinstance(d.get("Id"), str) and len(d["Id"]) >= 12:   # (its log, containers/ID/ID-json.log)
                    sink.add("container_node", f"{d['Id'][:12]} {hn}", at('"Hostname"'))
            else:
                sink.add("container_hostname", hn, at('"Hostname"'))
        if host.get("PidMode") == "host":
            # (with the container's id and name: its log file is named by one of them)
            sink.add("pid_mode", "host", at('"PidMode"'))
            names = [str(d[k]).lstrip("/") for k in ("Id", "Name") if isinstance(d.get(k), str) and d[k].strip("/")]
            if names:
                sink.add("host_pid_container", " ".join(names), at('"PidMode"'))
        if state:
            running = state.get("Running") is True or state.get("Status") == "running"
            # (an exit code is the last run's only where the state says it is not running: a format may omit that)
            if "ExitCode" in state and not running and ("Running" in state or "Status" in state):
                sink.add("exit_code", state["ExitCode"], at('"ExitCode"'))
                name = str(d.get("Name") or "").lstrip("/")
                sink.add("run_ended", f"{state['ExitCode']} {name} {image or ''}".strip(), at('"ExitCode"'))
            if state.get("Restarting") is True or state.get("Status") == "restarting":
                # (its restart policy starting it again now: what runs in it goes on being restarted)
                sink.add("restarting", f"{str(d.get('Name') or '').lstrip('/')} {image or ''}".strip(), at('"Status"'))
            if "OOMKilled" in state:
                sink.add("oom_killed", "true" if state["OOMKilled"] else "false", at('"OOMKilled"'))
            if state.get("OOMKilled"):
                sink.add("last_state_reason", "OOMKilled", at('"OOMKilled"'))
            elif state.get("Error"):
                sink.add("last_state_reason", state["Error"], at('"Error"'))
            elif not running and state.get("Status"):
                sink.add("last_state_reason", f"{state['Status']} (exit code {state.get('ExitCode')})", at('"Status"'))
        if isinstance(d.get("RestartCount"), int):
            sink.add("restart_count", d["RestartCount"], at('"RestartCount"'))


# ------------------------------------------------------------------------------------------
# pod specs
# ------------------------------------------------------------------------------------------
def _pod_specs(doc: object) -> list[tuple[dict, dict]]:
    """(pod spec, pod status) pairs inside a Pod, a workload, a List or a bare {spec: {containers}}."""
    if not isinstance(doc, dict):
        return []
    if doc.get("kind") == "List" or isinstance(doc.get("items"), list):
        return [p for it in _l(doc.get("items")) for p in _pod_specs(it)]
    if doc.get("kind") == "Event" or isinstance(doc.get("involvedObject"), dict):
        return []
    spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else doc
    status = _d(doc.get("status"))
    found = []
    for path in (("jobTemplate", "spec", "template", "spec"), ("template", "spec"), ("leaderWorkerTemplate",
                 "leaderTemplate", "spec"), ("leaderWorkerTemplate", "workerTemplate", "spec")):
        cur = spec
        for k in path:
            cur = cur.get(k) if isinstance(cur, dict) else None
        if isinstance(cur, dict) and isinstance(cur.get("containers"), list):
            found.append((cur, {}))   # (a LeaderWorkerSet has two: the leader's and the workers')
    if found:
        return found
    if isinstance(spec.get("containers"), list):
        return [(spec, status)]
    return []


def _load_docs(text: str) -> list[object]:
    s = text.lstrip()
    if s.startswith(("{", "[")):
        try:
            return [json.loads(text)]
        except ValueError:
            return []
    if yaml is None:
        return []
    try:
        return list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return []


def parse_pod_spec(sink: Sink, lines: list[str], base: int) -> None:
    text = "\n".join(lines)
    at = _locator(lines, base, 0)
    docs = _load_docs(text)
    if not docs and yaml is None:
        image_line = FACTS["yaml_image_line"]
        for i, ln in enumerate(lines):
            m = image_line.match(ln)
            if m:
                sink.add("image", m.group(1), base + i + 1)
        return
    for doc in docs:
        for spec, status in _pod_specs(doc):
            _one_pod(sink, spec, status, at)
    _where_pods_run(sink, lines, base, text, docs)


def _items(doc: object) -> list[dict]:
    """The objects of a List (or a bare list), else the object itself."""
    if isinstance(doc, list):
        return [x for x in doc if isinstance(x, dict)]
    if isinstance(doc, dict) and isinstance(doc.get("items"), list):
        return [x for x in doc["items"] if isinstance(x, dict)]
    return [doc] if isinstance(doc, dict) else []


def json_item_spans(text: str) -> list[tuple[int, int]]:
    """0-based (first, last) lines of each object of a JSON List's `items` (or of a top-level array), in order:
    what the lines of one Kubernetes object are, so that each line can be told which object it belongs to."""
    spans, stack, line, in_str, esc, key, last_str = [], [], 0, False, False, None, None
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            else:
                if ch == "\n":
                    line += 1
                if len(last_str) < 16:
                    last_str += ch
            continue
        if ch == "\n":
            line += 1
        elif ch == '"':
            in_str, last_str = True, ""
        elif ch == ":":
            key = last_str
        elif ch in "[{":
            parent = stack[-1] if stack else None
            is_item = ch == "{" and parent is not None and parent[0] == "[" and (parent[1] == "items" or len(stack) == 1)
            stack.append((ch, key if ch == "[" else None, line if is_item else None))
            key = None
        elif ch in "]}":
            if stack:
                _, _, start = stack.pop()
                if start is not None:
                    spans.append((start, line))
        elif ch == ",":
            key = None
    return spans


def _where_pods_run(sink: Sink, lines: list[str], base: int, text: str, docs: list[object]) -> None:
    """Which pod runs on which node, and which node each line of a List is about: pods (metadata.name,
    spec.nodeName, status.podIP / hostIP, spec.hostPID) and Kubernetes events (kubectl get events -o json: the
    event's involvedObject, its kubelet's source.host). A pod name is never a node name."""
    objs = [o for d in docs for o in _items(d)]
    spans = json_item_spans(text) if text.lstrip().startswith(("{", "[")) else []
    by_span = len(spans) == len(objs) and objs and any(isinstance(d, dict) and isinstance(d.get("items"), list)
                                                       or isinstance(d, list) for d in docs)
    start = 0
    for k, o in enumerate(objs):
        meta, spec, status = _d(o.get("metadata")), _d(o.get("spec")), _d(o.get("status"))
        first, last = spans[k] if by_span else (None, None)
        if by_span:
            start = first
        elif isinstance(meta.get("name"), str):
            start = find_line(lines, str(meta["name"]), start) or start
        at = _locator(lines, base, start)
        if o.get("kind") == "Event" or isinstance(o.get("involvedObject"), dict):
            _one_event(sink, o, at, first, last, base)
            continue
        name, node = meta.get("name"), spec.get("nodeName")
        if not isinstance(name, str) or not (isinstance(spec.get("containers"), list) or node):
            continue
        sink.add("pod_name", name, at("name"))
        if isinstance(spec.get("hostname"), str):
            sink.add("pod_name", spec["hostname"], at("hostname"))
        if isinstance(node, str) and node:
            sink.add("pod_node", f"{name} {node}", at("nodeName"))
            if isinstance(spec.get("hostname"), str):
                sink.add("pod_node", f"{spec['hostname']} {node}", at("hostname"))
            # (its uid: the pod whose log folder holds it, whichever later pod of the same name a listing shows)
            if isinstance(meta.get("uid"), str) and meta["uid"]:
                sink.add("pod_node", f"{meta['uid']} {node}", at(meta["uid"]))
            if by_span:
                sink.add("span_node", f"{base + first + 1} {base + last + 1} {node} the spec.nodeName of pod {name}",
                         at("nodeName"))
            if isinstance(status.get("hostIP"), str):
                sink.add("node_ip", f"{node} {status['hostIP']}", at("hostIP"))
            # each container's id, now and in its last state: a log saved under that id is that node's
            for cs in map(_d, _l(status.get("containerStatuses"))):
                for cid in (cs.get("containerID"), _d(_d(cs.get("lastState")).get("terminated")).get("containerID")):
                    if isinstance(cid, str) and (short := cid.rpartition("://")[2]):
                        sink.add("pod_node", f"{short} {node}", at(short))
        for ip in [status.get("podIP"), *[_d(x).get("ip") for x in _l(status.get("podIPs"))]]:
            if isinstance(ip, str) and ip and not (spec.get("hostNetwork") and ip == status.get("hostIP")):
                sink.add("pod_ip", f"{name} {ip}", at("podIP"))
        if spec.get("hostPID") is True:
            sink.add("pid_mode", "host", at("hostPID"))


def _one_event(sink: Sink, o: dict, at, first: int | None, last: int | None, base: int) -> None:
    """One Kubernetes event object: the node it is about (a Node object's name, else the kubelet that reported
    it, else the pod it is about, resolved by attribution) over its lines; a Scheduled event's pod -> node."""
    inv, src = _d(o.get("involvedObject")), _d(o.get("source"))
    message = o.get("message") if isinstance(o.get("message"), str) else ""
    if m := FACTS["scheduled_event"].search(message):
        sink.add("pod_node", f"{m.group('pod')} {m.group('node')}", at("Successfully assigned"))
    if inv.get("kind") == "Pod" and isinstance(inv.get("name"), str):
        sink.add("pod_name", inv["name"], at("involvedObject"))
    if first is None:
        return
    # the event's time over its lines (a pretty-printed object's message line carries none): when it was first seen
    meta = _d(o.get("metadata"))
    when = next((t for t in (o.get("eventTime"), o.get("firstTimestamp"), o.get("lastTimestamp"),
                             meta.get("creationTimestamp")) if isinstance(t, str) and t), None)
    if when and " " not in when:
        sink.add("span_time", f"{base + first + 1} {base + last + 1} {when}", base + first + 1)
    node, how = None, ""
    if inv.get("kind") == "Node" and isinstance(inv.get("name"), str):
        node, how = inv["name"], "the event's involvedObject (a Node)"
    elif isinstance(src.get("host"), str) and src["host"]:
        node, how = src["host"], "the event's source.host"
    elif o.get("reportingComponent") == "kubelet" and isinstance(o.get("reportingInstance"), str):
        node, how = o["reportingInstance"], "the event's reportingInstance (its kubelet)"
    elif inv.get("kind") == "Pod" and isinstance(inv.get("name"), str):
        node, how = f"pod/{inv['name']}", f"the event's pod {inv['name']}"
    if node:
        sink.add("span_node", f"{base + first + 1} {base + last + 1} {node} {how}", base + first + 1)


def _one_pod(sink: Sink, spec: dict, status: dict, at) -> None:
    if spec.get("nodeName"):
        sink.add("node_name", spec["nodeName"], at("nodeName"))
    if spec.get("hostIPC") is True:
        sink.add("ipc_mode", "host", at("hostIPC"))
    for label, value in _d(spec.get("nodeSelector")).items():
        if FACTS["nvlink_clique_label"].match(str(label)) and str(value or "").strip():
            sink.add("mnnvl", "true", at(str(label)))   # (pinned to one clique: its nodes share NVLink)
    shm_volumes = {}
    for v in _l(spec.get("volumes")):
        ed = _d(_d(v).get("emptyDir"))
        if ed.get("medium") == "Memory":
            shm_volumes[v.get("name")] = ed.get("sizeLimit")
    for c in _l(spec.get("containers")):
        if not isinstance(c, dict):
            continue
        image = c.get("image") if isinstance(c.get("image"), str) else None
        if image:
            sink.add("image", norm_image(image) if "@" in image else image, at(f"image: {image}", image))
            sink.add("image_digest", digest_of(image), at(image))
        cmd = [str(x) for x in (*_l(c.get("command")), *_l(c.get("args"))) if x is not None]
        if len(cmd) == 1 and " " in cmd[0]:  # command: "vllm serve m --flag" written as one string
            cmd = shlex.split(cmd[0]) if cmd[0].count('"') % 2 == 0 and cmd[0].count("'") % 2 == 0 else cmd[0].split()
        if cmd:
            command_facts(sink, cmd, image, at("args:", "command:"), at)
        for e in _l(c.get("env")):
            if isinstance(e, dict) and e.get("name"):
                val = e.get("value") if "value" in e else "<from " + ", ".join(sorted(e.get("valueFrom") or {})) + ">"
                emit_env(sink, str(e["name"]), str(val), at(f"name: {e['name']}", e["name"]))
        limits = _d(_d(c.get("resources")).get("limits"))
        if "nvidia.com/gpu" in limits:
            sink.add("gpu_request", limits["nvidia.com/gpu"], at("nvidia.com/gpu"))
        for mnt in _l(c.get("volumeMounts")):
            if isinstance(mnt, dict) and mnt.get("mountPath") == "/dev/shm" and mnt.get("name") in shm_volumes:
                size = shm_volumes[mnt["name"]]
                sink.add("shm_size", parse_size(str(size)) if size else "unlimited", at("sizeLimit", "/dev/shm"))
    if isinstance(status.get("startTime"), str) and (started := parse_date(status["startTime"])):
        sink.add("pod_started", started, at("startTime"))
    for cs in _l(status.get("containerStatuses")):
        if not isinstance(cs, dict):
            continue
        if "restartCount" in cs:
            sink.add("restart_count", cs["restartCount"], at("restartCount"))
        term = _d(_d(cs.get("lastState")).get("terminated"))
        if term:
            sink.add("last_state_reason", term.get("reason"), at("reason:"))
            sink.add("exit_code", term.get("exitCode"), at("exitCode"))
            sink.add("run_ended", f"{term.get('exitCode')} {cs.get('name') or ''} {cs.get('image') or ''}".strip(),
                     at("exitCode"))
            if term.get("reason") == "OOMKilled":
                sink.add("oom_killed", "true", at("OOMKilled"))
        sink.add("image_digest", digest_of(str(cs.get("imageID") or "")), at("imageID"))


# ------------------------------------------------------------------------------------------
# Docker Compose files
# ------------------------------------------------------------------------------------------
def parse_schedulings(sink: Sink, lines: list[str], base: int) -> None:
    """A pod put on a node again and again ('Successfully assigned NS/POD to NODE' events, each a new pod of the same
    name: a LeaderWorkerSet recreating its group, a StatefulSet's pod deleted), or a controller's pods made again
    at later times (SuccessfulCreate events of one ReplicaSet: its pods' names are its own and a suffix) was
    restarted by its orchestrator, whose restart count (`restart_count`) stays 0 for a pod made anew: the
    schedulings, or the times of creation, after the first are its restarts. (Pods made at one time are replicas.)"""
    seen: dict[str, list[int]] = {}
    made: dict[str, dict[str, int]] = {}
    for i, line in enumerate(lines):
        if m := FACTS["scheduled_event"].search(line):   # (a listed event happened as often as its count says)
            c = FACTS["event_row_count"].search(line)
            n = int(c.group("count") or c.group("times")) if c else 1
            seen.setdefault(f"{m.group('ns')}/{m.group('pod')}", []).extend([base + i + 1] * min(n, 1000))
        elif m := FACTS["created_pod_event"].search(line):
            made.setdefault(m.group("pod").rpartition("-")[0], {}).setdefault(m.group("when"), base + i + 1)
    for at in [*seen.values(), *(sorted(times.values()) for times in made.values())]:
        if len(at) >= 2:
            sink.add("restart_count", str(len(at) - 1), at[-1])


def parse_compose(sink: Sink, lines: list[str], base: int) -> None:
    """Each service of a Compose file (anchors and `<<` merges resolved): its image, the command it runs
    (entrypoint + command; for a vllm-openai image the command is `vllm serve`'s arguments), its
    environment, /dev/shm size, IPC and network modes, the host's GPUs it is given."""
    docs = _load_docs("\n".join(lines))
    services = _d(_d(docs[0]).get("services")) if docs else {}
    start = find_line(lines, "services:", 0) or 0
    for name, svc in services.items():
        if not isinstance(svc, dict):
            continue
        start = find_line(lines, f"{name}:", start) or start  # a service's lines follow its name
        at = _locator(lines, base, start)
        image = svc.get("image") if isinstance(svc.get("image"), str) else None
        if image:
            sink.add("image", norm_image(image) if "@" in image else image, at(f"image: {image}", image))
            sink.add("image_digest", digest_of(image), at(image))
        cmd = [*_compose_argv(svc.get("entrypoint")), *_compose_argv(svc.get("command"))]
        if cmd:
            command_facts(sink, cmd, image, at("command:", "entrypoint:"), at)
        env = svc.get("environment")
        # a mapping, or 'KEY=value' items ('KEY' alone passes the host's value on: not known here)
        items = env.items() if isinstance(env, dict) else [str(e).split("=", 1) for e in _l(env) if "=" in str(e)]
        for key, val in items:
            if val is not None:
                emit_env(sink, str(key), str(val), at(f"{key}:", f"{key}="))
        if svc.get("shm_size") is not None:
            size = svc["shm_size"]
            sink.add("shm_size", size if isinstance(size, int) else parse_size(str(size), docker=True), at("shm_size"))
        for key, fact in (("ipc", "ipc_mode"), ("network_mode", "network_mode")):
            if isinstance(svc.get(key), str):
                sink.add(fact, svc[key], at(f"{key}:"))
        # the host's GPUs the service gets (its CUDA devices 0, 1, ... in that order), where its own environment
        # does not name them again
        devices = _l(_d(_d(_d(svc.get("deploy")).get("resources")).get("reservations")).get("devices"))
        ids = [str(i) for d in devices if isinstance(d, dict) for i in _l(d.get("device_ids"))]
        if ids and all(i.isdigit() for i in ids) and "CUDA_VISIBLE_DEVICES" not in {str(k) for k, _ in items}:
            sink.add("cuda_visible_devices", ",".join(ids), at("device_ids"))


def _compose_argv(value: object) -> list[str]:
    """A Compose command or entrypoint (a list, or a string split as a shell would) as argv."""
    if isinstance(value, list):
        return [str(x) for x in value if x is not None]
    return tokenize(value) if isinstance(value, str) else []
