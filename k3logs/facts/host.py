"""Facts from host dumps: lsmod, ibstat / ibv_devinfo / ibdev2netdev, date / uptime, ip addr / ifconfig,
ps, Prometheus /metrics, collector manifests, and a few one-line outputs (uname -r, ofed_info -s,
/proc/driver/nvidia/version)."""
from __future__ import annotations

import json
import re
import tomllib
from datetime import datetime, timedelta, timezone

from k3logs.catalogue.witnesses import builtin_witnesses
from k3logs.ingest.dumps import prompt_of

from .cmdline import facts_from_command_text
from .util import FACTS, Sink, parse_date, tz_suffix


def parse_lsmod(sink: Sink, lines: list[str], base: int) -> None:
    mods: dict[str, int] = {}
    header = None
    lsmod_header, lsmod_row = FACTS["lsmod_header"], FACTS["lsmod_row"]
    for i, ln in enumerate(lines):
        if header is None and lsmod_header.match(ln):
            header = base + i + 1
            continue
        m = lsmod_row.match(ln)
        if m:
            mods.setdefault(m.group(1), base + i + 1)
    if header is None and not mods:
        return
    where = header or base + 1
    peer = mods.get("nvidia_peermem") or mods.get("nv_peer_mem")
    sink.add("nvidia_peermem_loaded", "true" if peer else "false", peer or where)
    mlx = mods.get("mlx5_core") or mods.get("mlx5_ib")
    sink.add("mlx5_loaded", "true" if mlx else "false", mlx or where)
    if "nvidia" in mods:
        sink.add("nvidia_module_loaded", "true", mods["nvidia"])


_PORT_STATE = {"PORT_ACTIVE": "Active", "PORT_DOWN": "Down", "PORT_INIT": "Initializing", "PORT_ARMED": "Armed"}


def parse_ibstat(sink: Sink, lines: list[str], base: int) -> None:
    ca, port = None, None
    ca_rx, hca_rx, port_rx, ibv_port = FACTS["ibstat_ca"], FACTS["ibv_hca_id"], FACTS["ibstat_port"], FACTS["ibv_port"]
    state_rx, ibv_state, link_layer = FACTS["ibstat_state"], FACTS["ibv_state"], FACTS["ib_link_layer"]
    netdev_row = FACTS["ibdev2netdev_row"]
    for i, ln in enumerate(lines):
        no = base + i + 1
        m = ca_rx.match(ln) or hca_rx.match(ln)
        if m:
            ca, port = m.group(1), None
            sink.add("interconnect", "rdma", no)
            continue
        m = port_rx.match(ln) or ibv_port.match(ln)
        if m:
            port = m.group(1)
            continue
        m = state_rx.match(ln) or ibv_state.match(ln)
        if m and ca and port:
            sink.add("ib_port_state", f"{ca}/{port}={_PORT_STATE.get(m.group(1), m.group(1))}", no)
            continue
        m = link_layer.match(ln)
        if m and ca and port:
            sink.add("ib_link_layer", f"{ca}/{port}={m.group(1)}", no)
            continue
        m = netdev_row.match(ln)  # ibdev2netdev
        if m:
            sink.add("interconnect", "rdma", no)
            sink.add("ib_port_state", f"{m.group(1)}/{m.group(2)}={'Active' if m.group(4) == 'Up' else 'Down'}", no)


# ------------------------------------------------------------------------------------------
# date / uptime
# ------------------------------------------------------------------------------------------
def _uptime_seconds(text: str) -> int | None:
    # splits the up-time an uptime line gave (12 days,  3:04) into numbers
    days = re.search(r"(\d+)\s+days?", text)
    hm = re.search(r"(\d+):(\d\d)", text)
    mins = re.search(r"(\d+)\s+min", text)
    hours = re.search(r"(\d+)\s+hours?", text)
    if not (days or hm or mins or hours):
        return None
    s = int(days.group(1)) * 86400 if days else 0
    s += int(hm.group(1)) * 3600 + int(hm.group(2)) * 60 if hm else 0
    s += int(mins.group(1)) * 60 if mins else 0
    s += int(hours.group(1)) * 3600 if hours else 0
    return s


def _minus(iso: str, seconds: float) -> str | None:
    try:
        t = datetime.fromisoformat(iso) - timedelta(seconds=seconds)
    except ValueError:
        return None
    return t.replace(microsecond=0).isoformat()


def _east_seconds(off: str) -> int:
    """'+0200' or '+02:00' -> 7200: seconds east of UTC."""
    hh, mm = off[1:3], off[-2:]
    return (1 if off[0] == "+" else -1) * (int(hh) * 3600 + int(mm) * 60)


