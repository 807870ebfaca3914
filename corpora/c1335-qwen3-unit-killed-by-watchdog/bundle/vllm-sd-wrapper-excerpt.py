#!/usr/bin/python3
# /opt/vllm/bin/vllm-sd-wrapper.py (excerpt) - runs vllm as a child, sends READY=1 after the first good probe and
# WATCHDOG=1 after every good probe. A probe is a real 1-token completion (GET /health stays 200 when the engine is stuck).
PROBE_EVERY = 20      # seconds
PROBE_TIMEOUT = 15    # seconds
...
def probe_once():
    r = session.post(f"{BASE}/v1/completions", json={"model": MODEL, "prompt": "ping", "max_tokens": 1}, timeout=PROBE_TIMEOUT)
    r.raise_for_status()
...
def supervise(child):
    fails = 0
    while child.poll() is None:
        try:
            probe_once(); fails = 0
            daemon.notify("WATCHDOG=1")
        except Exception as e:
            fails += 1
            log(f"probe failed ({min(fails,3)}/3): POST /v1/completions {describe(e)}; not sending WATCHDOG=1" + health_note(fails))
        stop.wait(PROBE_EVERY)
