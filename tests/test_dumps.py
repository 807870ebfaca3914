"""sniff_dump: every dump kind and variant is told by content; logs are not dumps; arbitrary text never raises.

The inline dump texts below (written for these tests; hosts and values are made up) are also used by
test_facts.py and test_checks.py.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from k3logs.ingest.dumps import command_kind, split_transcript, sniff_dump
from k3logs.schema import DUMP_KINDS

# ------------------------------------------------------------------------------------------------------
# samples
# ------------------------------------------------------------------------------------------------------

SMI_WIDE = """\
Thu Mar 12 14:05:09 2026       
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 580.65.06              Driver Version: 580.65.06      CUDA Version: 13.0     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA GB300                   On  |   00000009:01:00.0 Off |                    0 |
| N/A   35C    P0            190W / 1400W |    1200MiB / 284208MiB |      3%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+
|   1  NVIDIA GB300                   On  |   0000000A:01:00.0 Off |                    0 |
| N/A   36C    P0            191W / 1400W |    1200MiB / 284208MiB |      2%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+

+-----------------------------------------------------------------------------------------+
| Processes:                                                                              |
|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |
|        ID   ID                                                               Usage      |
|=========================================================================================|
|    1   N/A  N/A           77123      C   python3                                  1190MiB |
+-----------------------------------------------------------------------------------------+
"""

SMI_NARROW = """\
Tue Sep  3 23:10:20 2024       
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 470.256.02   Driver Version: 470.256.02   CUDA Version: 11.4     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  Tesla T4            Off  | 00000000:00:1E.0 Off |                    0 |
| N/A   41C    P8    10W /  70W |      0MiB / 15109MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+
|   1  Tesla T4            Off  | 00000000:00:1F.0 Off |                 ERR! |
| ERR!  ERR!  ERR!    ERR! / ERR! |      0MiB / 15109MiB |    ERR!      Default |
+-------------------------------+----------------------+----------------------+
"""

SMI_LIST = """\
$ ssh gpu-h100-n04 'hostname; nvidia-smi -L'
gpu-h100-n04
GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-c958f3f6-2c1e-4d7a-9b3f-d7e3771b993d)
GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-7ccf57be-2c1e-4d7a-9b3f-b2940316f869)
  MIG 3g.40gb     Device  0: (UUID: MIG-1d3ca9a0-1234-5678-9abc-def012345678)
GPU 2: NVIDIA H100 80GB HBM3 (UUID: GPU-03dceeb9-2c1e-4d7a-9b3f-dc341edb9688)
"""
SMI_LIST_BARE = "GPU 0: NVIDIA B200 (UUID: GPU-11111111-2222-3333-4444-555555555555)\n" \
                "GPU 1: NVIDIA B200 (UUID: GPU-66666666-7777-8888-9999-000000000000)\n"

SMI_FAILED = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n"
SMI_FAILED_PROMPT = "root@gpu-x9:~# nvidia-smi\nUnable to determine the device handle for GPU0000:3B:00.0: Unknown Error\n"
SMI_NO_DEVICES = "No devices were found\n"

SMI_Q = """\

==============NVSMI LOG==============

Timestamp                                 : Fri Jan  9 10:11:12 2026
Driver Version                            : 575.57.08
CUDA Version                              : 12.9

Attached GPUs                             : 2
GPU 00000000:19:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    GPU UUID                              : GPU-11111111-2222-3333-4444-555555555555
    Minor Number                          : 0
    ECC Errors
        Volatile
            SRAM Uncorrectable Parity     : 0
            DRAM Correctable              : 4
            DRAM Uncorrectable            : 0
    Remapped Rows
        Pending                           : No
GPU 00000000:3B:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    GPU UUID                              : GPU-66666666-7777-8888-9999-000000000000
    Minor Number                          : 1
    ECC Errors
        Volatile
            SRAM Uncorrectable Parity     : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 2
    Remapped Rows
        Pending                           : Yes
        Remapping Failure Occurred        : No
"""

SMI_Q_XML = """\
<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">
<nvidia_smi_log>
	<timestamp>Fri Jan  9 10:11:12 2026</timestamp>
	<driver_version>580.82.07</driver_version>
	<cuda_version>13.0</cuda_version>
	<attached_gpus>1</attached_gpus>
	<gpu id="00000000:19:00.0">
		<product_name>NVIDIA B200</product_name>
		<uuid>GPU-abcdefab-0000-1111-2222-333333333333</uuid>
	</gpu>
