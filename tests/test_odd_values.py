"""Odd numbers and dates degrade one field, never the bundle (#12): a value out of range is read as absent,
the report lists it under what was skipped, and the analysis goes on (exit 0 or 1, nothing on stderr)."""
from __future__ import annotations

import json
from datetime import datetime

import polars as pl
import pytest
from click.testing import CliRunner

from k3logs.cli import cli
from k3logs.ingest.parse import RANGES, UNREADABLE, _in_range

START = "INFO 11-18 07:40:00 [api_server.py:1000] vLLM API server version 0.27.2"
CAUSE = ("ERROR 11-18 07:40:30 [core.py:500] RuntimeError: CUDA error: an illegal memory access was encountered")
ODD = {  # name -> (files, the field the report must name, or None where the value is only in a fact)
    "year 0001 and 0000 in a CRI wrapper": ({"vllm.log": f"0001-01-01T00:00:00.000000000Z stdout F {START}\n"
                                                          f"0000-01-01T00:00:01Z stdout F {CAUSE}\n"}, "wrapper time"),
    "an ISO time of year 0": ({"vllm.log": f"{START}\n0000-12-31T23:59:59Z ERROR RuntimeError: CUDA error: an "
                                           f"illegal memory access was encountered\n{CAUSE}\n"}, "time"),
    "10**20 s since boot": ({"vllm.log": f"{START}\n{CAUSE}\n", "uptime.txt": "2026-11-18 07:00:00\n",
                             "dmesg.txt": f"[{10 ** 20}.000000] NVRM: Xid (PCI:0000:9a:00): 79, pid='<unknown>', "
                                          f"name=<unknown>, GPU has fallen off the bus.\n"}, None),   # (no kernel line:
    # seconds since boot have nine digits at most, so this is read as plain text)
    "a torchelastic rank of 2**64": ({"vllm.log": f"{START}\n[default{2 ** 64}]:[rank{2 ** 64}]: RuntimeError: CUDA "
                                                  f"error: an illegal memory access was encountered\n"}, "rank"),
    "a UTC offset of +99:99": ({"vllm.log": f"{START}\n{CAUSE}\n",
                                "journalctl-k.txt": "2026-11-18T07:40:20+9999 gpu-a1 kernel: mlx5_core 0000:4d:00.0 "
                                                    "mlx5_3: Port: 1 Link ACTIVE\n"}, "UTC offset"),
    "a 5000-digit pid": ({"vllm.log": f"{START}\n(VllmWorker rank=3 pid={'9' * 5000}) {CAUSE}\n"}, "pid"),
    "a 26-digit rank": ({"vllm.log": f"{START}\n(VllmWorker rank={'9' * 26} pid=4711) INFO 11-18 07:40:10 "
                                     f"[parallel_state.py:1000] rank {'9' * 26} in world size {'9' * 26} is assigned as "
                                     f"DP rank 0, PP rank 0, TP rank 3\n[rank{'9' * 26}]: {CAUSE}\n"}, "rank"),
    "1e999 as a parallel size": ({"vllm.log": f"{START}\nINFO 11-18 07:40:00 [utils.py:300] non-default args: "
                                              f"{{'model': 'm', 'tensor_parallel_size': 1e999}}\n{CAUSE}\n",
                                  "launch.sh": "vllm serve m --tensor-parallel-size 1e999 --pipeline-parallel-size "
                                               f"{'9' * 26} --data-parallel-size -1\n"}, None),
}


@pytest.mark.parametrize("name", ODD)
def test_an_odd_value_degrades_one_field_never_the_bundle(tmp_path, name):
    files, field = ODD[name]
    for rel, text in files.items():
        (tmp_path / rel).write_text(text)
    res = CliRunner().invoke(cli, ["analyze", str(tmp_path), "--format", "json"])
    assert res.exit_code == 1 and res.stderr == "", res.output
    report = json.loads(res.stdout)
    assert report["root_cause"]["category"] in ("gpu.illegal_access", "gpu.xid")
    if field is not None:
        assert any(s["reason"].startswith(f"{field} out of range") for s in report["bundle"]["skipped"]), \
            report["bundle"]["skipped"]


def test_values_in_range_are_kept_and_those_outside_are_named():
    low, high = RANGES["wt"]
    df = pl.DataFrame({"pid": [0, (1 << 31) - 1, 1 << 31, None, -1], "wt": [low, high.replace(year=2199), high, None, low]})
    out = _in_range(df)
    assert out["pid"].to_list() == [0, (1 << 31) - 1, None, None, None]
    assert out["wt"].to_list() == [low, datetime(2199, 1, 1), None, None, low]
    assert out[UNREADABLE].to_list() == [None, None, "pid,wt", None, "pid"]


def test_a_batch_with_nothing_out_of_range_gets_no_column():
    assert UNREADABLE not in _in_range(pl.DataFrame({"pid": [1, 2], "rank": [0, None]})).columns
