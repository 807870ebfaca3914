"""Log records whose time is a field of theirs, lines away from the message (ingest/records.py)."""
from __future__ import annotations

import pytest

from conftest import analyze_files
from k3logs.ingest.records import stamp_yaml_entries

ENTRY = """---
insertId: -x2b7c1e3kq9d
protoPayload:
  methodName: compute.instances.preempted
  status:
    message: Instance was preempted.
receiveTimestamp: '2026-08-19T03:17:41.114920337Z'
severity: INFO
timestamp: '{t}'
"""


def test_each_line_of_a_yaml_log_entry_takes_the_entry_s_own_time():
    text = "$ gcloud logging read 'protoPayload.methodName=\"compute.instances.preempted\"'\n" + \
        ENTRY.format(t="2026-08-19T03:17:40.524000Z") + ENTRY.format(t="2026-08-19T02:00:00Z")
    lines = stamp_yaml_entries(text).split("\n")
    assert lines[0].startswith("$ gcloud")                       # before any document: as it was
    assert lines[4] == "2026-08-19T03:17:40.524000Z   methodName: compute.instances.preempted"
    assert lines[13] == "2026-08-19T02:00:00Z   methodName: compute.instances.preempted"
    assert len(lines) == len(text.split("\n"))                   # the line numbers stay the file's


def test_near_miss_yaml_documents_with_no_time_of_their_own_are_left_as_they_are():
    manifests = "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: vllm-0\n---\napiVersion: v1\nkind: Service\n"
    assert stamp_yaml_entries(manifests) is None
    # when the platform received an entry is not when it happened
    assert stamp_yaml_entries("---\nreceiveTimestamp: '2026-08-19T03:17:41Z'\ntextPayload: boom\n") is None


def test_a_yaml_entry_s_message_is_timed_by_its_timestamp_in_the_analysis(tmp_path):
    a = analyze_files(tmp_path, {"gce-preempted.yaml": ENTRY.format(t="2026-08-19T03:17:40.524000Z")})
    row = a.events.filter(a.events["line"] == 4).row(0, named=True)
    assert row["text"] == "  methodName: compute.instances.preempted"
    assert (row["ts"].hour, row["ts"].minute, row["ts"].second, row["ts_quality"]) == (3, 17, 40, "exact")


EVENT_ITEM = """- apiVersion: v1
  count: 1
  eventTime: null
  firstTimestamp: "{t}"
  involvedObject:
    kind: Pod
    name: kimi-k3-0-1
  lastTimestamp: "{last}"
  message: '{message}'
  metadata:
    creationTimestamp: "2026-10-21T10:00:00Z"
  reason: {reason}
"""


@pytest.mark.parametrize("times, stamped", [(("2026-10-21T09:17:06Z", "2026-10-21T09:20:00Z"), "2026-10-21T09:17:06Z"),
                                            ((None, None), None)])   # near miss: items with no time of their own
def test_each_line_of_a_yaml_list_of_events_takes_its_event_s_first_time(times, stamped):
    first, last = times
    item = EVENT_ITEM if first else "\n".join(ln for ln in EVENT_ITEM.split("\n") if "Timestamp: \"{" not in ln)
    text = "apiVersion: v1\nitems:\n" + item.format(t=first, last=last, message="Usage of EmptyDir volume exceeds",
                                                       reason="Evicted") + "kind: EventList\nmetadata: {}\n"
    out = stamp_yaml_entries(text)
    if stamped is None:
        assert out is None
        return
    lines = out.split("\n")
    assert lines[10] == f"{stamped}   message: 'Usage of EmptyDir volume exceeds'"   # (its first time, not its last)
    assert lines[0] == "apiVersion: v1" and lines[-3] == "kind: EventList"     # the list's own lines: as they were
    assert len(lines) == len(text.split("\n"))