</nvidia_smi_log>
"""

TOPO = (
    "\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    "GPU0\t X \tNV18\tNV18\tNV18\tPIX\tSYS\t0-55\t0\t\tN/A\n"
    "GPU1\tNV18\t X \tNV18\tNV18\tPIX\tSYS\t0-55\t0\t\tN/A\n"
    "GPU2\tNV18\tNV18\t X \tNV18\tSYS\tPIX\t56-111\t1\t\tN/A\n"
    "GPU3\tNV18\tNV18\tNV18\t X \tSYS\tPIX\t56-111\t1\t\tN/A\n"
    "NIC0\tPIX\tPIX\tSYS\tSYS\t X \tSYS\n"
    "NIC1\tSYS\tSYS\tPIX\tPIX\tSYS\t X \n"
    "\n"
    "Legend:\n"
    "\n"
    "  X    = Self\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n"
    "\n"
    "NIC Legend:\n"
    "\n"
    "  NIC0: mlx5_0\n"
    "  NIC1: mlx5_1\n"
)

TOPO_SPACES_PCIE = """\
        GPU0    GPU1    CPU Affinity    NUMA Affinity
GPU0     X      PHB     0-15    0
GPU1    PHB      X      0-15    0

Legend:

  X    = Self
"""

CSV_UNITS = """\
index, name, pci.bus_id, uuid, driver_version, memory.total [MiB], ecc.errors.uncorrected.volatile.total
1, NVIDIA H200, 00000000:2A:00.0, GPU-bbbbbbbb-0000-0000-0000-000000000001, 580.95.05, 143771 MiB, 3
0, NVIDIA H200, 00000000:18:00.0, GPU-aaaaaaaa-0000-0000-0000-000000000000, 580.95.05, 143771 MiB, 0
"""
CSV_NOUNITS = """\
index, name, pci.bus_id, memory.used
0, NVIDIA L40S, 00000000:CA:00.0, 0
"""
CSV_NOHEADER = """\
0, NVIDIA A100-SXM4-80GB, 00000000:07:00.0, GPU-cccccccc-0000-0000-0000-000000000000
1, NVIDIA A100-SXM4-80GB, 00000000:0F:00.0, GPU-dddddddd-0000-0000-0000-000000000000
"""
CSV_WITH_COMMAND = """\
$ nvidia-smi --query-gpu=driver_version,name --format=csv,noheader
570.133.20, NVIDIA H100 80GB HBM3
"""

COLLECT_ENV_SECTIONED = """\
Collecting environment information...
==============================
        System Info