def parse_uptime(sink: Sink, lines: list[str], base: int, command: str | None = None) -> None:
    now = boot = None
    up, up_exact = None, False
    proc_uptime, uptime_line, btime = FACTS["proc_uptime"], FACTS["uptime_line"], FACTS["proc_stat_btime"]
    since_command, since_output = FACTS["uptime_since_command"], FACTS["uptime_since_output"]
    for i, ln in enumerate(lines):
        no, s = base + i + 1, ln.strip()
        if not s:
            continue
        p = prompt_of(ln)
        if p:  # several commands in one transcript: each output is read under its own command
            command = p.group("cmd")
            continue
        m = btime.match(s)
        if m:   # (the kernel's own boot time, in UTC: nothing to carry over)
            boot = (datetime.fromtimestamp(int(m.group("epoch")), timezone.utc).isoformat(), no)
            continue
        m = proc_uptime.match(s)
        if m:
            up, up_exact = (float(m.group("s")), no), True
            continue
        m = uptime_line.match(s)
        if m or s.startswith("up "):
            secs = _uptime_seconds(m.group("up") if m else s)
            if secs is not None and not up_exact:
                up = (secs, no)
            continue
        iso = parse_date(s)
        if not iso:
            continue
        if since_output.match(s) and (since_command.search(command or "") or not command):
            boot = (iso, no)  # `uptime -s` prints the boot time in the host's local time (another command of the
            # same prompt, `uptime -s; date`, prints the time now)
        elif now is None:
            now = (iso, no, command)
    if now:
        sink.add("collected_at", now[0], now[1])
        # (a `date` that prints its zone, not asked for UTC, says the host's zone: what its local times are in)
        if (off := re.search(r"[+-]\d\d:\d\d$", now[0])) and not re.search(r"\s-u\b|--utc", now[2] or ""):
            sink.add("utc_offset", str(_east_seconds(off.group(0))), now[1])
    if up:
        sink.add("uptime_seconds", f"{up[0]:g}" if isinstance(up[0], float) else up[0], up[1])
    if boot:  # the zone of our own ISO time, carried over to the boot time
        tz = re.search(r"[+-]\d\d:\d\d$", now[0]) if now else None
        sink.add("boot_time", boot[0] + (tz.group(0) if tz and not re.search(r"[+-]\d\d:\d\d$", boot[0]) else ""),
                 boot[1])
    elif now and up:
        sink.add("boot_time", _minus(now[0], up[0]), up[1])


# ------------------------------------------------------------------------------------------
# ip addr / ip -br addr / ifconfig
# ------------------------------------------------------------------------------------------
def _prefix_len(mask: str) -> int | None:
    try:
        return sum(bin(int(x)).count("1") for x in mask.split("."))
    except ValueError:
        return None


def parse_ip(sink: Sink, lines: list[str], base: int) -> None:
    iface = None
    inet = FACTS["inet_address"]
    link_header, ifc_header = FACTS["ip_link_header"], FACTS["ifconfig_header"]
    encap_header = FACTS["ifconfig_encap_header"]
    brief_row, brief_address = FACTS["ip_brief_row"], FACTS["ip_brief_address"]
    for i, ln in enumerate(lines):
        no = base + i + 1
        m = link_header.match(ln) or ifc_header.match(ln) or encap_header.match(ln)
        if m:
            iface = m.group(1)
            continue
        m = inet.match(ln)
        if m and iface:
            plen = m.group(2) or (_prefix_len(m.group(3)) if m.group(3) else None)
            _ip(sink, iface, m.group(1), plen, no)
            continue
        m = brief_row.match(ln)
        if m:
            for addr, plen in brief_address.findall(m.group(2)):
                _ip(sink, m.group(1).split("@", 1)[0], addr, plen, no)


def _ip(sink: Sink, iface: str, addr: str, plen, no: int) -> None:
    if addr.startswith("127."):
        return
    sink.add("ip", f"{iface}={addr}" + (f"/{plen}" if plen is not None else ""), no)


# ------------------------------------------------------------------------------------------
# systemctl status
# ------------------------------------------------------------------------------------------
def parse_systemctl_status(sink: Sink, lines: list[str], base: int) -> None:
    """How the unit's main process ended: 'Main PID: 1876511 (code=exited, status=1/FAILURE)' (its exit
    code), or 'code=killed, signal=KILL'."""
    main_pid, unit = FACTS["systemd_main_pid"], FACTS["systemd_unit_header"]
    block: list[str] = []   # (the unit's lines so far: its name, description and ExecStart say whose it is)
    for i, ln in enumerate(lines):
        if unit.match(ln):
            block = []
        block.append(ln)
        if m := main_pid.match(ln):
            sink.add("last_state_reason", f"{m['code']}, {m['what']}={m['val']}", base + i + 1)
            if m["what"] == "status" and (code := m["val"].split("/", 1)[0]).isdigit():
                sink.add("exit_code", code, base + i + 1)
                sink.add("run_ended", f"{code} " + " ".join(b.strip() for b in block[:-1]), base + i + 1)


