"""The one gate out (#12): every kind of secret planted in every kind of file reaches no output of any
command, not even as an 8-character fragment; and no character from a bundle reaches a terminal as a control
sequence, a markdown report as HTML or a link, or a JSON report unescaped."""
from __future__ import annotations

import json
import random
import string
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from k3logs.cli import cli


def _value(rng: random.Random, n: int = 20) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


def plant(root: Path) -> tuple[Path, dict[str, str]]:
    """A bundle of one failing node whose every file type holds every kind of secret; returns the bundle
    and the planted values (random, so that no fragment of one occurs anywhere by chance)."""
    rng = random.Random(12)
    v = {k: _value(rng) for k in ("pg", "azure", "wandb", "mytoken", "mysecret", "dbpass", "urltok", "curl",
                                  "cookie", "setcookie", "pgurl", "straddle", "next", "inspect", "yaml", "yamlhf",
                                  "pip", "awssecret", "sniffcmd", "awsid", "cut", "pem")}
    v |= {"hf": "hf_" + _value(rng, 34), "ghpat": "github_pat_" + _value(rng, 60), "glpat": "glpat-" + _value(rng),
          "aiza": "AIza" + _value(rng, 35), "sentry": _value(rng, 32).lower(),
          "jwt": "eyJ" + _value(rng, 30) + ".eyJ" + _value(rng, 30) + "." + _value(rng, 20)}
    node = root / "bundle" / "gpu-a7"
    node.mkdir(parents=True)
    head = "ERROR 11-18 07:40:32 [core.py:502] RuntimeError: boom "
    vllm = [
        "INFO 11-18 07:40:00 [api_server.py:1000] vLLM API server version 0.27.2",
        "INFO 11-18 07:40:00 [utils.py:300] non-default args: {'model': 'moonshotai/Kimi-K3', 'api_key': "
        f"'{v['mytoken']}'}}",
        f"INFO 11-18 07:40:01 [envs.py:10] HF_TOKEN={v['hf']} PGPASSWORD={v['pg']} AZURE_OPENAI_KEY={v['azure']} "
        f"AWS_ACCESS_KEY_ID={v['awsid']} WANDB_KEY={v['wandb']}",
        f"INFO 11-18 07:40:01 [envs.py:11] github {v['ghpat']} gitlab {v['glpat']} google {v['aiza']} jwt {v['jwt']}",
        f"INFO 11-18 07:40:02 [hub.py:20] fetching https://{v['urltok']}@huggingface.co/x and "
        f"https://{v['sentry']}@o12345.ingest.sentry.io/42",
        f"INFO 11-18 07:40:02 [hub.py:21] curl -u admin:{v['curl']} https://example.com Cookie: s={v['cookie']}; "
        f"Set-Cookie: id={v['setcookie']}; Path=/",
        f"INFO 11-18 07:40:03 [cfg.py:22] MY_SERVICE_TOKEN={v['mytoken']} OTHER_SECRET={v['mysecret']} "
        f"DB_PASSWORD={v['dbpass']}",
        "INFO 11-18 07:40:03 [cfg.py:23] -----BEGIN PRIVATE KEY-----",
        f"INFO 11-18 07:40:03 [cfg.py:23] {v['pem']}{v['pem']}",
        "INFO 11-18 07:40:03 [cfg.py:23] -----END PRIVATE KEY-----",
        "ERROR 11-18 07:40:30 [core.py:500] EngineCore failed to start.",
        "ERROR 11-18 07:40:30 [core.py:500] Traceback (most recent call last):",
        'ERROR 11-18 07:40:30 [core.py:500]   File "/usr/lib/python3/site-packages/vllm/worker.py", line 10, in '
        'load_model',
        # the cause line: whatever length the report cuts it to, the cut goes through one of these URLs
        "ERROR 11-18 07:40:30 [core.py:500] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
        "GPU 0 " + " ".join(f"postgres://u:{v['straddle']}@db{i}.internal/x" for i in range(12))
        + f" postgres://u:{v['pgurl']}@db.internal:5432/x",
        head + "z" * (4096 - len(head) - 14) + f" hf_{v['cut']}{v['cut']}",  # --max-line-bytes 4096 cuts the token
    ]
    (node / "vllm.log").write_text("\n".join(vllm) + "\n")
    (node / "env.txt").write_text(f"HF_TOKEN={v['hf']}\nPGPASSWORD={v['pg']}\nAZURE_OPENAI_KEY={v['azure']}\n"
                                  f"AWS_ACCESS_KEY_ID={v['awsid']}\nWANDB_KEY={v['wandb']}\nNCCL_IB_HCA=mlx5_0\n")
    (node / "docker-inspect.json").write_text(json.dumps([{"Id": "abc", "Config": {
        "Hostname": "gpu-a7", "Env": [f"HF_TOKEN={v['hf']}", f"SENTRY_DSN=https://{v['sentry']}@o1.ingest.sentry.io/2"],
        "Cmd": ["vllm", "serve", "moonshotai/Kimi-K3", "--api-key", v["inspect"], "--enable-prefix-caching"]}}],
        indent=4))
    (node / "pod.json").write_text(json.dumps({"kind": "Pod", "spec": {"nodeName": "gpu-a7", "containers": [{
        "name": "vllm", "args": ["--api-key", v["yaml"]],
        "env": [{"name": "HF_TOKEN", "value": v["yamlhf"]}, {"name": "DB_PASSWORD", "value": v["dbpass"]}]}]}},
        indent=2))
    (node / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nspec:\n  nodeName: gpu-a7\n  containers:\n"
                                   f"  - name: vllm\n    args:\n    - --api-key\n    - {v['yaml']}\n    env:\n"
                                   f"    - name: HF_TOKEN\n      value: {v['yamlhf']}\n")
    (node / "launch.sh").write_text(f"#!/bin/bash\nexport HF_TOKEN={v['hf']}\nvllm serve moonshotai/Kimi-K3 "
                                    f"--tensor-parallel-size 8 \\\n    --api-key \\\n    {v['next']} \\\n"
                                    "    --enable-prefix-caching\n")
    (node / "run.sh").write_text(f"vllm serve --api-key {v['sniffcmd']} moonshotai/Kimi-K3 --tensor-parallel-size 8\n")
    (node / "pip-freeze.txt").write_text(f"--index-url https://__token__:{v['pip']}@pypi.example.com/simple\n"
                                         "torch==2.9.0\nvllm==0.27.2\n")
    (node / "credentials").write_text(f"[default]\naws_access_key_id = {v['awsid']}\n"
                                      f"aws_secret_access_key = {v['awssecret']}\n")
    return root / "bundle", v