==============================
OS                           : Ubuntu 24.04.1 LTS (x86_64)
GCC version                  : (Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0

==============================
       PyTorch Info
==============================
PyTorch version              : 2.9.0+cu130
Is debug build               : False
CUDA used to build PyTorch   : 13.0
ROCM used to build PyTorch   : N/A

==============================
      CUDA / GPU Info
==============================
Is CUDA available            : True
CUDA runtime version         : 13.0.88
GPU models and configuration : 
GPU 0: NVIDIA B300
GPU 1: NVIDIA B300

Nvidia driver version        : 580.95.05
==============================
Versions of relevant libraries
==============================
[pip3] nvidia-nccl-cu13==2.27.7
[pip3] torch==2.9.0+cu130
[pip3] nvidia-cuda-runtime==13.0.96
==============================
         vLLM Info
==============================
ROCM Version                 : Could not collect
vLLM Version                 : 0.27.2
vLLM Build Flags:
  CUDA Archs: Not Set; ROCm: Disabled
==============================
     Environment Variables
==============================
NCCL_SOCKET_IFNAME=ib0
VLLM_API_KEY=sk-should-not-leak
"""

COLLECT_ENV_FLAT = """\
PyTorch version: 2.4.0+cu121
Is debug build: False
CUDA used to build PyTorch: 12.1
ROCM used to build PyTorch: N/A

OS: Ubuntu 22.04.4 LTS (x86_64)
CUDA runtime version: Could not collect
GPU models and configuration: GPU 0: NVIDIA L4
Nvidia driver version: 535.183.01

Versions of relevant libraries:
[pip3] nvidia-nccl-cu12==2.20.5
[pip3] torch==2.4.0
vLLM Version: 0.6.1.post2
vLLM Build Flags:
CUDA Archs: Not Set; ROCm: Disabled; Neuron: Disabled
GPU Topology:
GPU0	CPU Affinity	NUMA Affinity	GPU NUMA ID
GPU0	 X 	0-7	0		N/A
"""

ENV_PRINTENV = """\
HOSTNAME=trainer-7
NCCL_DEBUG=WARN
NCCL_IB_HCA=mlx5_0:1,mlx5_3:1
NCCL_DMABUF_ENABLE=0
UCX_TLS=rc,cuda_copy
CUDA_VISIBLE_DEVICES=0,1,2,3
VLLM_ALL2ALL_BACKEND=deepep_v2
HF_TOKEN=hf_abcdefghijklmnop
VLLM_API_KEY=sk-very-secret
NCCL_KEY_PATH=/etc/nccl
PATH=/usr/bin:/bin
"""

ENV_EXPORT = """\
# sourced by the service
export NCCL_SOCKET_IFNAME=bond1
export UCX_TLS="rc,cuda_copy,cuda_ipc"
export CUDA_VISIBLE_DEVICES=4,5
"""

ENV_SECTIONS = """\
# docker exec vllm env | sort   (two nodes)
### node-r1
NCCL_IB_HCA=mlx5_2
VLLM_HOST_IP=10.1.0.11
### node-r2
NCCL_IB_HCA=mlx5_2
VLLM_HOST_IP=10.1.0.12
"""

LAUNCH_VLLM = """\
# started by hand on the head node
VLLM_ALL2ALL_BACKEND=deepep_v2 \\
vllm serve moonshotai/Kimi-K3 \\
  --tensor-parallel-size 8 --data-parallel-size 2 \\
  --enable-expert-parallel \\
  --max-model-len 262144 --gpu-memory-utilization 0.9 \\
  --api-key sk-do-not-print 2>&1 | tee /var/log/vllm.log
"""

LAUNCH_DOCKER = """\
$ docker run -d --gpus all --shm-size=32g -e NCCL_IB_HCA=mlx5_0 -e HF_TOKEN=hf_secret123 \\
    -v /models:/models vllm/vllm-openai:v0.26.1@sha256:1111111111111111111111111111111111111111111111111111111111111111 \\
    --model /models/llama --no-enable-prefix-caching -tp 4
"""

LAUNCH_SCRIPT = """\
#!/bin/bash
#SBATCH --job-name=k3 --gres=gpu:8
module load cuda/13.0
source /opt/venvs/k3/bin/activate
IMG=vllm/vllm-openai:kimi-k3
export NCCL_SOCKET_IFNAME=bond0
cd /scratch/k3
srun docker run --rm --gpus all --ipc=host $IMG moonshotai/Kimi-K3 --tensor-parallel-size 8 \\
    --enable-prefix-caching
"""

LAUNCH_PYTHON = "python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen3-8B --port 8001 --enable-prefix-caching\n"
LAUNCH_TORCHRUN = "torchrun --nproc-per-node 8 --nnodes 2 train.py --config cfg.yaml\n"
LAUNCH_RAY = "ray start --head --node-ip-address 10.3.3.1 --port 6379\n"
LAUNCH_CMDLINE = "vllm\x00serve\x00moonshotai/Kimi-K3\x00--tensor-parallel-size\x008\x00--enable-prefix-caching\x00"

PIP_FREEZE_MIXED = """\
aiohttp==3.12.15
numpy==2.2.6
nvidia-cublas==13.0.0.19
nvidia-cuda-runtime==13.0.96
nvidia-nccl-cu13==2.27.7
nvidia-cudnn-cu12==9.10.2.21
torch==2.9.0+cu130
vllm @ file:///wheels/vllm-0.27.1-cp38-abi3-linux_x86_64.whl
xformers==0.0.32+cu129
"""

PIP_LIST = """\
Package                  Version
------------------------ ------------
torch                    2.8.0+cu128
vllm                     0.10.2
nvidia-nccl-cu12         2.27.3
"""

DOCKER_INSPECT = """\
[
    {
        "Id": "abc123abc123abc123abc123abc123abc123abc123abc123abc123abc123abcd",
        "Path": "vllm",
        "Args": [
            "serve",
            "moonshotai/Kimi-K3",
            "--tensor-parallel-size",
            "8",
            "--all2all-backend",
            "deepep_v2"
        ],
        "State": {
            "Status": "exited",
            "Running": false,
            "OOMKilled": true,
            "ExitCode": 137,
            "Error": ""
        },
        "RestartCount": 2,
        "HostConfig": {
            "IpcMode": "private",
            "ShmSize": 67108864,
            "NetworkMode": "host"
        },
        "Config": {
            "Hostname": "gpu-z17",
            "Env": [
                "NCCL_SOCKET_IFNAME=eth2",
                "VLLM_API_KEY=abc",
                "PATH=/usr/bin"
            ],
            "Image": "vllm/vllm-openai:kimi-k3"
        },
        "RepoDigests": [
            "vllm/vllm-openai@sha256:2222222222222222222222222222222222222222222222222222222222222222"
        ]
    }
]
"""

DOCKER_IMAGE_INSPECT = """\
[{"Id": "sha256:3333333333333333333333333333333333333333333333333333333333333333",
  "RepoTags": ["vllm/vllm-openai:v0.27.1"],
  "RepoDigests": ["vllm/vllm-openai@sha256:4444444444444444444444444444444444444444444444444444444444444444"],
  "Config": {"Env": ["CUDA_VERSION=12.9.1"], "Entrypoint": ["vllm", "serve"]}}]
"""

COMPOSE = """\
# compose.yaml on gpu-c07
x-vllm: &vllm
  image: vllm/vllm-openai:v0.27.1
  ipc: host
  shm_size: 16gb
services:
  k3:
    <<: *vllm
    command: >
      moonshotai/Kimi-K3 --tensor-parallel-size 8
      --max-model-len 131072
    environment:
      - NCCL_IB_HCA=mlx5_0,mlx5_1
      - HF_HOME=/cache
      - NCCL_DEBUG
    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: all, capabilities: [gpu]}]}}}
  metrics:
    image: prom/prometheus:v3.1.0
    entrypoint: ["/bin/prometheus", "--config.file=/etc/prometheus/prometheus.yml"]
    network_mode: host
