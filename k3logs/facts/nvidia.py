"""Facts from nvidia-smi: the default table (wide and narrow layouts, failed output), -q (text and XML),
topo -m, and --query-gpu / --query-compute-apps CSV."""
from __future__ import annotations

import re
from collections import Counter

from k3logs.catalogue.regexes import Regexes

from .util import FACTS, Sink, norm_bus_id, parse_date

INGEST = Regexes("ingest.toml")  # smi_fail, smi_list_line, smi_csv_field: how ingest tells nvidia-smi output


def _driver(sink: Sink, version: str, line: int) -> None:
    sink.add("driver_version", version, line)
    sink.add("driver_branch", version.split(".", 1)[0], line)


def _gpu_list(sink: Sink, gpus: list[tuple[int, str, str | None, str | None, int]], count: bool = True,
              serials: dict[int, str] | None = None) -> None:
    """gpus: (index, name, bus id, uuid, line) in any order; `serials`: board serial by index."""
    if not gpus:
        return
    gpus = sorted(gpus, key=lambda g: g[0])
    line = gpus[0][4]
    names = [g[1] for g in gpus if g[1]]
    if names:
        common = [n for n, _ in Counter(names).most_common()]
        sink.add("gpu_model", common[0] if len(common) == 1 else ", ".join(common), line)
    if count:
        sink.add("gpu_count", len(gpus), line)
    buses = [norm_bus_id(g[2]) for g in gpus if g[2]]
    # (bus ids by position: only where the indices are 0..n-1, a GPU nvidia-smi could not open leaves a gap)
    if buses and all(buses) and len(buses) == len(gpus) and [g[0] for g in gpus] == list(range(len(gpus))):
        sink.add("gpu_bus_ids", ",".join(buses), line)
    uuids = [g[3] for g in gpus if g[3]]
    if uuids and len(uuids) == len(gpus):
        sink.add("gpu_uuids", ",".join(uuids), line)
    serials = serials or {}
    for g in gpus:   # each GPU's names, index <-> bus id <-> UUID <-> board serial (attribution's GPU identity)
        _identity(sink, g[0], g[2], g[3], serials.get(g[0]), g[4])


def _identity(sink: Sink, index: int | None, bus: str | None, uuid: str | None, serial: str | None, line: int,
              minor: int | None = None) -> None:
    parts = [f"index={index}" if index is not None else "", f"bus_id={norm_bus_id(bus)}" if bus and norm_bus_id(bus)
             else "", f"uuid={uuid}" if uuid else "", f"serial={serial}" if serial and serial != "N/A" else "",
             f"minor={minor}" if minor is not None else ""]
    if sum(bool(p) for p in parts) >= 2:
        sink.add("gpu_identity", " ".join(p for p in parts if p), line)


def _failed_gpu(sink: Sink, line: str, no: int) -> None:
    """The GPU a failure to open names by index and bus id ('Unable to determine the device handle for GPU2:
    0000:9B:00.0'): which index that bus is, though the GPU is missing from the listing."""
    if m := FACTS["smi_failed_gpu"].search(line):
        _identity(sink, int(m.group("idx")), m.group("bus"), None, None, no)


def parse_smi_table(sink: Sink, lines: list[str], base: int) -> None:
    gpus = []
    header, gpu_row, proc_row = FACTS["smi_driver_header"], FACTS["smi_gpu_row"], FACTS["smi_process_row"]
    for i, ln in enumerate(lines[:5]):
        iso = parse_date(ln)
        if iso:
            sink.add("collected_at", iso, base + i + 1)
            break
    smi_fail = INGEST["smi_fail"]
    for i, ln in enumerate(lines):
        no = base + i + 1
        if smi_fail.match(ln):
            sink.add("gpu_error", ln.strip(), no)
            _failed_gpu(sink, ln, no)
            continue
        m = header.search(ln)
        if m:
            _driver(sink, m.group("driver"), no)
            if m.group("cuda") and m.group("cuda") != "N/A":
                sink.add("driver_cuda", m.group("cuda"), no)
            continue
        m = gpu_row.match(ln)
        if m:
            idx = int(m.group("idx"))
            gpus.append((idx, m.group("name").strip(), m.group("bus"), None, no))
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            if "ERR!" in ln or "ERR!" in nxt:
                sink.add("gpu_error", f"GPU {idx} ({norm_bus_id(m.group('bus'))}): ERR! in nvidia-smi", no)
            continue
        m = proc_row.match(ln)
        if m:
            sink.add("gpu_process", f"gpu={m.group('gpu')} pid={m.group('pid')} name={m.group('name').strip()} "
                                    f"mem={m.group('mem')}", no)
    _gpu_list(sink, gpus)


