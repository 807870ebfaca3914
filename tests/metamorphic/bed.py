"""Variants of corpus cases and their verdicts, shared by tests/test_metamorphic.py and benchmarks/metamorphic.py:
write a variant with its truth, diagnose it in-process (the catalogue loaded once), score it with
k3logs.evaluate.score (the same scorer as `k3logs eval`) and say what differs."""
from __future__ import annotations

import json
import re
import shutil
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from k3logs import api
from k3logs.catalogue.load import load_catalogue
from k3logs.evaluate.score import CaseScore, score
from k3logs.pipeline import run
from k3logs.settings import Settings

from . import timefmt
from .transforms import SERVING, STOP, TRANSFORMS, Mapping, NotApplicable, Profile, apply, profile

REPO = Path(__file__).resolve().parents[2]
CORPORA = REPO / "corpora"

# Failures k3logs has today, found by this bed (`benchmarks/metamorphic.py --all` on 123 cases, 2026-12-02):
# (case, transform) -> what in k3logs is wrong. tests/test_metamorphic.py
# applies them as strict xfail: a fix shows as a failure that asks to take its entry out.
DROPPED_NODE = ("evidence_missing names a node whose logs are absent where the bundle names it (k3logs/diagnose/missing.py): "
                "c214, c703, c739, c754 and c777 name it nowhere (only a count is possible), c740 only as an NCCL socket's remote peer; c309's note writes the two hosts with their stages "
                "between them ('h200-pp-a stage 0, h200-pp-b stage 1'), no list; c568's note names it alone on a line "
                "two lines above its --node-rank; c303 keeps a log of the node outside its folder (its pod's init "
                "container, by kubectl), and c764 and c883 (the job's srun output at the top holds its task's lines), so the "
                "node is not missing a log; c605 names it only inside its own folder "
                "(its host-info and docker inspect), which goes with it, and c766 in its own docker log; c840 and c776 name it "
                "nowhere outside its folder, nor do c904 and c905; c859 keeps the node's own NCCL debug files at the top "
                "(nccl-logs/nccl.HOST.PID.log), so the node is not missing a log; c921's Slurm output at the top holds "
                "its task's lines, as c764's; c941's ticket names the pair as 'dgx-b200-041/042', the second only by its number; "
                "c954's launch note names the node only before a command ('# worker node gpu-a40-11: ray start ...'), "
                "and c963 names it nowhere outside its folder, nor c970 (only its own docker inspect, which goes with it)")
LONE_ARCHIVE = ("a bundle that is one archive (an incident's .tar.zst) inside another container: the container's single "
                "member is taken off the names as a lone top folder, or kept with a top folder around it, so the first "
                "cause's file loses or gains a leading part (incident-N.tar.zst/...)")
SKEW_TIE = ("nodes are ordered on their raw clocks when their offset is below --skew-tolerance (so it is not "
            "corrected): a cause every node prints in the same second moves to the node whose clock is 1 s early")
DROPPED_NODE_UNREAD = ("evidence_missing names the dropped node only where the bundle lists it in a form missing.py reads "
                       "(a launch command's node list, a job's node list): c999 and c1017 get the count of nodes the "
                       "launch command names (--nnodes), c1013, c1021, c1023 and c1034 name it only in notes, "
                       "kubectl/Slurm tables or lines that went with the node (not yet examined one by one)")