# ------------------------------------------------------------------------------------------
# ps
# ------------------------------------------------------------------------------------------
def parse_ps(sink: Sink, lines: list[str], base: int) -> None:
    """ps -ef / aux / -o ...,args: the command is the last column; the columns before it hold no spaces."""
    before = None
    pid_col, command_col = FACTS["ps_header_pid"], FACTS["ps_header_command"]
    vllm_command, relevant = FACTS["ps_vllm_command"], FACTS["ps_relevant_command"]
    for i, ln in enumerate(lines):
        no = base + i + 1
        if before is None:
            if pid_col.search(ln) and command_col.search(ln):
                before = len(ln.split()) - 1
            continue
        parts = ln.split(None, before)
        if len(parts) <= before:
            continue
        cmd = parts[before].strip()
        if vllm_command.search(cmd):
            facts_from_command_text(sink, cmd, no)
        if relevant.search(cmd):
            sink.add("process", " ".join(parts[:before]) + " " + cmd, no)


# ------------------------------------------------------------------------------------------
# Prometheus /metrics
# ------------------------------------------------------------------------------------------
_KEEP = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "vllm:num_requests_running",
         "vllm:num_requests_waiting", "vllm:num_preemptions", "vllm:prefix_cache_queries", "vllm:prefix_cache_hits",
         "vllm:prompt_tokens_cached", "vllm:gpu_prefix_cache_queries", "vllm:gpu_prefix_cache_hits")


def parse_prometheus(sink: Sink, lines: list[str], base: int) -> None:
    totals: dict[str, float] = {}
    sample, label = FACTS["prometheus_sample"], FACTS["prometheus_label"]
    for i, ln in enumerate(lines):
        m = sample.match(ln)
        if not m:
            continue
        no, name = base + i + 1, m.group("name")
        labels = dict(label.findall(m.group("labels") or ""))
        if name == "vllm:cache_config_info":
            if "enable_prefix_caching" in labels:
                sink.add("prefix_caching", labels["enable_prefix_caching"].lower(), no)
            if "gpu_memory_utilization" in labels:
                sink.add("gpu_memory_utilization", labels["gpu_memory_utilization"], no)
            continue
        if "model_name" in labels:
            sink.add("served_model_name", labels["model_name"], no)
        short = re.sub(r"_total$", "", name)  # a counter's name without its suffix
        if short not in _KEEP:
            continue
        engine = labels.get("engine")
        key = f"metric:{short}" + (f"{{engine={engine}}}" if engine not in (None, "0") else "")
        sink.add(key, m.group("value"), no)
        try:
            totals[short] = totals.get(short, 0.0) + float(m.group("value"))
        except ValueError:
            pass
    q = totals.get("vllm:prefix_cache_queries") or totals.get("vllm:gpu_prefix_cache_queries")
    h = totals.get("vllm:prefix_cache_hits", totals.get("vllm:gpu_prefix_cache_hits"))
    if q and h is not None:
        line = next((f.line for f in sink.facts if f.name.startswith("metric:vllm:prefix_cache_hits")), None)
        sink.add("prefix_cache_hit_rate", f"{h / q:.4f}", line)


# ------------------------------------------------------------------------------------------
# manifests, other JSON, one-line outputs
# ------------------------------------------------------------------------------------------
_MANIFEST_MAP = {"node": "node_name", "node_name": "node_name", "hostname": "hostname", "collected_at": "collected_at",
                 "image": "image", "image_digest": "image_digest", "boot_time": "boot_time"}


def parse_manifest(sink: Sink, lines: list[str], base: int) -> None:
    text = "\n".join(lines)
    try:
        doc = json.loads(text) if text.lstrip().startswith("{") else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError):
        return
    man = doc.get("k3logs_manifest") if isinstance(doc, dict) else None
    if not isinstance(man, dict):
        return
    for key, val in man.items():
        if isinstance(val, (str, int, float)) and not isinstance(val, bool):  # the line naming it
            k = next((base + i + 1 for i, ln in enumerate(lines) if re.search(rf'["\s]?{re.escape(key)}["\s]*[:=]', ln)),
                     base + 1)
            sink.add(_MANIFEST_MAP.get(key, f"manifest:{key}"), val, k)


