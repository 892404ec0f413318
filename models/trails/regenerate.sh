#!/usr/bin/env bash
# Rebuilds the counterexamples kept in this folder after a change to models/*.pml: for each,
# the shortest trail Spin finds (pan -i), kept as <name>.pml.trail, and its readable replay
# (spin -t -p -l) as <name>.txt.  Spin and pan write their files (pan.*, _spin_nvr.tmp, the
# trail) into the working directory, so everything runs in a temporary folder holding a copy
# of the model; only the two kept files are written here.
# tests/integration/test_spin_model.py checks that the kept trails still replay.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
models=$(cd "$here/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

shortest() {  # name model spin-defines...
  local name=$1 model=$2
  shift 2
  rm -rf "${work:?}"/*
  cp "$models/$model" "$work/$model"
  (
    cd "$work"
    spin -a "$@" "$model" >/dev/null
    gcc -O1 -DSAFETY -DNOCLAIM -DREACH -o pan pan.c
    ./pan -i -m100000 >pan.out || true  # pan's exit status is not its verdict
    grep -q "errors: [1-9]" pan.out || { echo "$name: pan found no error" >&2; exit 1; }
    spin -t -k "$model.trail" -p -l "$@" "$model" >replay.txt
  )
  cp "$work/$model.trail" "$here/$name.pml.trail"
  cp "$work/replay.txt" "$here/$name.txt"
  echo "$name: $(grep -o 'trail ends after [0-9]* steps' "$here/$name.txt")"
}

shortest pipeline-datarace pipeline.pml -DSHOW_DATARACE
shortest frontier-unsync frontier.pml -DSTRATEGY=1
