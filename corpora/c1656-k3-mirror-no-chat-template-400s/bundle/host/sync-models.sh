#!/usr/bin/env bash
# ops-tools/models/sync-models.sh -- copy an HF snapshot from the NFS cache to local NVMe (run 2026-11-26 08:40 CET)
# usage: sync-models.sh <repo_id> <dest>
set -euo pipefail
REPO="$1"; DEST="$2"
SNAP_ROOT="/mnt/hf-cache/hub/models--${REPO//\//--}/snapshots"
REV="$(cat "/mnt/hf-cache/hub/models--${REPO//\//--}/refs/main")"
mkdir -p "$DEST"
# weights + configs + remote code + tokenizer only; skip READMEs, images, eval results
rsync -aL --info=progress2 \
  --include='*/' \
  --include='*.safetensors' --include='*.json' --include='*.py' \
  --include='*.model' --include='*.tiktoken' --include='*.txt' \
  --exclude='*' \
  "$SNAP_ROOT/$REV/" "$DEST/"
echo "$REV" > "$DEST/.hf_revision"
find "$DEST" -name '*.safetensors' | wc -l