def parse_misc(sink: Sink, lines: list[str], base: int, command: str | None) -> None:
    """One-line outputs worth keeping from a shell transcript: kernel, OFED, kernel-module driver version."""
    cmd = command or ""
    if m := FACTS["kubectl_pod_shell"].search(cmd) or FACTS["kubectl_described_pod"].search(cmd):
        sink.add("pod_name", m.groupdict().get("copy") or m.group("pod"), max(base, 1))
    body = [(base + i + 1, ln.strip()) for i, ln in enumerate(lines) if ln.strip()]
    if not body:
        return
    no, first = body[0]
    if FACTS["uname_r_command"].search(cmd) and FACTS["kernel_release"].match(first):
        sink.add("kernel_version", first, no)
    elif FACTS["ofed_info_command"].search(cmd):
        sink.add("ofed_version", first.rstrip(":"), no)
    elif FACTS["hostname_ip_command"].search(cmd):
        if FACTS["hostname_output"].fullmatch(first) and not FACTS["ipv4"].search(first):   # ('hostname; hostname -I')
            sink.add("hostname", first, no)
        for ip in FACTS["ipv4"].findall(" ".join(t for _, t in body)):
            if not ip.startswith("127."):
                sink.add("ip", f"hostname={ip}", no)
    elif FACTS["hostname_command"].search(cmd) and FACTS["hostname_output"].fullmatch(first):
        sink.add("hostname", first, no)
    elif FACTS["docker_info_command"].search(cmd):
        fmt = FACTS["docker_info_format"].search(cmd)
        if fmt and fmt.group(1) == "Name" and FACTS["host_name_word"].match(first.split()[0]):
            sink.add("hostname", first.split()[0], no)
        for n, s_ in body:
            m = FACTS["docker_info_name"].match(s_)
            if m:
                sink.add("hostname", m.group(1), n)
    nvrm = FACTS["nvrm_version"]
    for no, s in body:
        m = nvrm.search(s)
        if m:
            sink.add("driver_version", m.group(1), no)
            sink.add("driver_branch", m.group(1).split(".", 1)[0], no)


def iso_reading(ts: str) -> str:
    """A `date` reading as ISO 8601: '2026-11-19 11:33:55.02 UTC' is 2026-11-19T11:33:55.02+00:00."""
    for zone in (" UTC", " GMT"):
        if ts.endswith(zone):
            ts = ts[:-len(zone)] + "+00:00"
    return ts.replace(" ", "T", 1)


def add_host_ips(sink: Sink, ln: str, no: int, forms) -> None:
    """The host <-> IP ties line `ln` writes in any of `forms` ([[host_ip]]), as `host_ip` facts."""
    w = builtin_witnesses()
    for hi in forms:
        for m in hi.regex.finditer(ln):
            host, ip = m.group("host"), m.group("ip")
            if host and ip and not ip.startswith("127.") and w.is_host(host) and w.is_host(host.split(".", 1)[0]):
                sink.add("host_ip", f"{host.split('.', 1)[0]} {ip}", no)
                if hi.name == "etc_hosts":  # every name on an /etc/hosts line is that address's
                    for alias in ln.split("#", 1)[0].split()[2:]:
                        if w.is_host(alias):
                            sink.add("host_ip", f"{alias.split('.', 1)[0]} {ip}", no)


def parse_host_ips(sink: Sink, lines: list[str], base: int) -> None:
    """Host names written next to their IP (patterns/attribution.toml [[host_ip]]: 'node-b (10.0.0.2)',
    'gpu-b2 = 10.42.0.62', /etc/hosts lines): what ties a Ray `ip=` or a node address to a host. Also what a
    text says about where it comes from ([[line_witness]] of kind file_host: `uname -a`, 'collected on HOST'),
    and a process's host and container pids (NSpid)."""
    w = builtin_witnesses()
    file_hosts = w.of_kind("file_host")
    nspid = w.of_kind("pid_ns")
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    dotted = FACTS["ipv4_inside"]
    for i, ln in enumerate(lines):
        no = base + i + 1
        if dotted.search(ln):   # (every tie holds an address: most lines hold none)
            add_host_ips(sink, ln, no, w.host_ips)
        for lw in file_hosts:
            if lw.first_line and i != first:
                continue
            if lw.prefilter_in(ln) and (m := lw.regex.search(ln)) and w.is_host(m.group("host")):
                sink.add("uname_host" if lw.name == "uname" else "provenance", m.group("host"), no)
        for lw in nspid:
            if lw.prefilter_in(ln) and (m := lw.regex.search(ln)):
                sink.add("nspid", f"{m.group('host_pid')} {m.group('pid')}", no)


