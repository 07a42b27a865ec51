#!/bin/bash
# Alternating pairs of fresh JVMs: odd pairs run without the starter first, even pairs with it first.
# usage: pairs.sh N OUT
cd /tmp/bc-startup
n=$1; out=$2
for i in $(seq 1 $n); do
  if [ $((i % 2)) -eq 1 ]; then order="without with"; else order="with without"; fi
  for v in $order; do
    line=$(java -cp classes:$(cat cp-$v.txt) probe.StartupProbe --logging.level.root=WARN 2>&1 | grep '^STARTUP')
    echo "pair=$i variant=$v $line load=$(cut -d' ' -f1 /proc/loadavg)" >> $out
  done
done
