# acme_vllm_telemetry/plugin.py  (v0.3.1, deployed 2025-07-21)
import os
from cuda.bindings import driver as cu

_GPU_UUID = None


def _gpu_uuid():
    """GPU UUID of the first visible device, for metric labels (no torch import: keeps the API server light)."""
    global _GPU_UUID
    if _GPU_UUID is None:
        (err,) = cu.cuInit(0)
        assert err == cu.CUresult.CUDA_SUCCESS, err
        err, dev = cu.cuDeviceGet(0)
        err, uuid = cu.cuDeviceGetUuid(dev)
        err, ver = cu.cuDriverGetVersion()
        _GPU_UUID = "GPU-" + uuid.bytes.hex()
        print(f"[acme_vllm_telemetry] cuInit ok, driver API {ver}; labelling metrics with gpu_uuid={_GPU_UUID} "
              f"host={os.uname().nodename}", flush=True)
    return _GPU_UUID


def register():
    _gpu_uuid()
    # ... registers the OTLP exporter for vllm:* metrics
