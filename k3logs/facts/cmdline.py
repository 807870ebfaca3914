"""Facts from command lines (vllm serve, python -m vllm.entrypoints..., docker run, torchrun, ray start) and
from environment listings (env, printenv, export, KEY=VALUE notes)."""
from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field, replace

from k3logs.catalogue.regexes import Regexes
from k3logs.ingest.dumps import logical_lines

from .util import FACTS, Sink, digest_of, emit_env, parse_size

INGEST = Regexes("ingest.toml")  # launch_command: how ingest tells a launch line

# vLLM options that take no value (the rest take one); prefixes enable_/disable_/no_ are boolean too.
VLLM_BOOL = {
    "trust_remote_code", "enforce_eager", "headless", "api_server_count_auto", "skip_tokenizer_init",
    "enable_expert_parallel", "enable_prefix_caching", "no_enable_prefix_caching", "enable_chunked_prefill",
    "enable_auto_tool_choice", "disable_log_requests", "disable_log_stats", "disable_uvicorn_access_log",
    "disable_custom_all_reduce", "enable_eplb", "enable_dbo", "async_scheduling", "data_parallel_hybrid_lb",
    "data_parallel_external_lb", "enable_lora", "enable_sleep_mode", "disable_frontend_multiprocessing",
}
VLLM_BOOL_PREFIXES = ("enable_", "disable_", "no_", "trust_", "enforce_")
SHORT_OPTS = {"-tp": "tensor_parallel_size", "-pp": "pipeline_parallel_size", "-dp": "data_parallel_size",
              "-q": "quantization", "-dcp": "decode_context_parallel_size"}
ARG_FACTS = (
    ("tensor_parallel_size", "tensor_parallel_size"), ("pipeline_parallel_size", "pipeline_parallel_size"),
    ("data_parallel_size", "data_parallel_size"), ("max_model_len", "max_model_len"),
    ("gpu_memory_utilization", "gpu_memory_utilization"), ("all2all_backend", "all2all_backend"),
    ("nnodes", "nnodes"), ("served_model_name", "served_model_name"),
)
DOCKER_NOVAL = {"-d", "--detach", "--rm", "-i", "-t", "--interactive", "--tty", "--privileged", "--init",
                "--read-only", "-P", "--publish-all", "--no-healthcheck", "--oom-kill-disable",
                "--disable-content-trust", "-q", "--quiet", "--sig-proxy", "--help"}
WRAPPERS = {"sudo", "nohup", "exec", "time", "stdbuf", "setsid", "nice", "ionice", "env", "numactl", "taskset",
            "srun", "mpirun", "chrt"}
SEPARATORS = {"|", "||", "&&", ";", "&"}
TORCHRUN_FLAGS = {"--standalone", "--no-python", "--no_python", "--run-path", "--run_path", "-m", "--module"}


@dataclass
class Invocation:
    kind: str                                   # vllm | ray | torchrun
    vllm: dict[str, object] = field(default_factory=dict)
    positional: list[str] = field(default_factory=list)
    env: list[tuple[str, str]] = field(default_factory=list)
    image: str | None = None
    docker: dict[str, str] = field(default_factory=dict)
    nnodes: str | None = None                   # torchrun's --nnodes (its largest, of MIN:MAX)


def tokenize(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=False, posix=True)
    except ValueError:
        return text.split()


def simple_commands(tokens: list[str]) -> list[list[str]]:
    out, cur = [], []
    skip = False
    redirection, bare = FACTS["shell_redirection"], FACTS["shell_redirection_bare"]
    for t in tokens:
        if skip:
            skip = False
        elif t in SEPARATORS:
            if cur:
                out.append(cur)
            cur = []
        elif redirection.fullmatch(t):
            skip = bare.fullmatch(t) is not None  # `> file`: the file name is the next token
        else:
            cur.append(t)
    if cur:
        out.append(cur)
    return out


def parse_vllm_tokens(tokens: list[str]) -> tuple[dict[str, object], list[str]]:
    """Options (underscored names) and positional arguments of a vLLM command line."""
    opts: dict[str, object] = {}
    pos: list[str] = []
    i, negative = 0, FACTS["negative_number"]
    while i < len(tokens):
        t = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        takes = nxt is not None and (not nxt.startswith("-") or negative.fullmatch(nxt) is not None)
        if t.startswith("--") and len(t) > 2:
            name, eq, val = t[2:].partition("=")
            key = name.replace("-", "_")
            if eq:
                opts[key] = val
            elif (key in VLLM_BOOL or key.startswith(VLLM_BOOL_PREFIXES)) and \
                    not (nxt or "").lower() in ("true", "false"):
                opts[key] = True
            elif takes:
                opts[key] = nxt
                i += 1
            else:
                opts[key] = True
        elif t in SHORT_OPTS and takes:
            opts[SHORT_OPTS[t]] = nxt
            i += 1
        else:
            pos.append(t)
        i += 1
    return opts, pos