KNOWN: dict[tuple[str, str], str] = {
    **{(c, "drop-node"): DROPPED_NODE_UNREAD for c in (
        "c999-xid48-dbe-docker-hostnet-pp3", "c1013-dp32-ep-4node-dmabuf524-skewed-node",
        "c1017-systemd-pp-stuck-rank-watchdog-elsewhere", "c1021-pd-nixl-decode-rail-down",
        "c1023-slurm-dp16-ep-xid94-one-engine", "c1034-slurm-k3-b200-xid149-nvlink-capture",
        "c1042-docker-prodstack-router-3-replicas-one-cuda-oom-foreign-notebook",
        "c1044-k8s-pd-nixl-two-decodes-one-ucx-segfault", "c1056-gcp-logging-xid119-gsp-k3-a4x",
        "c1084-dsv31-dp8tp2-pplx-headless-segfault-capture", "c1100-xid119-gsp-timeout-pp-rank-stall",
        "c1111-k3-dp32-slurm-one-node-r575", "c1113-ray-efa-ofi-plugin-libfabric-skew",
        "c1116-kuberay-workers-scaled-to-zero-llama405b", "c1127-dp2-headless-k3-deepep-no-peermem-node2",
        "c1136-nccl-timeout-gsp-hang-2node-ray-slurm", "c1156-decode-host-oomkill-nixl-cpu-buffer",
        "c1157-decode-nixl-push-vs-pull-config-mismatch", "c1160-healthy-2p1d-p2pnccl-rolling-prefill-restart",
        "c1171-journal-offsets-oom-k3-dp12-gb300", "c1184-systemd-2node-mp-moe-assert-rank12-restarts",
        "c1185-torchrun-pp2-rank11-segv-batch", "c1196-two-node-hang-then-watchdog",
        "c1197-compose-two-hosts-init-abort",
        "c1198-pp2-h200-hang-then-watchdog-storm", "c1200-b300-two-node-systemd-stall",
        "c1203-two-node-ray-docker-rail-blip", "c1204-two-node-k3-start-stops-at-pp-comm",
        "c1224-dp2-ep16-two-journals-engine-lockup", "c1254-llama405b-pp2-ray-aws-serving-died",
        "c1273-ray-3node-pp3-a100-init-error", "c1286-two-vm-ray-replica-loses-pipeline-stage",
        "c1288-k3-rack-slot-folders-three-node-midserve", "c1319-ray-4node-pp4-midday-collapse",
        "c1323-systemd-4node-pp4-cascade", "c1339-ray-two-node-405b-eval-batch-crash",
        "c1344-slurm-pyxis-2node-second-node-init", "c1364-k8s-statefulset-pod-moved-during-node-maintenance",
        "c1370-three-node-ray-start-aborts-while-loading", "c1380-kuberay-idle-gpu-worker-reclaimed",
        "c1385-ray-pp2-worker-gone-after-hours-serving", "c1388-l405-three-pods-stage-two-stops-answering")},
    **{("c1361-supervisord-tp-worker-vanished-no-restart", t): (
        "the supervisord program's log re-wrapped as a container's (or a journal's) is no longer a run on its host: "
        "its zone-less times are read in UTC, not the host's zone its syslog states, and the kill two hours apart")
        for t in ("wrap-docker", "wrap-cri", "wrap-kubectl", "wrap-journald", "wrap-journald-json", "wrap-podman")},
    **{("c1193-ray-pp4-worker-crash-mid-serving", t): (
        "the head's log re-wrapped as a host's journal is no longer the deployment's own log, so its readiness and "
        "stats are not the deployment's and the crash mid-serving reads as a start that never became ready (as c1067)")
        for t in ("wrap-journald", "wrap-journald-json")},
    **{(c, "rename-hosts"): (
        "two nodes on two NCCL builds, one each: which build is the odd one out follows the folders' order, which "
        "renamed hosts change (as c900)") for c in ("c1204-two-node-k3-start-stops-at-pp-comm",
                                                      "c1228-two-node-k3-start-fails-at-pp-init")},
    ("c928-kserve-llama33-70b-multinode-stuck", "drop-node"): (
        "the transform takes kubectl/ for a node's folder (every file in it is about one node's pod), but a folder of "
        "cluster listings is no node's: dropping it drops the only witness of that node, so nothing names it missing"),
    ("c1224-dp2-ep16-two-journals-engine-lockup", "noise-kernel"): (
        "the transform puts a link flap in the minutes the engine is locked up after the oom-kill: a stall after a "
        "flap is not survived (stalled_at), as in c808"),
    ("c1179-k3-tp12-gb300-trays-kda-heads", "rename-files"): (
        "every rank fails alike in the same second (the same AssertionError on each worker): which of them is cited "
        "first follows the files' names, and the transform renames them in a new order"),
    ("c1168-boot-seconds-mlx5-down-slurm-ray", "skew-beyond"): (
        "the cause is a kernel line in seconds since boot, made wall time through its node's boot time; with that "
        "node's clock moved 31 s and date readings added, it no longer comes first (not yet examined)"),
    **{("c1140-ray-oom-kill-worker-by-ip", w): (
        "the raylet's kill line takes the rank of the pid it names from that pid's lines the head relays; with the head's "
        "log wrapped (whole-second times from the wrapper) the kill line keeps its node but loses that rank (not yet "
        "examined)") for w in ("wrap-docker", "wrap-cri", "wrap-podman")},
    ("c1158-decode-pod-no-rdma-ucx-rc-unavailable", "renumber-pids"): (
        "the transform: UCX's '[host:pid:tid]' prefix is not among the pid contexts renumber-pids knows, so the variant's "
        "UCX warning names a pid none of its workers has any more, and loses that worker's rank"),
    ("c1044-k8s-pd-nixl-two-decodes-one-ucx-segfault", "rename-hosts"): (
        "the transform renames the folder decode-0 as if it were a host (it is a pod's short name), and the surviving "
        "decode's lines lose their node: an instance with no node is not counted as another instance serving on, so "
        "the decode that failed reads as a crash, not part of the requests failing"),
    **{(c, "noise-retries"): (
        "the root (a cloud's audit record, a node's condition row) has no process of its own and takes the phase the "
        "deployment reached; c10d connect retries added to the leader's log after its load began are "
        "distributed_init landmarks, and the phase follows them") for c in (
        "c1019-lws-worker-node-preempted-during-load", "c1104-k3-lws-worker-node-notready")},
    ("c808-slurm-mp-hostoom-serving-4node", "noise-kernel"): (
        "the transform puts a link flap that comes back in the very second of the oom-kill; the engine stalls from "
        "then on, and a stall after a flap is not survived (stalled_at), whatever else fell in that second. (It "
        "passed before by accident: the peers' watchdog errors that end ', NCCL version X' were taken for "
        "distributed-init landmarks, so for work after the stall.)"),
    ("c1064-slurm-ray-memcg-oomkill-dmesg-uptime", "wrap-kubectl"): (
        "a Slurm job's output wrapped as a pod's log: the pod's name becomes the file's node, so the 'Local node IP' "
        "lines are read as that node's own addresses, not paired with the launcher's announcements, and the kill's "
        "pid no longer reaches the Ray actor's rank"),
    **{("c1067-k8s-pod-nccl-file-ib-retry-pp2", t): (
        "the pods' NCCL debug files re-wrapped as a host's journal are no longer the deployment's own logs, and the "
        "outcome reads serving, not crashed (not analysed further)") for t in ("wrap-journald", "wrap-journald-json")},
    ("c1077-systemd-docker-port-busy-first-start-then-serving", "graceful-stop"): (
        "the transform dates the appended shutdown trail from the vLLM lines' own UTC times into a journal whose "
        "wrapper is the host's local time (UTC-6): the stop lands hours before the run (Dec 03 19:11 against a "
        "run from Dec 04 00:14), so the run is read as still serving"),
    ("c1025-llama70b-k8s-rolling-upgrade", "graceful-stop"): (
        "the transform stops the one pod's log it appends a shutdown to, and the case serves from two pods: the other "
        "still serves, so the deployment is serving, not stopped (the bed assumes one server)"),
    **{("c1038-k8s-qwen3-235b-emptydir-cache-limit-evicted-at-capture", t): (
        "the pods' logs are JSON lines of a log shipper (time, stream, log, kubernetes): a wrapper put around each "
        "one holds JSON inside a collector's line, which no collector writes, and the inner record is read as text, "
        "not taken apart as the shipper's JSON (its `log` field's landmarks place the phase differently)")
       for t in ("wrap-docker", "wrap-cri", "wrap-kubectl", "wrap-journald", "wrap-journald-json", "wrap-podman")},
    **{(c, "drop-node"): DROPPED_NODE for c in (
        "c214-healthy-k3-2node-deepep-rdma",
        "c303-k3-cu130-image-r575-node-toolkit-requirement-2node",
        "c309-moe-kernel-misaligned-address-pp2-ep-2node",
        "c568-healthy-2node-docker-nccl-connect-retries-plugin-fallback",
        "c605-k3-ofed-upgrade-leaves-nvidia-peermem-unloaded-nvshmem",
        "c703-journald-json-dmabuf524",
        "c766-docker-k3-2node-compile-cache-enospc",
        "c739-roce-port-down-k3-pp2-serving",
        "c840-ray-ip-only-pid-collision-cgoom",
        "c859-ib-retry-exceeded-serving-slurm",
        "c740-nccl-dmabuf524-k3-dp2-docker",
        "c754-docker-2node-xid94-ecc-cudagraph",
        "c764-slurm-ray-2node-scancel",
        "c883-pcie-aer-xid79-during-weight-load-slurm-2node-pp2",
        "c776-pp2-h200-docker-stalled-start",
        "c777-ray-pp2-h200-serving-crash",
        "c904-docker-memcg-oom-worker-load-pp2",
        "c905-healthy-dp2-ep16-stopped-maintenance",
        "c921-xid48-dbe-pp4-slurm-clock-skew",
        "c941-healthy-ib-flap-recovered-journald",
        "c954-ray-pp2-hetero-a100-40g-oom-load",
        "c963-xid119-gsp-profile-b200-nodedirs",
        "c970-host-oom-memcg-docker-node-folder-inspect",
    )},
    **{(c, t): LONE_ARCHIVE for c in ("c549-nvswitch-fatal-fm-log-nvls-2node-tarzst",
                                       "c741-mixed-cu12-cu13-wheels-importerror-targz")
       for t in ("pack-top", "pack-zip", "pack-zst", "pack-nested", "rename-files")},
    **{("c1092-roce-link-down-zip-node-missing", t): LONE_ARCHIVE
       for t in ("pack-top", "pack-zst", "pack-nested", "rename-files")},
    **{("c1095-xid119-gsp-nested-node-tarball", t): LONE_ARCHIVE
       for t in ("pack-top", "pack-tgz", "pack-zip", "pack-nested", "rename-files")},
    ("c741-mixed-cu12-cu13-wheels-importerror-targz", "pack-tgz"): LONE_ARCHIVE,
    ("c530-v1-ray-tp16-rank11-sigsegv-nccl-proxy-serving", "skew-within"): SKEW_TIE,
    ("c866-rotated-log-host-oom-lmcache", "rename-files"): (
        "a rotated log's parts are ordered by their names (vllm.log.1 before vllm.log); renamed, the part that ends in "
        "an earlier, clean shutdown may be read as the last, and the phase becomes shutdown"),
    ("c857-fabricmanager-down-802-flat", "rename-files"): (
        "with every file renamed (the host kept in each name), the fabric manager's journal line on hgx-h100-018 is no "
        "longer taken before the rendezvous failure; the rename changes which is first, not yet understood"),
    **{(c, "rename-hosts"): (
        "the transform renames the nodes that have logs, not the host only the launch file names: the renamed nodes "
        "no longer share its naming family, so the missing node is counted (--nnodes) but not named") for c in (
        "c545-llama405b-pp3-3node-oom-inference-rank13-partial", "c510-torchrun-master-port-29500-stale-agent-node2-missing")},
    ("c314-k3-ep24-experts-not-divisible-3node-lws", "skew-within"): SKEW_TIE,
    ("c789-xid79-pcibus-2node-mp", "skew-within"): SKEW_TIE,
    **{("c879-oom-load-ray-pp2-a100-40g-node", t): (
        "a worker's error and Ray's relayed copy of it in the head's log are stated in the same second; the worker's "
        "own line wins a tie it is in (it names its rank), but a clock a second early, or hosts renamed so that the "
        "copy's node loses the rank its host gave it, put the copy first, and the copy carries no rank")
       for t in ("rename-hosts", "skew-within", "skew-beyond")},
    ("c883-pcie-aer-xid79-during-weight-load-slurm-2node-pp2", "shift-clock"): (
        "the transform does not move journald JSON's __REALTIME_TIMESTAMP, so the kernel's Xid stays 98 days before "
        "everything else (the bed's limit, not k3logs')"),
    ("c784-flat-hostnamed-files-segfault", "rename-files"): (
        "flat files named by host (vllm-HOST.log, dmesg.HOST.txt) renamed apart: no line prints a host, so no host is "
        "known, and the names no longer share a template (dump001-HOST.log, notes006-HOST.dat); no rule takes the "
        "host-like tokens that the file names share as the hosts"),
    ("c406-k3-deepep-on-nvl72-no-rdma-nvshmem", "skew-within"): SKEW_TIE,
    **{("c902-ray-rtxpro-llama70b", t): (
        "a wrapper gives each line a time within its second: torch's sm_120 warning (10:23:04) and the 'no kernel "
        "image' error (10:23:05), a second apart in the bundle, come 0.99999 s apart, within the same-second tie, "
        "where the more specific signature wins") for t in ("wrap-docker", "wrap-cri", "wrap-kubectl",
                                                              "wrap-journald-json", "wrap-podman")},
    ("c900-k3-h200-2node-docker", "rename-hosts"): (
        "two nodes on two NCCL builds, one each: the build the bundle shows first is the deployment's, so the odd "
        "one out follows the folders' order, which renamed hosts change; the leader's build should be the reference "
        "(c526: the worker pulled a newer build; here it kept an older one), and a fact does not say which node leads"),
    **{("c1047-systemd-pd-mooncake-decode-unit-memorymax-oomkill", t): (
        "read in the zone the hosts' short-iso lines state (+08:00), the prefill's transfer failure (06:37:52, a "
        "whole second) and the decode's oom-kill (06:37:52.13) fall in the same second: a second of skew, or a flap "
        "the transform puts on the decode's link before them, reorders the tie") for t in ("skew-within",
                                                                                         "noise-kernel")},
    **{("c952-slurm-memcg-oomkill-kv-offload", t): (
        "the transform wraps the job's log in a wrapper whose times it writes in UTC, on a host whose own short-iso "
        "lines state +01:00: the job runs on its hosts and writes their zone, so the wrapped lines (a real wrapper of "
        "that host's would write them as the job did) move by an hour against the kernel's oom-kill")
       for t in ("wrap-kubectl", "wrap-journald", "wrap-journald-json")},
    **{("c993-venv-vllm-c-undefined-symbol-after-torch-upgrade", t): (
        "the transform gives the journal one pid for both runs of the log (vllm[30121] before and after the restart "
        "a day later): the failed start's import warning, printed before the new run's first landmark, is the "
        "serving run's by its pid, so its phase is serving (the session-start code reads the variant the same way)")
       for t in ("wrap-journald", "wrap-journald-json")},
    **{("c1264-torchrun-offline-batch-two-node-abort", t): (
        "per-node files named by node rank (node0.log, node1.log) with the node-rank-to-host map only in launch.sh: "
        "wrapped in a journal, the segfaulting worker's rank reads 8, not 13 (not yet examined)")
       for t in ("wrap-journald", "wrap-journald-json")},
    ("c1301-support-bot-chat-400s-after-model-push", "pack-nested"): (
        "the host's capture folder (collected/inf-a100-22/, named like a host, holding its var/) sits under the "
        "bundle's own two wrapping folders; the nested archives' folders on top of them are likely more than "
        "MAX_WRAPPING_FOLDERS looks through (not yet examined)"),
    ("c1324-slurm-tp16-batch-stalls-in-graph-capture", "rename-files"): (
        "the rank is the task's in the job's other output: .out and .err are one job's by their names (NAME-JOBID), "
        "which renaming every file takes away"),
    ("c1326-two-container-pp2-coder-engine-dies-under-burst", "rename-files"): (
        "the container's log is tied to its host by its file name, the container id `docker ps` lists "
        "(ID-json.log), which renaming every file takes away"),
    ("c1288-k3-rack-slot-folders-three-node-midserve", "noise-kernel"): (
        "the noise adds an Ethernet port's link flap on the failing node a few lines before its Xid; the flap's "
        "'Link down' is cited before the Xid (not yet examined)"),
    ("c1322-mp-2node-pp2-init-loop", "rename-hosts"): (
        "with the hosts renamed, the head's own 'vLLM is using nccl==2.28.9' is cited rather than the re-imaged "
        "node's 2.29.3 line (not yet examined)"),
    ("c1328-ray-pp3-405b-start-aborts-in-profiling", "wrap-docker"): (
        "the head's log wrapped in docker's json-file: the ECC error during memory profiling is placed in "
        "model_load, not kv_cache_init (not yet examined)"),
    ("c1361-supervisord-tp-worker-vanished-no-restart", "renumber-pids"): (
        "as c906: sudo's 'kill -9 32013' keeps the old pid, which no worker has after the renumbering (the bed's "
        "limit)"),
    **{(c, "renumber-pids"): (
        "the host pid the kernel names is tied to the container's pid by a process listing (ps, /proc NSpid) whose "
        "pids the transform does not renumber like the log's (the bed's limit; not examined case by case)")
        for c in ("c1369-pp2-overnight-stage1-worker-vanishes", "c1385-ray-pp2-worker-gone-after-hours-serving")},
    **{("c1408-ray-pp-worker-vanishes-mid-decode", t): (
        "the rank of the segfaulting Ray worker comes from its own log's name (worker-ID-JOB-PID.out); renaming the "
        "files, or a journald wrapper's own pid on its lines, takes that witness away (the bed's limit)")
        for t in ("rename-files", "wrap-journald", "wrap-journald-json")},
    ("c1416-slurm-2node-pp-hang-then-abort-storm", "noise-kernel"): (
        "the noise puts a link flap in the OOM kill's own millisecond on the same node: within a second the more "
        "specific statement wins, and a port down is a candidate cause there (the bed's limit)"),
    ("c930-ray-k8s-mistral-small-outage-0300", "skew-beyond"): (
        "kured's drain of its own node is corrected with that node's offset, while the events listing, now timed by "
        "its ages from the kubectl host's `date -u`, is not: the drain falls after the pods' Killing events (a line "
        "about a node is timed by the offset of the node it is about, not of the machine that wrote it; not yet "
        "fixed)"),
    **{(c, "shift-clock"): (
        "a zone timedatectl names is read by its rules: shifting every time by weeks moves the logs across a daylight "
        "saving change while timedatectl's printed offset stays, so the host's journal and the containers' UTC logs "
        "move an hour apart (the bed's limit: real bundles keep the two consistent)")
        for c in ("c1032-docker-host-oomkill-colocated-batch-job", "c880-gsp-xid119-silent-hang-k8s-tp8",
                  "c970-host-oom-memcg-docker-node-folder-inspect", "c1442-local-time-journal-fallback-hour")},
    ("c1461-p2pnccl-1p1d-two-hosts-decode-worker-gone", "noise-kernel"): (
        "the noise puts a link flap on the decode host in the second its worker vanished: a port down is a cause "
        "there, and a vanished worker only a guess (the bed's limit)"),
    **{(c, "drop-node"): (
        "with a node's folder dropped, the node the truth expects among the missing evidence is named only in a "
        "launch note, another pod's listing or the dropped files themselves (c1509: only its journald _HOSTNAME), or "
        "the dropped folder is a client's, not a node of the deployment (c1502: the load generator) (the others not "
        "yet examined one by one)")
        for c in ("c1447-slurm-2node-tp16-deepseek-ib", "c1461-p2pnccl-1p1d-two-hosts-decode-worker-gone",
                  "c1471-dsv31-hostnetwork-group-recreated", "c1484-kimi-k2-tp16-head-exits-in-seconds",
                  "c1489-llama405b-two-node-ray-eval-burst", "c1502-loadtest-engine-stall-then-crashloop-k8s",
                  "c1505-slurm-pp3-startup-hangs-one-gpu-gone", "c1509-tp16-journal-json-two-gpus-complain",
                  "c1515-docker-mp-pp2-all-ranks-watchdog-skewed-clock", "c1516-lws-405b-pp2-stuck-after-node-swap")},
    **{(c, "drop-node"): (
        "with a node's folder dropped, the node the truth expects among the missing evidence is named only in the "
        "dropped files or in lines missing.py does not read as a node list (rounds 36 and 37; not yet examined one by "
        "one)") for c in ("c1482-slurm-405b-stuck-in-first-profile-run", "c1522-slurm-ray-two-node-chatty-nccl",
                          "c1529-llama405b-pp2-ecc-fault-mid-serving",
                          "c1532-maverick-pp2-worker-vanishes-during-graph-capture",
                          "c1537-k3-two-node-systemd-context-window-raise", "c1547-docker-mooncake-client-timeouts",
                          "c1552-dsv31-dep16-decode-hang-two-nodes")},
    **{(c, "drop-node"): (
        "with a node's folder dropped, the node the truth expects among the missing evidence is named only in the "
        "dropped files or in lines missing.py does not read as a node list (rounds 38 and 39; not yet examined one by "
        "one)") for c in ("c1571-ray-2node-decommissioned-with-ray-stop", "c1574-slurm-2node-hang-then-scancel",
                          "c1577-torchrun-4node-kimi-batch-abort", "c1580-mp-multinode-coder-serving-500s",
                          "c1588-sosreport-pp2-peer-went-dark", "c1599-k3-slurm-overnight-creep",
                          "c1612-h200-third-node-r570-host", "c1614-l40s-second-node-compose-no-ipc",
                          "c1617-two-node-k3-minor-host-drift")},
    ("c1606-h200-pp2-link-fault-mid-traffic", "skew-within"): (
        "the head's clock one second ahead (within tolerance, not corrected) puts its relayed CUDA error before the "
        "other node's Xid in the same second (not yet examined)"),
    ("c1603-tmux-scrollback-tp4-container-start", "rename-hosts"): (
        "the transform renames the container's hex id to a name like a host's, which then outranks the shell "
        "prompt's host as the bundle's one node (the bed's limit: a container id is hex)"),
    **{("c1577-torchrun-4node-kimi-batch-abort", t): (
        "under journald's wrappers the segfaulting process's rank comes out one lower (26 for 27): the journal's "
        "_PID against the torchrun agent's pids (not yet examined)") for t in ("wrap-journald", "wrap-journald-json")},
    **{(c, "drop-node"): (
        "with a node's folder dropped, the node the truth expects among the missing evidence is named only in the "
        "dropped files or in lines missing.py does not read as a node list (rounds 40 and 41; as DROPPED_NODE_UNREAD)")
       for c in ("c1607-h200-second-node-cuda-802-after-maintenance", "c1618-xid79-skewed-node-slurm-pp2",
                 "c1620-healthy-stop-docker-pp2-tail-clock-behind", "c1633-k3-cudagraph-capture-oom-pp2",
                 "c1645-nginx-replica-logprobs-oom-500s", "c1653-slurm-h100-ibflap-survived-nvswitch-sxid-fatal",
                 "c1662-ray-logs-oom-kill-runai-load", "c1666-ray-oom-monitor-worker-serving",
                 "c1669-ib-retry-exceeded-srun-batch", "c1670-dmabuf524-datadirect-kuberay",
                 "c1686-nvswitch-sxid-xid74-dp1-docker-systemd", "c1688-detokenizer-overflow-one-apiserver",
                 "c1679-slurm-ray-scancel-after-eval", "c1694-deepepv2-gin-peermem-missing-lws",
                 "c1713-docker-gb300-head-hostname-loopback-gloo")},
    **{("c1668-slurm-ray-worker-memcg-oom-load", t): (
        "the raylet's 'A worker died or was killed' line has no time of its own, so the latest it can be is the next "
        "timed line (40 s before the kill the worker's drifting dmesg -T stamps); a wrapper stamps every line, the "
        "untimed one with its neighbour's time five minutes earlier, and the kill is then too far after the report "
        "to be placed at it (the bed's limit: a wrapper's stamp on a line the program wrote without one)")
       for t in ("wrap-kubectl", "wrap-journald", "wrap-journald-json")},
    ("c1712-systemd-firewalld-blocks-rendezvous-port", "skew-within"): SKEW_TIE,
    **{(c, "drop-node"): (
        "with a node's folder dropped, the node the truth expects among the missing evidence is named only in the "
        "dropped files or in lines missing.py does not read as a node list (rounds 44 and 45, and cases that pass "
        "since this session; as DROPPED_NODE_UNREAD, not yet examined one by one)")
       for c in ("c1407-fabric-acceptance-allreduce-r12", "c1485-four-node-l40s-init-stalls-30min",
                 "c1707-k3-gce-spot-preempt-clean-sigterm", "c1718-lws-kured-drain-worker-node",
                 "c1725-k3-b200-lws-dp2-afternoon", "c1731-systemd-head-k3-tokenizer-files-missing",
                 "c1736-k3-ray-pp4-node-reboot-rfc5424-syslog", "c1750-nvl72-ray-python-patch-mismatch-pg-never-ready",
                 "c1755-aer-xid79-load-podman", "c1756-ray-gcs-holds-master-port")},
    **{(c, "skew-beyond"): (
        "a node's clock moved a minute and corrected from the date readings the bed adds: the failing node's own "
        "line and another node's witness of it (a peer's completion error, a cloud's record of the preemption) are "
        "then ordered the other way round (cases that pass since this session; not yet examined)")
       for c in ("c1407-fabric-acceptance-allreduce-r12", "c1707-k3-gce-spot-preempt-clean-sigterm")},
    **{("c1736-k3-ray-pp4-node-reboot-rfc5424-syslog", t): (
        "the bed wraps a rack's central syslog of four hosts in one container's log format: its lines become one "
        "container's, and the announcement of the reboot, 19 hours before the loss, takes no phase of that log's "
        "(the bed's limit: a collector's file of several hosts is no container's output)")
       for t in ("wrap-docker", "wrap-cri", "wrap-kubectl", "wrap-podman")},
    ("c1744-k3-ray-kvoffload-pinned-hostoom", "wrap-journald-json"): (
        "under journald's JSON export of the head's log, the actor killed for the node's memory is placed on the "
        "head (b300-r14-n03) instead of the worker node its Ray lines name (not yet examined)"),
    ("c1667-gce-spot-preempt-ray-worker", "skew-beyond"): (
        "the worker's clock moved 106 s with date readings added: the VM's power-key line and the cloud's record are "
        "then no longer within a second of each other (not yet examined)"),
    **{("c1666-ray-oom-monitor-worker-serving", t): (
        "rank 15 of the worker Ray's memory monitor killed is joined by the host pid the raylet names; wrapping the "
        "worker node's log in a container runtime's format makes its pids a container's, not the host pids the "
        "raylet names (the bed wraps one file of a pid namespace the raylet shares; as c1528)")
       for t in ("wrap-docker", "wrap-cri", "wrap-podman")},
    **{("c1064-slurm-ray-memcg-oomkill-dmesg-uptime", t): (
        "a bare Slurm job writes its hosts' zone (EDT); the transform stamps the journal it wraps the job's output in "
        "with those times read as UTC, four hours from the kernel's clock, so the oom-kill falls after the run's stop "
        "(the bed's limit: it knows no zone)") for t in ("wrap-journald", "wrap-journald-json")},
    ("c1628-slurm-k3-dp4tp4-worker-oomkill", "noise-kernel"): (
        "the noise puts a link flap in the oom-kill's own second on the same node: within a second a port down is a "
        "candidate cause there, as in c1416 (the bed's limit)"),
    ("c1540-pp2-ray-head-node-bundle-only", "wrap-journald-json"): (
        "at some seeds of journald's JSON the ActorDiedError's indented message lines are still not folded into its "
        "message (they are at others, and under docker's JSON: not yet examined)"),
    **{("c1528-qwen-coder-pp3-startup-dies-during-weight-load", t): (
        "rank 21 of the worker Ray's memory monitor killed comes from its own log, worker-ID-JOB-51877.out, whose name "
        "is the only witness of its pid: renaming the files removes it, renumbering the pids leaves the name's pid "
        "behind, and wrapping that log in a container runtime's format makes its pids a container's, not the host "
        "pids the raylet names (the bed wraps one file of a pid namespace the raylet shares)")
       for t in ("rename-files", "renumber-pids", "wrap-docker", "wrap-cri", "wrap-journald", "wrap-journald-json",
                 "wrap-podman")},
    ("c1528-qwen-coder-pp3-startup-dies-during-weight-load", "skew-beyond"): (
        "the worker node's clock 59 s ahead, with date readings to correct it: the GCS's copy of the memory monitor's "
        "report on the head is cited, a line the truth does not list (not yet examined)"),
    ("c906-journald-sudo-kill-worker-pp2", "renumber-pids"): (
        "the transform renumbers the pids log formats carry (a process prefix, journald _PID), not a pid inside a "
        "command's text: sudo's 'kill -9 48213' keeps the old pid, which no worker has after it (the bed's limit)"),
    **{(c, "drop-node"): (
        "with a node's folder dropped, the node the truth expects among the missing evidence is named only in the "
        "dropped files or in lines missing.py does not read as a node list (rounds 46 and 47, and a case that passes "
        "since this session; as DROPPED_NODE_UNREAD, not yet examined one by one)")
       for c in ("c1693-nvshmem-uid-ifname-node2", "c1768-k3-podman-mnnvl-operator-stop",
                 "c1773-ecc-xid95-rowremap-dp1-restart-loop", "c1781-pd-nixl-rail-down-decode",
                 "c1782-structured-output-grammar-enginecore-crash")},
    **{("c1011-qwen72b-slurm-v0-swap-space-pinned-memcg-oomkill", t): (
        "Slurm's count of the step's OOM kills (slurmstepd's line, untimed in the job's output) is read since this "
        "session; the wrapper stamps it with a neighbour's time before the kernel's kill line, so it is no consequence "
        "of that line but a statement of the same fault, and the kill takes the phase of the deaths it explains "
        "(the bed's limit: a wrapper's stamp on a line the program wrote without one)")
       for t in ("wrap-kubectl", "wrap-journald")},
    **{("c1776-compile-cache-enospc-restart-loop-newyear-logrotate", t): (
        "the case's logs cross a new year in times without a year (12-31 23:59, then 01-01), split over rotated files; "
        "a wrapper stamps every line with the bed's own dated times, one year for all, and the full disk of the "
        "rotated file's first start falls after the corrupt cache of the next (the bed's limit: its stamps know no "
        "year rollover)") for t in ("wrap-docker", "wrap-cri", "wrap-kubectl", "wrap-journald", "wrap-journald-json",
                                   "wrap-podman")},
    **{("c1782-structured-output-grammar-enginecore-crash", t): (
        "a batch client's own log reports the server's 500 in the same second as the engine's crash; a second's skew "
        "of the client's host puts its report first, and a client's word of a dead engine is taken for the worker "
        "gone (not yet examined: a client's report is no witness of when the server died)")
       for t in ("skew-within", "skew-beyond")},
    # (the full sweep of 2026-12-07 at aba60c5: cases new to the corpus or right since the sweep before)
    **{(c, "drop-node"): DROPPED_NODE_UNREAD for c in (
        "c1775-worker-power-loss-ray-bmc-sel-localtime", "c1795-huge-prompt-moe-oom-pp-hang-docker",
        "c1798-hf-gated-401-lws-worker-pod", "c1808-ray-memmon-kill-cotenant-slurm",
        "c1810-k3-ray-2node-serving-crash", "c1826-roce-gid-index-shift-after-flap",
        "c1827-socket-ifname-one-tray-mgmt-port")},
    **{(c, "shift-clock"): (
        "a BMC's event log is read in the BMC's own clock, measured by `ipmitool sel time get` beside `date -u` in a "
        "transcript; shifted by months, the node's power loss no longer comes before its peers' transport errors "
        "(not yet examined: how the shift treats those two readings)")
       for c in ("c1728-slurm-renamed-hosts-node-power-loss", "c1775-worker-power-loss-ray-bmc-sel-localtime")},
    **{("c884-xid31-mmu-fault-moe-illegal-access-ray-cvd-remap", t): (
        "the Xid 31 and the worker's illegal access it explains are cited at the right line only while the pids and "
        "the files' names and order stay as they are (not yet examined: these variants passed in the sweep before "
        "this session's rules)") for t in ("renumber-pids", "rename-files", "wrap-journald")},
    # (the full sweep of 2026-12-07 at 42cc418: cases new to the corpus or right since the sweep before)
    **{(c, "drop-node"): DROPPED_NODE_UNREAD for c in (
        "c1483-qwen235b-three-node-waits-for-gpus", "c1759-dnf-driver-mismatch-sosreport-rotated",
        "c1870-ray-podman-worker-devshm-64m", "c1885-gsp-hang-pci-only-lws-pp2", "c1886-ray-oomkill-worker-pid-only")},
    ("c1886-ray-oomkill-worker-pid-only", "rename-hosts"): (
        "the one folder left keeps its full name of the short name the notes give only when the folder's name ends "
        "with it; renamed hosts no longer share that ending with the notes' short name 'n32'"),
    ("c1835-host-oom-kv-offload-shm-slurm", "rename-files"): (
        "srun's output file takes its job's node list from the job table by the job id in its name (slurm-88214.out); "
        "renamed, the name holds no job id, its tasks no node, and the kill's phase is the load's"),
    ("c993-venv-vllm-c-undefined-symbol-after-torch-upgrade", "wrap-docker"): (
        "inside docker's json-file records the import warning's phase is where what it explains shows (a fault its "
        "process went past) in another phase than the plain log's (not yet examined)"),
    ("c1912-mp-2node-hostoom-headless-rank13", "rename-hosts"): (
        "the notes' short names (n17, n18) are not renamed with the hosts: 'n17' is no longer the short name of a "
        "placed host's full name, so it is the one host left, and the other folder takes it"),
    ("c1912-mp-2node-hostoom-headless-rank13", "drop-node"): (
        "with b300-r2-n18's folder gone, the missing nodes are named by the notes' short names (n17, n18), not by "
        "the dropped folder's full name"),
    ("c1923-k3-aks-lws-spot-preempt-worker", "noise-retries"): (
        "c10d connect retries inserted into the leader's log before its start put the reclaim notice, an untimed "
        "event row, in distributed init (not yet examined)"),
    # (a sweep of rounds 55 and 56's cases at 525b01c6, 2026-12-07)
    ("c1986-podman-systemd-mtp-fullgraph-triton-capture", "rename-files"): (
        "with every file renamed, the unit's journal no longer names the unit its folder is named after: the folder "
        "kimi-k3/ is taken for a host again"),
    ("c1987-dp2-ctrlc-headless-teardown", "drop-node"): (
        "with the headless node's folder dropped, the missing evidence does not name gx-08 (not yet examined)"),
    ("c1991-lws-xid94-ecc-silent-rank-after-containerd-restart", "noise-kernel"): (
        "an Ethernet link flap inserted before the Xid on the failing node is taken for the cause (not yet examined)"),
    ("c2008-journald-json-xid62-dp-restart-loop", "drop-node"): (
        "with one node's journal dropped, the missing evidence names 'kimi-k3' instead of it (not yet examined)"),
    ("c2014-runai-s3-sts-expired-worker-lws", "noise-retries"): (
        "c10d connect retries inserted into the worker's log put the group's restart event, an untimed row, first "
        "(not yet examined)"),
    ("c2021-prompt-logprobs-oom-lws-gb300", "drop-node"): (
        "with the kubectl dumps dropped (the folder the sweep takes for node gb300-r07-t03), no node is named as "
        "missing (not yet examined)"),
    ("c2023-k3-ray-h200-patch-window", "drop-node"): (
        "with the head node's folder dropped, the missing evidence does not name hgx-k3-01 (not yet examined)"),
    # (a sweep of rounds 57 and 58's cases at 338ec93d, 2026-12-07: every new failure is a dropped node's name)
    **{(case, "drop-node"): (f"with {node}'s folder dropped, the missing evidence does not name it: {why}")
       for case, node, why in (
           ("c2024-k3-slurm-b200-pp2-job48213", "gpu-b07", "the job's node list is read, and names gpu-b05 instead "
            "(not yet examined)"),
           ("c2028-nccl-segfault-rank9-ray-pp2", "hgx-h200-07", "the head, named only in Ray's lines of the worker "
            "(not yet examined)"),
           ("c2030-healthy-k3-b300-podman-lb-probe-blip", "lab-b300-07", "the bundle's one node: no log of the "
            "deployment is left, and nothing else names the host"),
           ("c2045-gated-repo-401-ray-worker-node", "b200-ray-h01", "the head, named only in the worker's Ray lines "
            "by its address (not yet examined)"),
           ("c2054-k3-slurm-deepep-timeout-xid119-gpu5", "hgx-b200-042", "named in the Slurm job's output by its "
            "task labels only (not yet examined)"),
           ("c2070-kuberay-worker-pending-pg-timeout", "gpu-b300-07", "the folder the sweep takes for that node is "
            "k8s/, the cluster's dumps"))},
    # (the full sweep at 8ef31017, and one of round 60's cases, the nodes-lost cases and a sample of Slurm job-table
    # cases at 0854af0b, 2026-12-08)
    **{(case, "drop-node"): (f"with {node}'s folder dropped, the missing evidence does not name it (not yet examined)")
       for case, node in (("c2064-k3-xid119-gsp-hang-requests-time-out", "hgx-b300-117"),
                          ("c2079-ray-worker-node-auto-reboot-unattended-upgrades", "gpu-k3-b01"),
                          ("c2100-headless-ib-port-down-hang-operator-stop", "sgp-k3a01"),
                          ("c2116-k3-ray-2node-planned-stop-noisy", "gb300-r07-n03"),
                          ("c2119-sosreport-gated401-node-clock-fast", "b300-r07-n2"),
                          ("c2121-slurm-pdsh-segfault-rank12-serving", "hx-gpu017"))},
    ("c2114-slurm-k2-sm90a-image-on-b200", "rename-files"): (
        "the job's output is its one node's by the job id its name numbers; renamed, the name numbers no job"),
    ("c2080-lws-spot-reclaim-pp-worker", "skew-beyond"): (
        "the worker node's clock moved 105 s with date readings added: the claim's row and the node's row of the spot "
        "interruption are no longer told apart as one moment, and the outcome reads failing requests (not yet "
        "examined)"),
    ("c2112-healthy-compose-b300-memory-warnings", "shift-clock"): (
        "shifted by months, the host's OOM kill of another user's python3 (dmesg -T in the host's zone) is taken for "
        "the deployment's: a false alarm (not yet examined)"),
    ("c2118-k3-systemd-oomkill-hidden-before-planned-stop", "shift-clock"): (
        "shifted by months, the kernel journal's OOM kill (local time) no longer precedes the engine's word of the "
        "worker gone (not yet examined)"),
    # (the full sweep at 851f886d, 2026-12-07)
    ("c1683-node-power-loss-ray-sts-serving", "rename-files"): (
        "the node controller's NodeNotReady in the pod's describe and the node's own conditions in the node's describe "
        "are timed to the same second (by ages and a stamped command): the files' names decide the tie, and the pod's "
        "copy, which the truth does not cite, sorts first once renamed"),
}