# ------------------------------------------------------------------------------------------
# nvidia-smi -q
# ------------------------------------------------------------------------------------------
def parse_smi_q(sink: Sink, lines: list[str], base: int) -> None:
    if any("<nvidia_smi_log>" in ln for ln in lines[:20]):
        return _parse_smi_xml(sink, lines, base)
    attached = None
    gpus: list[dict] = []
    stack: list[tuple[int, str]] = []
    q_gpu, q_leaf = FACTS["smi_q_gpu"], FACTS["smi_q_leaf"]
    for i, ln in enumerate(lines):
        no = base + i + 1
        if not ln.strip() or ln.startswith("="):
            continue
        m = q_gpu.match(ln)
        if m:
            gpus.append({"bus": m.group("bus"), "line": no, "ecc": 0, "ecc_line": None})
            stack = []
            continue
        indent = len(ln) - len(ln.lstrip(" "))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        leaf = q_leaf.match(ln)
        if not leaf:
            stack.append((indent, ln.strip()))
            continue
        key, val = leaf.group("key").strip(), leaf.group("val").strip()
        path = [k for _, k in stack]
        if not gpus and indent == 0:
            if key == "Timestamp":
                sink.add("collected_at", parse_date(val), no)
            elif key == "Driver Version":
                _driver(sink, val, no)
            elif key == "CUDA Version" and val not in ("N/A", ""):
                sink.add("driver_cuda", val, no)
            elif key == "Attached GPUs" and val.isdigit():
                attached = int(val)
                sink.add("gpu_count", val, no)
            continue
        if not gpus:
            continue
        g = gpus[-1]
        lk = key.lower()
        if not path and key == "Product Name":
            g["name"] = val
        elif not path and key == "GPU UUID":
            g["uuid"] = val
        elif not path and key == "Minor Number" and val.isdigit():
            g["minor"] = int(val)
        elif not path and key == "Serial Number" and val not in ("", "N/A"):
            g["serial"] = val
        elif "Volatile" in path and path[:1] == ["ECC Errors"] and \
                ("uncorrectable" in lk or ("Double Bit" in path and lk == "total")) and val.isdigit():
            if int(val) > 0 and g["ecc_line"] is None:
                g["ecc_line"] = no
            g["ecc"] += int(val)
        elif path[:1] == ["Remapped Rows"] and key == "Pending" and val.lower() == "yes":
            sink.add("remapped_rows_pending", f"{norm_bus_id(g['bus'])}=Yes", no)
        elif path[:1] == ["Remapped Rows"] and key == "Remapping Failure Occurred" and val.lower() == "yes":
            sink.add("gpu_error", f"GPU {norm_bus_id(g['bus'])}: row remapping failure", no)
    for g in gpus:
        if g["ecc"]:
            sink.add("ecc_uncorrectable", f"{norm_bus_id(g['bus'])}={g['ecc']}", g["ecc_line"])
    names = {g.get("name") for g in gpus if g.get("name")}
    if len(names) == 1:
        sink.add("gpu_model", names.pop(), gpus[0]["line"])
    if gpus and attached == len(gpus):  # a full -q: GPU indexes follow PCI bus order
        ordered = sorted(gpus, key=lambda g: norm_bus_id(g["bus"]) or "")
        _gpu_list(sink, [(k, g.get("name", ""), g["bus"], g.get("uuid"), g["line"]) for k, g in enumerate(ordered)],
                  count=False, serials={k: g["serial"] for k, g in enumerate(ordered) if g.get("serial")})
    else:  # `-q -i N`: some GPUs, their index not printed (their bus id, UUID, serial and minor number are)
        for g in gpus:
            _identity(sink, None, g["bus"], g.get("uuid"), g.get("serial"), g["line"], g.get("minor"))