def _docker_run(tokens: list[str], inv_env: list[tuple[str, str]]) -> Invocation | None:
    i, docker = 0, {}
    assignment = FACTS["env_assignment_token"]
    while i < len(tokens):
        t = tokens[i]
        if not t.startswith("-"):
            break
        name, eq, val = t.partition("=")
        if eq:
            pass
        elif t in DOCKER_NOVAL or FACTS["docker_short_flags"].fullmatch(t):
            i += 1
            continue
        else:
            val = tokens[i + 1] if i + 1 < len(tokens) else ""
            i += 1
        if name in ("-e", "--env"):
            m = assignment.match(val)
            if m:
                inv_env.append((m.group(1), m.group(2)))
        else:
            docker.setdefault(name.lstrip("-"), val)
        i += 1
    if i >= len(tokens):
        return None
    image, rest = tokens[i], tokens[i + 1:]
    if docker.get("entrypoint"):
        rest = tokenize(docker["entrypoint"]) + rest
    inner = _invocation(rest, []) if rest else None
    if inner is None:
        if "vllm" not in image and not any(x.startswith("--") for x in rest):
            return Invocation("docker", env=inv_env, image=image, docker=docker)
        opts, pos = parse_vllm_tokens(rest)
        inner = Invocation("vllm", opts, pos)
    inner.env = inv_env + inner.env
    inner.image, inner.docker = image, docker
    return inner


def _invocation(tokens: list[str], env: list[tuple[str, str]]) -> Invocation | None:
    i, assignment = 0, FACTS["env_assignment_token"]
    while i < len(tokens):
        t = tokens[i]
        m = assignment.match(t)
        base = t.rsplit("/", 1)[-1]
        if m:
            env.append((m.group(1), m.group(2)))
        elif base in WRAPPERS or (t.startswith("-") and i > 0 and tokens[i - 1].rsplit("/", 1)[-1] in WRAPPERS):
            pass
        elif base in ("docker", "podman", "nerdctl"):
            j = i + 1
            if j < len(tokens) and tokens[j] == "container":
                j += 1
            if j < len(tokens) and tokens[j] == "run":
                return _docker_run(tokens[j + 1:], env)
            return None
        elif base == "kubectl":
            if "--" in tokens[i:]:
                return _invocation(tokens[tokens.index("--", i) + 1:], env)
            return None
        elif base in ("bash", "sh", "zsh") and "-c" in tokens[i:i + 3]:
            k = tokens.index("-c", i)
            return _invocation(tokenize(tokens[k + 1]) if k + 1 < len(tokens) else [], env)
        elif base == "vllm":
            rest = tokens[i + 1:]
            if rest[:1] == ["serve"]:
                opts, pos = parse_vllm_tokens(rest[1:])
                return Invocation("vllm", opts, pos, env)
            return None
        elif FACTS["python_binary"].fullmatch(base):
            j = i + 1
            while j < len(tokens) and tokens[j].startswith("-") and tokens[j] != "-m":
                j += 1
            if j + 1 < len(tokens) and tokens[j] == "-m":
                mod, rest = tokens[j + 1], tokens[j + 2:]
                if mod.startswith("vllm.entrypoints"):
                    if rest[:1] == ["serve"]:
                        rest = rest[1:]
                    opts, pos = parse_vllm_tokens(rest)
                    return Invocation("vllm", opts, pos, env)
                if mod == "torch.distributed.run":
                    return Invocation("torchrun", env=env, nnodes=_torchrun_nnodes(rest))
            elif j < len(tokens) and "api_server" in tokens[j]:
                opts, pos = parse_vllm_tokens(tokens[j + 1:])
                return Invocation("vllm", opts, pos, env)
            elif j < len(tokens) and tokens[j].rsplit("/", 1)[-1] == "vllm":  # python3 /usr/local/bin/vllm serve
                return _invocation(tokens[j:], env)
            return None
        elif base == "torchrun":
            return Invocation("torchrun", env=env, nnodes=_torchrun_nnodes(tokens[i + 1:]))
        elif base == "ray":
            return Invocation("ray", env=env) if tokens[i + 1:i + 2] == ["start"] else None
        elif t.startswith("-") or base.isdigit() or FACTS["wrapper_numeric_argument"].fullmatch(base):
            pass  # options and arguments of a wrapper (numactl --membind=0, taskset 0xff, srun --output=logs/%j.out)
        else:
            return None
        i += 1
    return None