def parse_inventory(sink: Sink, lines: list[str], base: int) -> None:
    """An inventory table (CSV or TSV whose header names a host column: `hostname`, `host`, `node`, ...): each row
    ties its host to the row's other names, a rack slot, an asset tag (`host_alias`: a folder named so is that
    host's), and to its addresses (`host_ip`)."""
    w, column, dotted = builtin_witnesses(), FACTS["inventory_host_column"], FACTS["ipv4_inside"]
    header, sep = None, ","
    for i, ln in enumerate(lines):
        if header is None:
            sep = "\t" if "\t" in ln else ","
            cells = [c.strip().strip('"') for c in ln.split(sep)]
            if len(cells) >= 2 and (hc := next((k for k, c in enumerate(cells) if column.match(c)), None)) is not None:
                header = (len(cells), hc)
            continue
        cells = [c.strip().strip('"') for c in ln.split(sep)]
        if len(cells) != header[0] or not w.is_host(host := cells[header[1]]):
            continue
        for k, c in enumerate(cells):
            if k == header[1] or not c:
                continue
            if dotted.fullmatch(c):
                sink.add("host_ip", f"{host} {c}", base + i + 1)
            elif FACTS["inventory_name"].match(c):
                sink.add("host_alias", f"{c} {host}", base + i + 1)


def parse_clocks(sink: Sink, lines: list[str], base: int) -> None:
    """Clock evidence: chrony's 'System time : X seconds fast|slow of NTP time' (a host's error) and the
    same `date` taken on several hosts at once (pdsh / clush 'host: <time>' lines: of two hosts or more, or of
    one whose name holds a digit; a note's lone 'collected-at: <time>' names a key, not a host; a bare time a
    command run through `ssh HOST` printed is HOST's)."""
    chrony, date_reading, zone = FACTS["chrony_offset"], FACTS["host_date_reading"], FACTS["timedatectl_zone"]
    boots, ntp, queried = FACTS["list_boots_current"], FACTS["ntp_query_offset"], False
    said_boot, title = FACTS["boot_time_said"], FACTS["process_title_row"]
    readings, via = [], None   # (via: the host the command typed last runs on through ssh, whose output follows)
    # (chrony that never synchronised, reference 00000000, says 0 s off of a time it never had: no measurement)
    adrift = {m.group("host") for ln in lines if (m := FACTS["chrony_unsynchronised"].match(ln.strip()))}
    for i, ln in enumerate(lines):
        if (typed := prompt_of(ln)) is not None:
            via = m.group("host") if (m := FACTS["ssh_command_host"].match(typed.group("cmd"))) else None
            continue
        if "VLLM::" in ln and (m := title.match(ln)):   # (a host's process listing: pid -> the worker it is)
            sink.add("process_title", f"{m.group('pid')} {m.group('title')}", base + i + 1)
            continue
        if (m := boots.match(ln) or said_boot.search(ln)):   # the current boot's first journal entry (when the
            # kernel started), or a boot time a note states
            sink.add("boot_time", m.group("first").replace(" ", "T") + tz_suffix(m.group("tz")), base + i + 1)
            continue
        if (m := zone.match(ln)):   # +0200 -> 7200 (seconds east of UTC); the zone's name keeps its DST rules
            sink.add("utc_offset", str(_east_seconds(m.group("off"))), base + i + 1)
            sink.add("utc_zone", m.group("zone"), base + i + 1)
            continue
        if (m := chrony.match(ln.strip())) and m.group("host") not in adrift:
            sec = float(m.group("sec")) * (1 if m.group("dir") == "fast" else -1)
            sink.add("clock_offset", f"{m.group('host') or via or ''} {sec}".strip(), base + i + 1)
            continue
        if (m := ntp.match(ln.strip())) and not queried:   # (`ntpdate -q`: its server line, then its verdict)
            queried = True
            sec = -float(m.group("sec") or m.group("sec2"))   # (the server's time minus the host's)
            sink.add("clock_offset", f"{m.group('host') or ''} {sec}".strip(), base + i + 1)
            continue
        if m := date_reading.match(ln.strip()) or (via and FACTS["bare_date_reading"].match(ln.strip())):
            readings.append((m.groupdict().get("host") or via, m.group("ts"), base + i + 1))
    several = len({host for host, _, _ in readings}) > 1
    for host, ts, no in readings:
        if several or any(c.isdigit() for c in host):
            sink.add("clock_reading", f"{host} {iso_reading(ts)}", no)
