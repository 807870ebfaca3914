#!/bin/bash
# /shared/ops/bin/stage_model.sh SRC DST REV  -- copy a model snapshot to node-local NVMe once per revision
#
# v2 2026-09-24  copy the whole snapshot (rsync -a --delete). v1 copied only an include list
#                (*.safetensors *.json *.py *.tiktoken *.model) and skipped everything else.
#                Copies made by v1 are still accepted when the revision matches (see below).
# v1 2026-08-30  first version
set -euo pipefail
SRC=$1; DST=$2; REV=$3; H=$(hostname -s)
say() { echo "[stage $(date -Is)] $H: $*"; }
if [ -f "$DST/.staged" ]; then
  say "found $DST/.staged ($(cat $DST/.staged))"
  if grep -q "rev=$REV " "$DST/.staged"; then say "revision matches, skipping rsync"; exit 0; fi
fi
say "no $DST/.staged, staging rev $REV"
say "rsync -a --delete $SRC/ $DST/"
rsync -a --delete --stats "$SRC/" "$DST/" | sed -n 's/^\(sent\|total size\).*/&/p' | while read -r l; do say "$l"; done
n=$(find "$DST" -type f ! -name .staged | wc -l)
echo "rev=$REV tool=stage_model.sh/2 date=$(date -Is)" > "$DST/.staged"
say "$n files, wrote .staged (rev=$REV tool=stage_model.sh/2)"