def _table_text(path: Path) -> str:
    return str(pl.read_parquet(path).to_dicts())


@pytest.fixture(scope="module")
def every_output(tmp_path_factory) -> tuple[dict[str, str], dict[str, str]]:
    """What every command writes (stdout, stderr and files) for the planted bundle, by name."""
    root = tmp_path_factory.mktemp("secrets")
    bundle, values = plant(root)
    out = root / "out"
    out.mkdir()
    runner = CliRunner()
    runs = {
        "md": ["analyze", bundle], "json": ["analyze", bundle, "--format", "json"],
        "json-context": ["analyze", bundle, "--format", "json", "--context-lines", "50"],
        "html": ["analyze", bundle, "--format", "html", "--context-lines", "50"],
        "folder": ["analyze", bundle, "-o", f"{out / 'report'}/"],
        "line-limit": ["analyze", bundle, "--format", "json", "--context-lines", "50", "--max-line-bytes", "4096"],
        "sniff": ["sniff", bundle], "sniff-json": ["sniff", bundle, "--format", "json"],
        "events-csv": ["events", bundle, "-o", out / "ev.csv"], "events-jsonl": ["events", bundle, "-o", out / "ev.jsonl"],
        "events-parquet": ["events", bundle, "-o", out / "ev.parquet"],
        "events-line-limit": ["events", bundle, "-o", out / "lim.jsonl", "--max-line-bytes", "4096"],
        "error": ["analyze", f"{bundle}/HF_TOKEN={values['hf']}"],
    }
    texts = {}
    for name, args in runs.items():
        res = runner.invoke(cli, [str(a) for a in args])
        assert res.exit_code in (0, 1, 2), (name, res.output)
        texts[name] = res.stdout + res.stderr
    archive = root / "archive"
    archive.mkdir()
    (archive / "incident-1").symlink_to(bundle, target_is_directory=True)
    res = runner.invoke(cli, ["scan", str(archive), "-o", str(out / "scan"), "--jobs", "1", "--summary"])
    texts["scan"] = res.stdout + res.stderr
    texts["scan-summary"] = runner.invoke(cli, ["scan-summary", str(out / "scan")]).stdout
    for f in out.rglob("*"):
        if f.is_file():
            texts[str(f.relative_to(out))] = _table_text(f) if f.suffix == ".parquet" else f.read_text("utf-8", "replace")
    assert "[redacted]" in texts["md"] and len(texts) > 20
    return texts, values