def _parse_smi_xml(sink: Sink, lines: list[str], base: int) -> None:
    gpus = []
    leaf, gpu_open = FACTS["smi_xml_leaf"], FACTS["smi_xml_gpu"]
    for i, ln in enumerate(lines):
        no = base + i + 1
        for tag, val in leaf.findall(ln):
            if tag == "driver_version":
                _driver(sink, val, no)
            elif tag == "cuda_version" and val != "N/A":
                sink.add("driver_cuda", val, no)
            elif tag == "timestamp":
                sink.add("collected_at", parse_date(val), no)
            elif tag == "attached_gpus":
                sink.add("gpu_count", val, no)
            elif tag == "product_name" and gpus:
                gpus[-1][1] = val
            elif tag == "uuid" and gpus:
                gpus[-1][3] = val
        m = gpu_open.search(ln)
        if m:
            gpus.append([len(gpus), "", m.group(1), None, no])
    _gpu_list(sink, [tuple(g) for g in gpus])


# ------------------------------------------------------------------------------------------
# nvidia-smi topo -m
# ------------------------------------------------------------------------------------------
def parse_topo(sink: Sink, lines: list[str], base: int) -> None:
    device, rdma_nic = FACTS["topo_device"], FACTS["rdma_nic"]
    spaced, tabbed = FACTS["topo_header_spaces"], FACTS["topo_header_tabs"]
    h = next((i for i, ln in enumerate(lines) if spaced.match(ln) and "CPU Affinity" in ln or tabbed.match(ln)), None)
    if h is None:
        return
    cols = [c for c in (lines[h].split("\t") if "\t" in lines[h] else lines[h].split()) if c.strip()]
    devs = [c.strip() for c in cols if device.match(c.strip())]
    gpu_rows, nvlink_line, nics = 0, None, {}
    pcie_only, nvlink_cell = True, FACTS["topo_nvlink_cell"]
    nic_gpus: dict[str, list[tuple[int, int]]] = {}   # NICk -> [(GPU index, line)] on the same PCIe switch
    for i in range(h + 1, len(lines)):
        ln, no = lines[i], base + i + 1
        cells = [c.strip() for c in (ln.split("\t") if "\t" in ln else ln.split())]
        cells = [c for c in cells if c != ""] if "\t" not in ln else cells
        if not cells or not cells[0]:
            if gpu_rows:
                break
            continue
        if cells[0].startswith("Legend"):
            break
        if not device.match(cells[0]):
            continue
        links = cells[1:1 + len(devs)]
        if cells[0].startswith("GPU"):
            gpu_rows += 1
            for dev, cell in zip(devs, links):
                if dev.startswith("GPU") and nvlink_cell.fullmatch(cell):
                    pcie_only = False
                    nvlink_line = nvlink_line or no
                elif dev.startswith("NIC") and cell == "PIX":
                    nic_gpus.setdefault(dev, []).append((int(cells[0][3:]), no))
        elif rdma_nic.match(cells[0]):
            nics[cells[0]] = no
    legend = FACTS["topo_nic_legend"]
    for i, ln in enumerate(lines):
        m = legend.match(ln)
        if m:
            nics[m.group(2)] = base + i + 1
            gpus = nic_gpus.get(f"NIC{m.group(1)}", [])
            if len(gpus) == 1:   # the GPU whose rail this NIC is (one GPU behind the same PCIe switch)
                sink.add("nic_gpu", f"{m.group(2)} {gpus[0][0]}", gpus[0][1])
    nics = {n: l for n, l in nics.items() if not FACTS["topo_nic_alias"].fullmatch(n)}
    hline = base + h + 1
    if gpu_rows:
        sink.add("gpu_count", gpu_rows, hline)
        sink.add("gpu_topology", f"{gpu_rows} GPU{'s' if gpu_rows > 1 else ''}"
                                 f"{', NVLink' if nvlink_line else ', PCIe only' if gpu_rows > 1 else ''}"
                                 f"{f', {len(nics)} NIC' + ('s' if len(nics) > 1 else '') if nics else ''}", hline)
    if gpu_rows > 1:
        sink.add("nvlink", "true" if nvlink_line else "false", nvlink_line or hline)
        if nvlink_line:
            sink.add("interconnect", "nvlink", nvlink_line)
        elif gpu_rows > 1 and pcie_only:
            sink.add("interconnect", "pcie", hline)
    rdma = {n: l for n, l in nics.items() if rdma_nic.match(n)}
    if nics:
        sink.add("nics", ",".join(sorted(nics)), min(nics.values()))
    if rdma:
        sink.add("interconnect", "rdma", min(rdma.values()))