def _torchrun_nnodes(args: list[str]) -> str | None:
    """torchrun's node count: `--nnodes N`, `--nnodes=N`, or the largest of an elastic `MIN:MAX`."""
    for i, a in enumerate(args):
        value = a.split("=", 1)[1] if a.startswith("--nnodes=") else (
            args[i + 1] if a == "--nnodes" and i + 1 < len(args) else None)
        if value is not None:
            return value.rsplit(":", 1)[-1] if FACTS["torchrun_nnodes_value"].fullmatch(value) else None
        if not a.startswith("-") and not (i and args[i - 1].startswith("-") and "=" not in args[i - 1]
                                          and args[i - 1] not in TORCHRUN_FLAGS):
            break  # the script: what follows are its own arguments
    return None


def invocations(text: str) -> list[Invocation]:
    out = []
    for cmd in simple_commands(tokenize(text)):
        inv = _invocation(cmd, [])
        if inv:
            out.append(inv)
    return out


def _emit_invocation(sink: Sink, inv: Invocation, text: str, lines: list[str], a: int, b: int, base: int) -> None:
    def at(*needles: str) -> int:
        for k in range(a, b + 1):
            if any(n in lines[k] for n in needles):
                return base + k + 1
        return base + a + 1

    sink.add("launch_command", text, base + a + 1)
    for name, value in inv.env:
        emit_env(sink, name, value, at(f"{name}="))
    if inv.image and "$" not in inv.image:  # (a variable the text does not assign: the image is unknown)
        sink.add("image", inv.image.split("@", 1)[0], at(inv.image))
        sink.add("image_digest", digest_of(inv.image), at(inv.image))
    d = inv.docker
    if d.get("shm-size"):
        sink.add("shm_size", parse_size(d["shm-size"], docker=True), at("--shm-size"))
    if d.get("ipc"):
        sink.add("ipc_mode", d["ipc"], at("--ipc"))
    if d.get("hostname") or d.get("h"):
        sink.add("hostname", d.get("hostname") or d.get("h"), at("--hostname", "-h "))
    if inv.kind == "vllm":
        vllm_arg_facts(sink, inv.vllm, inv.positional, at)
    if inv.nnodes:
        sink.add("nnodes", inv.nnodes, at("--nnodes"))


def vllm_arg_facts(sink: Sink, opts: dict[str, object], pos: list[str], at) -> None:
    """Facts from parsed vLLM options; `at(*needles)` gives the line number where a flag is written."""
    model = opts.get("model") or (pos[0] if pos else None)
    if isinstance(model, str):
        sink.add("model", model, at("--model", model))
    for key, fact in ARG_FACTS:
        val = opts.get(key)
        if isinstance(val, str):
            flag = "--" + key.replace("_", "-")
            short = [s for s, k in SHORT_OPTS.items() if k == key]
            sink.add(fact, val, at(flag, *[s + " " for s in short]))
    pc = opts.get("enable_prefix_caching")
    if pc is not None:
        on = pc is True or str(pc).lower() in ("true", "1", "yes")
        sink.add("prefix_caching", "true" if on else "false", at("--enable-prefix-caching"))
    if opts.get("no_enable_prefix_caching"):
        sink.add("prefix_caching", "false", at("--no-enable-prefix-caching"))
    if opts.get("enable_expert_parallel") is True:
        sink.add("expert_parallel", "true", at("--enable-expert-parallel"))
    kv = opts.get("kv_transfer_config")
    if isinstance(kv, str):
        try:
            conf = json.loads(kv)
            sink.add("kv_transfer", conf.get("kv_connector", "configured") if isinstance(conf, dict) else "configured",
                     at("--kv-transfer-config"))
        except ValueError:
            sink.add("kv_transfer", "configured", at("--kv-transfer-config"))


def _expanded(text: str, assigned: dict[str, str]) -> str:
    """`$NAME` / `${NAME}` replaced by what the script assigned them (others left as written)."""
    return FACTS["shell_variable"].sub(lambda m: assigned.get(m["braced"] or m["name"], m[0]), text)


def parse_launch(sink: Sink, lines: list[str], base: int) -> None:
    """launch_cmd: every vLLM invocation in the text (or else the first ray/torchrun one). In a script,
    the variables it assigned plainly before are expanded, as the shell would, and what it exports is the
    launched process's environment."""
    found: list[tuple[Invocation, str, int, int]] = []
    assigned: dict[str, str] = {}
    launch = INGEST["launch_command"]
    assignment, plain_assignment = FACTS["env_assignment_token"], FACTS["plain_assignment"]
    for a, b, text in logical_lines(lines):
        exports = tokenize(text)[1:] if text and text.startswith("export ") else []
        if exports and all(assignment.match(t) for t in exports):  # export NCCL_DEBUG=WARN NCCL_SOCKET_IFNAME=ibp
            for name, value in (assignment.match(t).groups() for t in exports):
                if not any(c in value for c in "$`"):
                    assigned[name] = value
                    emit_env(sink, name, value, base + a + 1)
            continue
        if m := plain_assignment.match(text or ""):
            assigned[m["name"]] = next(v for v in (m["dq"], m["sq"], m["bare"]) if v is not None)
            continue
        if not text or text.startswith("#") or not launch.search(" " + text):
            continue
        text = _expanded(text, assigned)
        for inv in invocations(text):
            found.append((inv, text, a, b))
    main = [f for f in found if f[0].kind == "vllm" or f[0].image]
    for inv, text, a, b in (main or found[:1]):
        _emit_invocation(sink, inv, text, lines, a, b, base)


