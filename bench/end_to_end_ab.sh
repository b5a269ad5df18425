#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Two fxc binaries, the same commands, run alternately: `fxc run` end to end as a user runs it
# (a fresh process each time, files in and out), and a corpus. Prints the medians of the whole
# command, of its run and write phases (--stats) and of its peak RSS, old -> new, and checks
# that both wrote the same bytes. docs/performance.md ("Memory") quotes it.
#
#   bash bench/end_to_end_ab.sh OLD_FXC NEW_FXC [RUNS]
#
# The inputs (made once, in $FXC_AB_DIR or /tmp/fxc-ab): a 60 s stereo 24-bit WAV at 48 kHz,
# 8 copies of it as a corpus, and 8 channels x 60 s of float64 noise as .npy. Needs
# /usr/bin/python3 with NumPy for the noise.
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1
new=$2
runs=${3:-9}
dir=${FXC_AB_DIR:-/tmp/fxc-ab}
mkdir -p "$dir/corpus"

if [ ! -f "$dir/x8.npy" ]; then
  /usr/bin/python3 - "$dir" <<'EOF'
import sys
import numpy as np
rng = np.random.default_rng(1)
np.save(f"{sys.argv[1]}/x2.npy", rng.standard_normal((2, 48000 * 60)) * 0.1)
np.save(f"{sys.argv[1]}/x8.npy", rng.standard_normal((8, 48000 * 60)) * 0.1)
EOF
  printf 'input x : 2\noutput x\n' > "$dir/pass.fx"
  "$new" run "$dir/pass.fx" -i "$dir/x2.npy" --fs 48000 -o "$dir/v60.wav" --subtype pcm24
  for i in 1 2 3 4 5 6 7 8; do cp "$dir/v60.wav" "$dir/corpus/f$i.wav"; done
  cat > "$dir/two_chains.fx" <<'EOF'
input x : 8
a = x | butter(4, 100 Hz, highpass) | peaking(2 kHz, 1, 3 dB)
b = x | lowpass(5 kHz) | tanh()
output 0.5 * a + 0.5 * b
EOF
fi

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

one_file() {  # name, output file, fxc run arguments
  local name=$1 out=$2
  shift 2
  local -a wall_old wall_new run_old run_new write_old write_new rss_old rss_new
  for _ in $(seq "$runs"); do
    for who in old new; do
      local bin=$old
      [ "$who" = new ] && bin=$new
      local start
      start=$(date +%s%N)
      local stats
      stats=$("$bin" run "$@" -o "$out.$who.${out##*.}" --stats 2>&1)
      local wall
      wall=$(ms_since "$start")
      local run write rss
      run=$(awk '/^  run /{print $(NF-1)}' <<<"$stats")
      write=$(awk '/write outputs/{print $(NF-1)}' <<<"$stats")
      rss=$(awk '/peak RSS/{print $(NF-1)}' <<<"$stats")
      eval "wall_$who+=($wall); run_$who+=($run); write_$who+=($write); rss_$who+=($rss)"
    done
  done
  cmp -s "$out.old.${out##*.}" "$out.new.${out##*.}" || echo "  $name: THE OUTPUTS DIFFER"
  echo "$name | whole $(median "${wall_old[@]}") -> $(median "${wall_new[@]}") ms |" \
    "run $(median "${run_old[@]}") -> $(median "${run_new[@]}") ms |" \
    "write $(median "${write_old[@]}") -> $(median "${write_new[@]}") ms |" \
    "peak RSS $(median "${rss_old[@]}") -> $(median "${rss_new[@]}") KiB"
}

corpus() {  # jobs
  local -a wall_old wall_new
  for _ in $(seq $(((runs + 1) / 2))); do
    for who in old new; do
      local bin=$old
      [ "$who" = new ] && bin=$new
      rm -rf "$dir/out.$who"
      local start
      start=$(date +%s%N)
      "$bin" run examples/vocal.fx -i "$dir/corpus" --out-dir "$dir/out.$who" --jobs "$1" >/dev/null 2>&1
      eval "wall_$who+=($(ms_since "$start"))"
    done
  done
  diff -rq "$dir/out.old" "$dir/out.new" >/dev/null || echo "  corpus: THE OUTPUTS DIFFER"
  echo "corpus of 8 x 60 s stereo pcm24 (kept), --jobs $1 | whole $(median "${wall_old[@]}") -> $(median "${wall_new[@]}") ms"
}

one_file "vocal.fx, 60 s stereo pcm24 -> float WAV" "$dir/vocal.wav" examples/vocal.fx -i "$dir/v60.wav"
one_file "vocal.fx, the same, --subtype pcm24" "$dir/vocal24.wav" examples/vocal.fx -i "$dir/v60.wav" --subtype pcm24
one_file "two chains summed, 8 ch x 60 s float64 .npy" "$dir/two.npy" "$dir/two_chains.fx" -i "$dir/x8.npy" --fs 48000
corpus 1
corpus 2