"""

DOCKER_PS = """\
CONTAINER ID   IMAGE                      COMMAND                  CREATED          STATUS                      PORTS     NAMES
78656416b39f   vllm/vllm-openai:v0.14.1   "vllm serve --model …"   41 seconds ago   Exited (1) 29 seconds ago             k3-trial
"""
DOCKER_PS_FORMAT = """\
$ docker ps -a --format '{{.ID}}  {{.Image}}  {{.Status}}  {{.Names}}'
b2e4f6a8c0d1  registry.corp.example/ml/vllm:0.27.0-cu130-slim  Exited (1) 4 minutes ago  vllm-k3-try2
"""
K8S_GET_PODS = """\
$ kubectl -n llm get pods -o wide
NAME          READY   STATUS             RESTARTS      AGE   IP             NODE          NOMINATED NODE   READINESS GATES
kimi-k3-0     0/1     CrashLoopBackOff   4 (51s ago)   9m    10.233.14.9    b300-ib-a14   <none>           <none>
kimi-k3-0-1   0/1     CrashLoopBackOff   4 (48s ago)   9m    10.233.15.22   b300-ib-a15   <none>           <none>
"""
K8S_GET_NODES = """\
NAME          STATUS     ROLES    AGE    VERSION
b300-ib-a14   Ready      <none>   212d   v1.30.4
b300-ib-a15   NotReady   <none>   212d   v1.30.4
"""
FREE = """\
$ hostname; free -g
h100-ray-a
               total        used        free      shared  buff/cache   available
Mem:            2015         88        1890           3          37        1921
Swap:              0           0           0
"""
SCONTROL_JOB = """\
JobId=48213 JobName=qwen3-serve
   UserId=mkoval(41877) GroupId=nlp(4100) MCS_label=N/A
   JobState=FAILED Reason=NonZeroExitCode Dependency=(null)
   NodeList=gpu-a100-017 BatchHost=gpu-a100-017
"""
SACCT = """\
JobID           JobName        NodeList      State ExitCode
------------ ---------- --------------- ---------- --------
88123        vllm-llama+    gpu-a100-017     FAILED      1:0
"""
DOCKERFILE = """\
# vllm-lattice: our custom ops on top of the release image
ARG BASE=vllm/vllm-openai:v0.11.0
FROM ${BASE}
RUN pip install --no-cache-dir /wheels/lattice_ops-0.4.2-cp312-linux_x86_64.whl \\
    && rm -rf /wheels
COPY entrypoint.sh /entrypoint.sh
ENTRYPOINT ["/entrypoint.sh"]
"""

SUPERVISOR_PROGRAM = """\
; /etc/supervisor/conf.d/vllm.conf
[program:vllm-qwen]
command=/opt/vllm/.venv/bin/vllm serve /models/Qwen2.5-32B --port 8001
    --tensor-parallel-size 4 --max-num-seqs 96
environment=CUDA_VISIBLE_DEVICES="0,1,2,3",VLLM_LOGGING_LEVEL="DEBUG"
autorestart=unexpected
"""
SYSTEMD_UNIT = """\
# /etc/systemd/system/vllm.service
[Unit]
Description=vLLM OpenAI server
Requires=docker.service

[Service]
Restart=always
Environment="NCCL_DEBUG=WARN" "VLLM_LOGGING_LEVEL=DEBUG"
ExecStartPre=-/usr/bin/docker rm -f vllm
ExecStart=-/usr/bin/docker run --rm --name vllm --gpus all --ipc=host vllm/vllm-openai:v0.10.1.1 \\
  --model Qwen/Qwen2.5-32B-Instruct-AWQ --tensor-parallel-size 2
# git diff HEAD -- vllm.service
-ExecStart=/usr/bin/docker run --rm --name vllm --gpus all --ipc=host vllm/vllm-openai:v0.9.0 --model m
"""

SYSTEMCTL_STATUS = """\
● vllm-qwen.service - vLLM OpenAI server (qwen3-32b)
     Loaded: loaded (/etc/systemd/system/vllm-qwen.service; enabled; preset: enabled)
     Active: activating (auto-restart) (Result: signal) since Tue 2026-05-05 10:23:23 UTC; 4s ago
    Process: 1876511 ExecStart=/opt/vllm/bin/vllm serve Qwen/Qwen3-32B --max-model-len 40960 (code=killed, signal=KILL)
   Main PID: 1876511 (code=killed, signal=KILL)
