"""Captured requests and responses. In: the JSON lines gateways and request loggers write. Out: why prefixes
do not hit (`k3logs prefix`) and which tool calls break their schema (`k3logs toolcalls`)."""