def known(case: str, transform: str) -> str | None:
    return KNOWN.get((case, transform)) or KNOWN.get(("*", transform))


def cases() -> list[str]:
    return sorted(p.parent.name for p in CORPORA.glob("*/truth.json"))


def seed_of(case: str, transform: str) -> int:
    """The seed a case's transform gets by default (stable across runs and machines)."""
    return zlib.crc32(f"{case}/{transform}".encode()) % 100_000


@lru_cache(maxsize=1)
def catalogue():
    return load_catalogue(collect_errors=True)[0]


def diagnose(path: Path):
    """The report `k3logs analyze` would give, unredacted, in this process."""
    return api.report_of(run(path, catalogue=catalogue()), str(path), Settings(redact=False))


@lru_cache(maxsize=None)
def analysis(case: str):
    """The case's own analysis (one per process: tests/test_corpora.py shares it)."""
    return run(CORPORA / case / "bundle", catalogue=catalogue())


@lru_cache(maxsize=None)
def original(case: str):
    """The case's own report, as `k3logs analyze` makes it before redaction (for its profile: hosts, kinds and
    nodes of its files)."""
    return api.report_of(analysis(case), str(CORPORA / case / "bundle"), Settings(redact=False))


@lru_cache(maxsize=None)
def base_right(case: str) -> bool:
    """Whether the case itself is diagnosed as its truth says (else test_corpora reports it, and its variants
    are not compared: a transform must keep a right answer right)."""
    truth = json.loads((CORPORA / case / "truth.json").read_text(encoding="utf-8"))
    return score(case, truth, original(case)).passed