"""

POD_YAML = """\
apiVersion: v1
kind: Pod
metadata:
  name: k3-prefill-0
spec:
  nodeName: gpu-node-44
  containers:
  - name: vllm
    image: vllm/vllm-openai:kimi-k3
    command: ["vllm", "serve"]
    args:
    - moonshotai/Kimi-K3
    - --tensor-parallel-size
    - "8"
    - --enable-prefix-caching
    env:
    - name: UCX_TLS
      value: rc,cuda_copy
    - name: HF_TOKEN
      valueFrom:
        secretKeyRef: {name: hf, key: token}
    resources:
      limits:
        nvidia.com/gpu: 8
    volumeMounts:
    - name: shm
      mountPath: /dev/shm
  volumes:
  - name: shm
    emptyDir:
      medium: Memory
      sizeLimit: 32Gi
"""

DEPLOYMENT_JSON = """\
{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "llm"},
 "spec": {"template": {"spec": {"containers": [
   {"name": "vllm", "image": "vllm/vllm-openai:v0.11.0", "args": ["--model", "m", "--max-model-len", "8192"]}]}}}}
"""

DESCRIBE_POD = """\
Name:             k3-decode-1
Namespace:        serving
Node:             gpu-c12/10.9.9.12
Status:           Running
Containers:
  vllm:
    Image:         vllm/vllm-openai:kimi-k3
    Image ID:      docker.io/vllm/vllm-openai@sha256:5555555555555555555555555555555555555555555555555555555555555555
    Args:
      moonshotai/Kimi-K3
      --tensor-parallel-size
      8
    State:          Waiting
      Reason:       CrashLoopBackOff
    Last State:     Terminated
      Reason:       OOMKilled
      Exit Code:    137
    Restart Count:  4
    Limits:
      nvidia.com/gpu:  8
    Environment:
      NCCL_DEBUG:  INFO
    Mounts:
      /dev/shm from dshm (rw)
Conditions:
  Type              Status
  Ready             False
Volumes:
  dshm:
    Type:       EmptyDir (a temporary directory that shares a pod's lifetime)
    Medium:     Memory
    SizeLimit:  <unset>
Events:
  Type     Reason   Age                From     Message
  ----     ------   ----               ----     -------
  Warning  BackOff  12s (x7 over 3m)   kubelet  Back-off restarting failed container vllm
"""

DESCRIBE_NODE = """\
Name:               gpu-c12
Roles:              <none>
Labels:             kubernetes.io/hostname=gpu-c12
                    nvidia.com/cuda.driver.major=570
                    nvidia.com/cuda.driver.minor=148
                    nvidia.com/cuda.driver.rev=08
                    nvidia.com/gpu.count=8
                    nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3
Taints:             <none>
Capacity:
  cpu:                128
  nvidia.com/gpu:     8
Allocatable:
  nvidia.com/gpu:     8
System Info:
  Kernel Version:             6.5.0-1024-nvidia
Events:             <none>
"""

PROMETHEUS = """\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="kimi-k3"} 12.0
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{engine="0",model_name="kimi-k3"} 1000.0
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{engine="0",model_name="kimi-k3"} 250.0
vllm:cache_config_info{block_size="16",enable_prefix_caching="False",engine="0",gpu_memory_utilization="0.9"} 1.0
"""

LSMOD_WITH = """\
Module                  Size  Used by
nvidia_peermem         16384  0
mlx5_ib               462848  0
mlx5_core            2125824  1 mlx5_ib
nvidia              11624448  3 nvidia_peermem
"""
LSMOD_WITHOUT = """\
Module                  Size  Used by
mlx5_core            2125824  0
nvidia              11624448  2
"""

IBSTAT = """\
CA 'mlx5_0'
	CA type: MT4129
	Number of ports: 1
	Port 1:
		State: Active
		Physical state: LinkUp
		Link layer: InfiniBand
CA 'mlx5_1'
	CA type: MT4129
	Port 1:
		State: Down
		Physical state: Disabled
		Link layer: InfiniBand
"""
IBV_DEVINFO = """\
hca_id:	mlx5_4
	transport:			InfiniBand (0)
	phys_port_cnt:			1
		port:	1
			state:			PORT_ACTIVE (4)
			link_layer:		Ethernet
"""

UPTIME_MULTI = """\
root@gpu-q3:~# date
Mon Feb  2 10:00:00 UTC 2026
root@gpu-q3:~# cat /proc/uptime
7200.50 100000.00
root@gpu-q3:~# uptime
 10:00:00 up  2:00,  1 user,  load average: 0.00, 0.01, 0.05
