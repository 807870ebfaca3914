"""Acceptance evidence. In: /metrics scrapes, facts and checks, tool-call results. Out: the capacity and
prefix-cache sections and the go-live verdict."""
