"""Acceptance: the stage the pipeline runs after the diagnosis (judge.py). In: the events and the decision,
/metrics scrapes, facts and checks, the tool calls checked. Out: the recovery ladder, the capacity and
prefix-cache sections and the go-live verdict, which the report shows as they are."""