@lru_cache(maxsize=None)
def case_profile(case: str) -> Profile:
    return profile(CORPORA / case, original(case))


@dataclass
class Outcome:
    case: str
    transform: str
    seed: int
    applies: bool = True
    reason: str = ""                      # why not, when it does not apply
    mapping: Mapping | None = None
    truth: dict = field(default_factory=dict)
    score: CaseScore | None = None
    error: str | None = None
    base_wrong: bool = False              # the case itself is diagnosed wrong: nothing to compare with
    said: str = ""                        # the variant's first causal line, as the report quotes it

    @property
    def passed(self) -> bool:
        return self.applies and self.error is None and self.score is not None and self.score.passed

    @property
    def failed(self) -> bool:
        """A metamorphic failure: the variant is diagnosed wrong where the case itself is diagnosed right."""
        return self.applies and not self.base_wrong and not self.passed

    def differences(self) -> list[str]:
        if self.error:
            return [f"error: {self.error}"]
        s = self.score
        return [f"{c}: got {s.got.get(c)!r}, want {s.want.get(c)!r}" for c, ok in s.ok.items() if not ok] + (
            [f"the variant's first cause reads: {self.said[:200]}"] if self.said else [])

    def message(self) -> str:
        return (f"{self.case} / {self.transform} / seed {self.seed}: {self.mapping.note if self.mapping else ''}\n  "
                + "\n  ".join(self.differences())
                + f"\n  write it out: {debug_command(self.case, self.transform, self.seed)}")