KINDS = ("hf", "pg", "azure", "awsid", "wandb", "mytoken", "mysecret", "dbpass", "ghpat", "glpat", "aiza", "jwt",
         "urltok", "sentry", "curl", "cookie", "setcookie", "pem", "pgurl", "straddle", "cut", "next", "inspect",
         "yaml", "yamlhf", "pip", "awssecret", "sniffcmd")


@pytest.mark.parametrize("kind", KINDS)
def test_no_planted_secret_nor_any_fragment_of_it_reaches_any_output(every_output, kind):
    texts, values = every_output
    secret = values[kind]
    fragments = {secret[i:i + 8] for i in range(len(secret) - 7)}
    leaks = sorted({name for name, text in texts.items() if any(f in text for f in fragments)})
    assert not leaks, f"{kind} ({secret}) reaches {leaks}"


def test_no_redact_keeps_them(tmp_path):
    bundle, values = plant(tmp_path)
    res = CliRunner().invoke(cli, ["analyze", str(bundle), "--format", "json", "--context-lines", "50", "--no-redact"])
    assert values["hf"] in res.stdout and values["pgurl"] in res.stdout


# ------------------------------------------------------------------------------------------------------
# characters
# ------------------------------------------------------------------------------------------------------
HOSTILE = ("\x1b]52;c;Y2xpcGJvYXJk\x07"   # OSC 52: write the clipboard
           "\x1b]0;pwned\x07"             # OSC 0: the window title
           "\x1bP+q\x1b\\"                # DCS
           "\x9b31m"                      # C1 CSI
           "\u202egnp.exe"                # right-to-left override
           "\x00")
MARKDOWN = "`|<script>alert(1)</script>[click](javascript:alert(1))"


@pytest.fixture(scope="module")
def hostile_bundle(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("chars") / "bundle"
    node = root / f"node{MARKDOWN.replace('/', '_')}x\u202ey"
    node.mkdir(parents=True)
    (node / "vllm.log").write_text(
        "INFO 11-18 07:40:00 [api_server.py:1000] vLLM API server version 0.27.2\n"
        "ERROR 11-18 07:40:30 [core.py:500] EngineCore failed to start.\n"
        f"ERROR 11-18 07:40:30 [core.py:500] RuntimeError: CUDA error: an illegal memory access was encountered "
        f"{HOSTILE}{MARKDOWN}\n")
    return root


@pytest.mark.parametrize("args", [["analyze"], ["analyze", "--format", "json"], ["analyze", "--format", "html"],
                                  ["sniff"], ["sniff", "--format", "json"]], ids=" ".join)
def test_no_control_character_or_bidi_mark_reaches_stdout(hostile_bundle, args):
    res = CliRunner().invoke(cli, [*args, str(hostile_bundle)])
    assert res.exit_code in (0, 1), res.output
    for ch in ("\x1b", "\x07", "\x9b", "\u202e", "\x00"):
        assert ch not in res.stdout, repr(ch)
    assert "illegal memory access" in res.stdout or args[0] == "sniff"


def test_json_keeps_the_text_escaped(hostile_bundle):
    res = CliRunner().invoke(cli, ["analyze", "--format", "json", str(hostile_bundle)])
    text = json.loads(res.stdout)["first_causal"]["text"]
    assert "\x9b31m" in text and "\u202e" in text  # the same data, escaped in the JSON text
    assert "\\u009b" in res.stdout and "\\u202e" in res.stdout


def test_markdown_shows_bundle_text_as_text(hostile_bundle):
    md = CliRunner().invoke(cli, ["analyze", str(hostile_bundle)]).stdout
    code = md.split("## Root cause", 1)[1].split("### Why", 1)[0]
    fence = next(ln for ln in code.splitlines() if ln.startswith("```"))
    assert code.count(fence) == 2 and f"{fence}\n" in code  # the cause line inside one fence it cannot close
    import re
    outside = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", md.replace(code, ""))  # no code spans: text only
    assert not re.search(r"(?<!\\)<script", outside)                    # no raw HTML tag
    assert not re.search(r"(?<!\\)\[[^\]]*\]\(javascript:", outside)     # no link
    assert "\\<script>" in outside  # shown escaped where it is text
    rows = [ln for ln in md.splitlines() if ln.startswith("| ") and "illegal" in ln]
    assert rows and all(ln.count(" | ") == rows[0].count(" | ") for ln in rows)
    header = md.split("## Timeline", 1)[1].splitlines()[2]
    assert len(_cells(rows[0])) == len(_cells(header))  # no pipe from the bundle made a column


def _cells(row: str) -> list[str]:
    import re
    return re.split(r"(?<!\\)\|", row.strip().strip("|"))