# ------------------------------------------------------------------------------------------
# nvidia-smi --query-gpu=... --format=csv
# ------------------------------------------------------------------------------------------
def _guess_field(cells: list[str]) -> str:
    if all(FACTS["smi_csv_bus_id"].fullmatch(c) for c in cells):
        return "pci.bus_id"
    if all(c.startswith("GPU-") for c in cells):
        return "uuid"
    if all(FACTS["smi_csv_driver_version"].fullmatch(c) for c in cells):
        return "driver_version"
    if all(c.startswith(("NVIDIA", "Tesla", "Quadro", "GeForce")) for c in cells):
        return "name"
    if all(c.isdigit() for c in cells) and [int(c) for c in cells] == list(range(len(cells))):
        return "index"
    return ""


def parse_smi_csv(sink: Sink, lines: list[str], base: int, command: str | None = None) -> None:
    for i, ln in enumerate(lines):   # (a GPU it could not open: its error line, before or among the rows)
        _failed_gpu(sink, ln, base + i + 1)
    rows = [(base + i + 1, [c.strip() for c in ln.split(",")]) for i, ln in enumerate(lines)
            if ln.strip() and not ln.lstrip().startswith("#") and not INGEST["smi_fail"].match(ln)]
    if not rows:
        return
    fields: list[str] = []
    if all(INGEST["smi_csv_field"].match(c) for c in rows[0][1]):
        fields = [re.sub(r"\s*\[.*\]$", "", c) for c in rows[0][1]]  # a column name without its unit
        rows = rows[1:]
    else:
        m = FACTS["smi_query_command"].search(command or "")
        if m:
            fields = m.group(1).split(",")
    width = len(fields) if fields else len(rows[0][1])
    rows = [r for r in rows if len(r[1]) == width]
    if not rows:
        return
    if not fields:
        fields = [_guess_field([r[1][k] for r in rows]) for k in range(width)]
    col = {f: k for k, f in enumerate(fields)}
    gpus = []
    bad_cell, dotted = FACTS["smi_bad_cell"], FACTS["dotted_version"]
    for no, cells in rows:
        get = lambda *names: next((cells[col[n]] for n in names if n in col), None)  # noqa: E731
        for c in cells:
            if bad_cell.match(c):
                sink.add("gpu_error", f"{c} in nvidia-smi query row", no)
        if get("timestamp"):
            sink.add("collected_at", parse_date(get("timestamp").replace("/", "-")), no)
        if get("driver_version") and dotted.fullmatch(get("driver_version")):
            _driver(sink, get("driver_version"), no)
        if "pid" in col:
            sink.add("gpu_process", " ".join(f"{f}={c}" for f, c in zip(fields, cells) if f), no)
            continue
        ecc = get("ecc.errors.uncorrected.volatile.total", "ecc.errors.uncorrected.aggregate.total")
        bus = get("pci.bus_id", "gpu_bus_id")
        if ecc and ecc.isdigit() and int(ecc) > 0:
            sink.add("ecc_uncorrectable", f"{norm_bus_id(bus or '') or get('index')}={ecc}", no)
        if (get("remapped_rows.pending") or "").lower() in ("yes", "1"):
            sink.add("remapped_rows_pending", f"{norm_bus_id(bus or '') or get('index')}=Yes", no)
        idx = get("index")
        if "index" in col or "name" in col or "pci.bus_id" in col or "uuid" in col:
            gpus.append((int(idx) if idx and idx.isdigit() else len(gpus), get("name", "gpu_name") or "",
                         bus, get("uuid", "gpu_uuid"), no))
    _gpu_list(sink, gpus)


def parse_smi_list(sink: Sink, lines: list[str], base: int) -> None:
    """`nvidia-smi -L`: one line per GPU, its name and UUID (MIG devices under it are not GPUs)."""
    smi_list = INGEST["smi_list_line"]
    _gpu_list(sink, [(int(m.group("idx")), m.group("name"), None, m.group("uuid"), base + i + 1)
                     for i, ln in enumerate(lines) if (m := smi_list.match(ln))])