def debug_command(case: str, transform: str, seed: int) -> str:
    return f".venv/bin/python benchmarks/metamorphic.py --write {case} {transform} {seed} /tmp/variant"


def make(case: str, transform: str, seed: int, out: Path) -> tuple[Mapping, dict]:
    """Write the variant's bundle under out/ and return its mapping and its truth (raises NotApplicable)."""
    prof = case_profile(case)
    m = apply(prof, transform, seed, out)
    truth = m.truth(prof.truth)
    truth["variant"] = {"case": case, "transform": transform, "seed": seed, "note": m.note}
    return m, truth


def check(case: str, transform: str, seed: int, work: Path) -> Outcome:
    """Make the variant in `work` (removed after), diagnose it and score it against its truth."""
    o = Outcome(case, transform, seed)
    o.base_wrong = not base_right(case)
    try:
        o.mapping, o.truth = make(case, transform, seed, work)
    except NotApplicable as e:
        o.applies, o.reason = False, str(e)
        return o
    try:
        report = diagnose(o.mapping.path)
        o.score = score(case, o.truth, report)
        o.said = report.first_causal.text if report.first_causal else ""
    except Exception as e:   # noqa: BLE001  (a crash on a variant is a finding, reported like a difference)
        o.error = f"{type(e).__name__}: {e}"
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return o