"""
UPTIME_DATE_ONLY = "Mon, 02 Feb 2026 10:00:00 +0000\n"
UPTIME_S = "2026-02-02 08:00:00\n"

IP_ADDR = """\
1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN group default qlen 1000
    inet 127.0.0.1/8 scope host lo
2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 qdisc mq state UP group default qlen 1000
    link/ether 0c:42:a1:00:00:01 brd ff:ff:ff:ff:ff:ff
    inet 192.168.50.7/24 brd 192.168.50.255 scope global eth0
3: ib0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 4092 qdisc mq state UP group default qlen 256
    inet 10.100.0.7/16 scope global ib0
"""
IP_BRIEF = """\
lo               UNKNOWN        127.0.0.1/8 ::1/128
eth0             UP             192.168.50.7/24 fe80::1/64
ib0              UP             10.100.0.7/16
"""
IFCONFIG = """\
eth0: flags=4163<UP,BROADCAST,RUNNING,MULTICAST>  mtu 1500
        inet 172.20.0.3  netmask 255.255.0.0  broadcast 172.20.255.255
        ether 02:42:ac:14:00:03  txqueuelen 0  (Ethernet)
"""

PS_EF = """\
UID          PID    PPID  C STIME TTY          TIME CMD
root           1       0  0 08:00 ?        00:00:05 /bin/bash /entrypoint.sh
root          57       1 99 08:00 ?        01:10:00 /usr/bin/python3 /usr/local/bin/vllm serve moonshotai/Kimi-K3 --tensor-parallel-size 8 --enable-prefix-caching
root          60      57  0 08:01 ?        00:00:01 VLLM::EngineCore
"""
PS_AUX = """\
USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND
svc        40211  310  2.1 9.9e7 1.2e6 ?        Rl   Jan02 812:10 python3 -m vllm.entrypoints.openai.api_server --model x/y
"""

MODEL_CONFIG = """\
{
  "architectures": [
    "KimiK3ForCausalLM"
  ],
  "model_type": "kimi_k3",
  "num_attention_heads": 96,
  "n_routed_experts": 896,
  "max_position_embeddings": 1048576
}
"""

OTHER_JSON = '{"requests": 10, "ok": true}\n'
# `kubectl cluster-info dump`'s typed list (its events.json): read item by item like a List
EVENT_LIST_JSON = ('{"kind": "EventList", "apiVersion": "v1", "items": [{"metadata": {"name": "n1.18d8"}, '
                   '"involvedObject": {"kind": "Node", "name": "gpu-n1"}, "reason": "Shutdown", '
                   '"message": "Shutdown manager detected shutdown event", "firstTimestamp": "2026-09-26T13:47:12Z"}]}\n')
MANIFEST_JSON = '{"k3logs_manifest": {"node": "gpu-m1", "collected_at": "2026-03-01T10:00:00Z", "version": 1}}\n'
MANIFEST_TOML = '[k3logs_manifest]\nnode = "gpu-m2"\ncollected_at = "2026-03-01T10:00:00Z"\n'

# ---- texts that are logs, not dumps -------------------------------------------------------------
LOG_VLLM = "INFO 10-02 03:14:42 [api_server.py:1896] vLLM API server version 0.27.1\nINFO 10-02 03:14:42 [utils.py:233] non-default args: {'model_tag': 'x'}\n"
LOG_DOCKER_JSON = '{"log":"INFO 10-02 03:14:40 [__init__.py:216] Automatically detected platform cuda.\\n","stream":"stdout","time":"2026-10-02T03:14:40.224857057Z"}\n{"log":"x\\n","stream":"stdout","time":"2026-10-02T03:14:41Z"}\n'
LOG_CRI = "2026-10-02T03:14:40.224857057Z stdout F INFO 10-02 03:14:40 [__init__.py:216] Automatically detected platform cuda.\n"
LOG_DMESG = "[    6.200000] Linux version 6.8.0-79-generic (buildd@lcy02)\n[   21.946699] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.95.05\n"
LOG_EVENTS = "LAST SEEN   TYPE      REASON    OBJECT             MESSAGE\n2m          Warning   BackOff   pod/vllm-0         Back-off restarting failed container\n"
LOG_NCCL = "gpu-a:131:131 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\ngpu-a:131:131 [0] NCCL INFO NCCL version 2.27.7+cuda13.0\n"
LOG_JOURNAL = "Mar 04 10:20:51 gpu-node-12 kubelet[2291]: I0304 10:20:51.220000    2291 kubelet.go:2432] \"SyncLoop ADD\"\n"
LOG_TRACEBACK = "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nRuntimeError: boom\n"
LOG_PASTED_RUN = "$ vllm serve m --tensor-parallel-size 2\n" + "INFO 10-02 03:14:42 [api_server.py:1896] vLLM API server version 0.27.1\n" * 5
LOG_PIP_INSTALL = "$ pip install vllm==0.9.0\nCollecting vllm==0.9.0\nSuccessfully installed vllm-0.9.0\n"


class S:  # the samples under one name for the tests below and the other test modules
    pass


for _name, _value in list(globals().items()):
    if _name.isupper():
        setattr(S, _name, _value)

DUMPS = [
    ("smi-wide", S.SMI_WIDE, "nvidia_smi"),
    ("smi-narrow", S.SMI_NARROW, "nvidia_smi"),
    ("smi-failed", S.SMI_FAILED, "nvidia_smi"),
    ("smi-list", S.SMI_LIST, "nvidia_smi_list"),
    ("smi-list-bare", S.SMI_LIST_BARE, "nvidia_smi_list"),
    ("smi-failed-prompt", S.SMI_FAILED_PROMPT, "nvidia_smi"),
    ("smi-no-devices", S.SMI_NO_DEVICES, "nvidia_smi"),
    ("smi-q", S.SMI_Q, "nvidia_smi_q"),
    ("smi-q-xml", S.SMI_Q_XML, "nvidia_smi_q"),
    ("topo-nic-legend", S.TOPO, "nvidia_topo"),
    ("topo-spaces", S.TOPO_SPACES_PCIE, "nvidia_topo"),
    ("csv-units", S.CSV_UNITS, "nvidia_smi_csv"),
    ("csv-nounits", S.CSV_NOUNITS, "nvidia_smi_csv"),
    ("csv-noheader", S.CSV_NOHEADER, "nvidia_smi_csv"),
    ("csv-command", S.CSV_WITH_COMMAND, "nvidia_smi_csv"),
    ("collect-env-sectioned", S.COLLECT_ENV_SECTIONED, "collect_env"),
    ("collect-env-flat", S.COLLECT_ENV_FLAT, "collect_env"),
    ("printenv", S.ENV_PRINTENV, "env"),
    ("export", S.ENV_EXPORT, "env"),
    ("env-sections", S.ENV_SECTIONS, "env"),
    ("launch-vllm", S.LAUNCH_VLLM, "launch_cmd"),
    ("launch-docker", S.LAUNCH_DOCKER, "launch_cmd"),
    ("launch-script", S.LAUNCH_SCRIPT, "launch_cmd"),
    ("launch-python", S.LAUNCH_PYTHON, "launch_cmd"),
    ("launch-torchrun", S.LAUNCH_TORCHRUN, "launch_cmd"),
    ("launch-ray", S.LAUNCH_RAY, "launch_cmd"),
    ("launch-proc-cmdline", S.LAUNCH_CMDLINE, "launch_cmd"),
    ("pip-freeze", S.PIP_FREEZE_MIXED, "pip_freeze"),
    ("pip-list", S.PIP_LIST, "pip_freeze"),
    ("docker-inspect", S.DOCKER_INSPECT, "docker_inspect"),
    ("docker-image-inspect", S.DOCKER_IMAGE_INSPECT, "docker_inspect"),
    ("pod-yaml", S.POD_YAML, "pod_spec"),
    ("docker-ps", S.DOCKER_PS, "docker_ps"),
    ("docker-ps-format", S.DOCKER_PS_FORMAT, "docker_ps"),
    ("kubectl-get-pods", S.K8S_GET_PODS, "k8s_get"),
    ("kubectl-get-nodes", S.K8S_GET_NODES, "k8s_get"),
    ("free", S.FREE, "free"),
    ("scontrol-show-job", S.SCONTROL_JOB, "slurm_job"),
    ("sacct", S.SACCT, "slurm_job"),
    ("dockerfile", S.DOCKERFILE, "dockerfile"),
    ("systemd-unit", S.SYSTEMD_UNIT, "systemd_unit"),
    ("supervisor-program", S.SUPERVISOR_PROGRAM, "supervisor_program"),
    ("systemctl-status", S.SYSTEMCTL_STATUS, "systemctl_status"),
    ("compose", S.COMPOSE, "compose"),
    ("deployment-json", S.DEPLOYMENT_JSON, "pod_spec"),
    ("describe-pod", S.DESCRIBE_POD, "k8s_describe"),
    ("describe-node", S.DESCRIBE_NODE, "k8s_describe"),
    ("prometheus", S.PROMETHEUS, "prometheus"),
    ("lsmod", S.LSMOD_WITH, "lsmod"),
    ("ibstat", S.IBSTAT, "ibstat"),
    ("ibv-devinfo", S.IBV_DEVINFO, "ibstat"),
    ("uptime-transcript", S.UPTIME_MULTI, "uptime"),
    ("date", S.UPTIME_DATE_ONLY, "uptime"),
    ("uptime-s", S.UPTIME_S, "uptime"),
    ("ip-addr", S.IP_ADDR, "ip_addr"),
    ("ip-brief", S.IP_BRIEF, "ip_addr"),
    ("ifconfig", S.IFCONFIG, "ip_addr"),
    ("ps-ef", S.PS_EF, "ps"),
    ("ps-aux", S.PS_AUX, "ps"),
    ("model-config", S.MODEL_CONFIG, "model_config"),
    ("json", S.OTHER_JSON, "json"),
    ("event-list-json", EVENT_LIST_JSON, "pod_spec"),
    ("manifest-json", S.MANIFEST_JSON, "manifest"),
    ("manifest-toml", S.MANIFEST_TOML, "manifest"),
]

LOGS = [
    ("vllm", S.LOG_VLLM), ("docker-json-file", S.LOG_DOCKER_JSON), ("cri", S.LOG_CRI), ("dmesg", S.LOG_DMESG),
    ("kubectl-get-events", S.LOG_EVENTS), ("nccl", S.LOG_NCCL), ("journald", S.LOG_JOURNAL),
    ("traceback", S.LOG_TRACEBACK), ("pasted-run-with-output", S.LOG_PASTED_RUN), ("pip-install", S.LOG_PIP_INSTALL),
    ("prose-from", "From #ml-eval channel, 2026-09-03 13:37 UTC:\n  kicking off lm-eval against prod\n"),
    ("empty", ""), ("blank", "\n\n  \n"),
]


@pytest.mark.parametrize("text,kind", [(t, k) for _, t, k in DUMPS], ids=[n for n, _, _ in DUMPS])
def test_dump_kinds(text, kind):
    got = sniff_dump(text)
    assert got is not None, "not recognised as a dump"
    assert got[0] == kind, got
    assert got[1] and "\n" not in got[1]


def test_every_dump_kind_has_a_sample():
    assert {k for _, _, k in DUMPS} == set(DUMP_KINDS)


@pytest.mark.parametrize("text", [t for _, t in LOGS], ids=[n for n, _ in LOGS])
def test_logs_are_not_dumps(text):
    assert sniff_dump(text) is None


def test_decides_by_content_with_a_prompt_and_a_comment_on_top():
    assert sniff_dump("# collected 2026-01-01\n$ nvidia-smi\n" + S.SMI_WIDE)[0] == "nvidia_smi"
    assert sniff_dump("\ufeff" + S.LSMOD_WITH)[0] == "lsmod"
    assert sniff_dump(S.SMI_WIDE.replace("\n", "\r\n"))[0] == "nvidia_smi"


def test_a_shell_script_is_a_launch_command_only_when_it_launches():
    assert sniff_dump(S.LAUNCH_SCRIPT)[1] == "shell script running docker run"
    # the launch is one line among its setup lines; without it, a script is no launch command
    assert sniff_dump("\n".join(ln for ln in S.LAUNCH_SCRIPT.splitlines() if "docker" not in ln and "--" not in ln)
                      + "\necho done\n") is None


def test_log_containing_a_table_late_is_still_a_log():
    text = S.LOG_VLLM * 20 + S.SMI_WIDE
    assert sniff_dump(text) is None


def test_transcript_segments_and_command_kinds():
    lines = S.UPTIME_MULTI.splitlines()
    segs = split_transcript(lines)
    assert [s.command for s in segs] == ["date", "cat /proc/uptime", "uptime"]
    assert segs[0].host == "gpu-q3" and segs[0].prompt_line == 0 and segs[0].start == 1
    assert command_kind("docker exec vllm env | grep NCCL") == "env"
    assert command_kind("nvidia-smi topo -m") == "nvidia_topo"
    assert command_kind("nvidia-smi -q -i 3") == "nvidia_smi_q"
    assert command_kind("kubectl exec p -- nvidia-smi") == "nvidia_smi"
    assert command_kind("nvidia-smi --query-gpu=index,name --format=csv") == "nvidia_smi_csv"
    assert command_kind("docker ps") == "docker_ps"
    assert command_kind("hostname; free -g") == "free"
    assert command_kind("sacct -j 88123 --format=JobID,State") == "slurm_job"
    # what `kubectl get -o jsonpath` prints depends on the path: its content decides
    assert command_kind("kubectl get lws k3 -o jsonpath='{.spec.env}'") is None


def test_truncated_head_of_a_big_json_dump():
    head = S.DOCKER_INSPECT[: len(S.DOCKER_INSPECT) // 2]
    assert sniff_dump(head)[0] == "docker_inspect"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=2000))
def test_never_raises_on_arbitrary_text(text):
    got = sniff_dump(text)
    assert got is None or got[0] in DUMP_KINDS


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([t for _, t, _ in DUMPS]), st.integers(0, 4000), st.text(max_size=50))
def test_never_raises_on_cut_and_garbled_dumps(text, cut, junk):
    got = sniff_dump(text[:cut] + junk + text[cut:cut + 300])
    assert got is None or got[0] in DUMP_KINDS


def test_non_string_input_is_not_a_dump():
    assert sniff_dump(None) is None  # type: ignore[arg-type]
