#!/bin/bash
# /usr/local/sbin/k3-prep-tokenizer.sh
# Fetch the small files vLLM needs locally (config + tokenizer); the weights are streamed
# from RGW by the Run:ai streamer at load time.  Adapted from the kimi-k2 runbook (2025-09).
set -euo pipefail
SRC=${1:?usage: k3-prep-tokenizer.sh s3://bucket/prefix/}
DST=/srv/models/kimi-k3-tok
S5="s5cmd --endpoint-url https://rgw.dc2.internal:8443 --credentials-file /etc/k3/rgw-reader.ini"

echo "k3-prep: fetching tokenizer/config files for $SRC -> $DST (rgw.dc2.internal)"
prev=$(cat $DST/.revision 2>/dev/null || echo none)
echo "k3-prep: removing previous copy ($prev)"
rm -rf "$DST" && mkdir -p "$DST"

# tokenizer + config only: *.json (config, generation_config, tokenizer_config, index),
# *.py (remote code), *.model (tiktoken), *.txt (merges/vocab for other models)
$S5 cp --include '*.json' --include '*.py' --include '*.model' --include '*.txt' \
       --exclude '*.safetensors' "${SRC}*" "$DST/"

n=$(find "$DST" -type f | wc -l); sz=$(du -sh --apparent-size "$DST" | cut -f1)
echo "k3-prep: $n files, ${sz/M/ MiB} in $DST"
basename "$SRC" > "$DST/.revision"
python3 - "$DST" <<'PY'
import json, sys
c = json.load(open(sys.argv[1] + "/tokenizer_config.json"))
ok = c.get("tokenizer_class") and "auto_map" in c
print(f"k3-prep: tokenizer_config.json: tokenizer_class={c.get('tokenizer_class')}, auto_map {'present' if 'auto_map' in c else 'MISSING'}, {'OK' if ok else 'CHECK'}")
PY