def write_case(case: str, transform: str, seed: int, dest: Path) -> Mapping:
    """The variant as a corpus case: dest/bundle (a folder, or the archive the transform made) and
    dest/truth.json, for `k3logs eval` and for looking at by hand."""
    if dest.exists():
        shutil.rmtree(dest)
    m, truth = make(case, transform, seed, dest / "work")
    if m.path.is_dir():
        m.path.rename(dest / "bundle")
    else:   # an archive: `bundle` is the archive file itself (k3logs reads archives by content)
        m.path.rename(dest / "bundle")
    shutil.rmtree(dest / "work", ignore_errors=True)
    (dest / "truth.json").write_text(json.dumps(truth, indent=2) + "\n", encoding="utf-8")
    return m


SAMPLE_SIZE = 56   # cases in the CI sample, spread evenly over the corpus: its cost stays the same as the corpus grows


@lru_cache(maxsize=1)
def sampled() -> tuple[str, ...]:
    """The cases of the CI sample (`benchmarks/metamorphic.py --all` runs every transform on every case)."""
    every = cases()
    n = min(SAMPLE_SIZE, len(every))
    return tuple(every[i * len(every) // n] for i in range(n))


def slots(case: str) -> int:
    """How many transforms a case gets in the CI sample: one if it is in the sample."""
    return 1 if case in sampled() else 0


@lru_cache(maxsize=None)
def sample() -> dict[str, tuple[str, ...]]:
    """The CI sample: each sampled case diagnosed right gets `slots(case)` transforms that apply to it, the ones
    used least so far (in the order of TRANSFORMS on a tie), so that every transform lands on several cases."""
    used = {n: 0 for n in TRANSFORMS}
    out: dict[str, tuple[str, ...]] = {}
    for case in sampled():
        try:
            prof = case_profile(case)
        except NotApplicable:
            continue
        if not base_right(case):   # (its variants are not compared: its slots go to the next cases)
            continue
        fit = [n for n in TRANSFORMS if applicable(prof, n)]
        picked = sorted(fit, key=lambda n: (used[n], list(TRANSFORMS).index(n)))[:slots(case)]
        for n in picked:
            used[n] += 1
        out[case] = tuple(picked)
    return out


def applicable(prof: Profile, name: str) -> bool:
    """Whether a transform likely has something to change in the case: cheap tests on the profile and the
    files' text (a transform that still finds nothing raises NotApplicable when run, and is skipped)."""
    multi = len(prof.node_dirs) >= 2 and not prof.archives
    texts = {f: t.text for f in prof.files if (t := prof.text(f)) is not None}
    vllm = [texts[f] for f in texts if prof.kinds.get(f) == "vllm"]
    plain = any(prof.kinds.get(f) in ("vllm", "nccl") and not prof.wrapped.get(f)
                and timefmt.clock_of(texts[f][:20000], prof.year) for f in texts)
    rules = {
        "skew-within": multi, "skew-beyond": multi, "drop-node": len(prof.node_dirs) >= 2,
        "graceful-stop": bool(prof.truth.get("healthy"))
        and any(SERVING.search(t) and not STOP.search(t) for t in vllm),
        "noise-requests": any(SERVING.search(t) for t in vllm),
        "noise-warnings": bool(vllm) or any(prof.kinds.get(f) == "nccl" for f in texts),
        "noise-retries": any(re.search(r"world size|distributed_init_method|init_process_group| NCCL INFO ", t)
                             for f, t in texts.items() if prof.kinds.get(f) in ("vllm", "nccl")),
        "noise-kernel": any(prof.kinds.get(f) == "kernel" or " kernel: " in t[:20000] for f, t in texts.items()),
        **{w: plain for w in TRANSFORMS if w.startswith("wrap-")},
    }
    return rules.get(name, True)