def parse_systemd_unit(sink: Sink, lines: list[str], base: int) -> None:
    """A systemd unit: what its ExecStart= runs (a launch command, read as parse_launch reads one) and the
    environment its Environment= lines give that process. Lines of a diff quoted under it ('-ExecStart=')
    are not the unit's."""
    for a, _, text in logical_lines(lines):
        key, eq, value = text.partition("=")
        if not eq:
            continue
        if key == "Environment":  # Environment=A=1 B=2, or Environment="A=1" "B=two words"
            for name, eq2, val in (item.partition("=") for item in tokenize(value)):
                if eq2:
                    emit_env(sink, name, val, base + a + 1)
        elif key == "ExecStart":
            parse_launch(sink, [value.lstrip("-@+!:")], base + a)  # (systemd's prefix flags)


def parse_supervisor_program(sink: Sink, lines: list[str], base: int) -> None:
    """A supervisord program: what its command= runs (its value goes on over the indented lines after it) and
    the environment its environment= gives (KEY="value",KEY2=value)."""
    entries: list[tuple[int, str]] = []
    for i, ln in enumerate(lines):
        if ln[:1].isspace() and entries and ln.strip() and not ln.lstrip().startswith((";", "#")):
            entries[-1] = (entries[-1][0], f"{entries[-1][1]} {ln.strip()}")
        elif "=" in ln and not ln.startswith((";", "#", "[")):
            entries.append((i, ln.strip()))
    for i, text in entries:
        key, _, value = (p.strip() for p in text.partition("="))
        if key == "environment":
            for item in _comma_items(value):
                name, eq, val = item.partition("=")
                if eq:
                    emit_env(sink, name, val, base + i + 1)
        elif key == "command":
            parse_launch(sink, [value], base + i)


def _comma_items(value: str) -> list[str]:
    """KEY="a,b",KEY2=c as its items, quotes honoured (an unbalanced quote: split at every comma)."""
    lex = shlex.shlex(value, posix=True)
    lex.whitespace, lex.whitespace_split = ",", True
    try:
        return list(lex)
    except ValueError:
        return value.split(",")


def facts_from_command_text(sink: Sink, text: str, line: int | None, at=None) -> bool:
    """Facts from one command line stored in one place (docker Args, pod spec args, a ps row, ExecStart=).

    `at(*needles)` may locate the line of each flag (e.g. inside a JSON Args array); default: `line`.
    """
    invs = [i for i in invocations(text) if i.kind == "vllm"]
    if not invs:
        return False
    inv = invs[0]
    at = at or (lambda *_: line)
    sink.add("launch_command", text, line)
    for name, value in inv.env:
        emit_env(sink, name, value, at(f"{name}="))
    vllm_arg_facts(sink, inv.vllm, inv.positional, at)
    return True


def parse_env(sink: Sink, lines: list[str], base: int) -> None:
    """env / printenv / export output, also hand-written notes with KEY=VALUE lines and `### host` sections."""
    node: str | None | bool = False
    launch = INGEST["launch_command"]
    section, env_line, hostname_note = FACTS["host_section_heading"], FACTS["env_line"], FACTS["hostname_note"]
    for i, ln in enumerate(lines):
        no = base + i + 1
        m = section.match(ln)
        if m and not env_line.match(ln):
            node = m.group("host")
            sink.add("hostname", node, no, node=node)
            continue
        m = hostname_note.match(ln)
        if m:
            sink.add("hostname", m.group("host"), no, node=node)
            continue
        m = env_line.match(ln)
        if not m:
            continue
        name, val = m.group("name"), m.group("val").strip()
        if launch.search(" " + val) and not name.startswith(("NCCL_", "UCX_", "CUDA_", "VLLM_", "NVIDIA_")):
            before = len(sink.facts)
            facts_from_command_text(sink, val, no)
            if node is not False:  # keep the section's node on facts made from the command
                sink.facts[before:] = [replace(f, node=node) for f in sink.facts[before:]]
            continue
        emit_env(sink, name, val, no, node=node)
