#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates the seed corpus in fuzz/corpus/ from the test suites' inputs.
#
#   fuzz/make-corpus.sh [FXC_BINARY]     (default: build/tools/fxc/fxc)
#
# fuzz_fx_parser, fuzz_pipeline: every .fx under tests/diag/cases, tests/golden/cases,
#   tests/e2e/graphs, examples/ and bench/workloads/, and two --set seeds.
# fuzz_ir_parser: `fxc dump --emit ir` and `--emit ir-opt --no-locations` of each that compiles.
# fuzz_npy_reader: 8-sample arrays in every layout the reader accepts (NumPy from Debian's
#   python3; the e2e inputs in tests/data/e2e are 32 KB and more, too big to be good seeds).
# fuzz_audio_reader: a 32-sample signal written by `fxc run` in each container and encoding.
# fuzz_cache_entry: entry templates (see fuzz_cache_entry.cpp for the format).
# fuzz_kernels: 32 seeded random byte strings of 512 bytes (the graph generator's choices);
#   6 of them catch a clip kernel that clamps to the wrong bound.
# fuzz/fx.dict, fuzz/ir.dict: the words of the .fx and IR seeds.
# The committed corpus is small on purpose (well under 2 MB): seeds should be valid and tiny;
# the fuzzer finds the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
fxc=$(realpath "${1:-build/tools/fxc/fxc}")
[ -x "$fxc" ] || { echo "no fxc binary at $fxc; build first or pass its path" >&2; exit 1; }
out=fuzz/corpus
rm -rf "$out"
mkdir -p "$out"/{fuzz_fx_parser,fuzz_pipeline,fuzz_ir_parser,fuzz_npy_reader,fuzz_audio_reader,fuzz_cache_entry,fuzz_kernels}

# .fx files, named after their folder so that equal base names do not collide.
for dir in tests/diag/cases tests/golden/cases tests/e2e/graphs examples bench/workloads; do
  tag=$(basename "$dir")
  for fx in "$dir"/*.fx; do
    name="${tag}_$(basename "$fx")"
    cp "$fx" "$out/fuzz_fx_parser/$name"
    cp "$fx" "$out/fuzz_pipeline/$name"
    # The IR of everything that compiles at 48 kHz, one channel (as the pipeline target binds).
    if ir=$("$fxc" dump "$fx" --emit ir 2>/dev/null); then
      printf '%s\n' "$ir" > "$out/fuzz_ir_parser/${name%.fx}.ir"
    fi
    if ir=$("$fxc" dump "$fx" --emit ir-opt --no-locations 2>/dev/null); then
      printf '%s\n' "$ir" > "$out/fuzz_ir_parser/${name%.fx}.opt.ir"
    fi
  done
done
printf '#!set fc=500Hz\ngraph eq\nfc = 2 kHz\ninput x : 1\noutput x | lowpass(fc, 0.7)\n' \
  > "$out/fuzz_fx_parser/set_constant.fx"
printf '#!set g=-3 dB\ninput x\ng = 0 dB\noutput x | gain(g) | butter(3, 1 kHz)\n' \
  > "$out/fuzz_fx_parser/set_level.fx"
# The chunked scan appears only for the CUDA target and long signals.
"$fxc" dump examples/vocal.fx --emit ir-opt --target cuda --seconds 60 \
  > "$out/fuzz_ir_parser/vocal_cuda.opt.ir"

# .npy: every dtype, byte order, memory order and format version the reader accepts.
/usr/bin/python3 - "$out/fuzz_npy_reader" <<'PY'
import sys, numpy as np
from numpy.lib import format as npf
out = sys.argv[1]
x = np.linspace(-1, 1, 8)
def save(name, a, version=None):
    with open(f"{out}/{name}.npy", "wb") as f:
        npf.write_array(f, a, version=version)
save("mono_f64", x)
save("mono_f32", x.astype("<f4"))
save("stereo_f64", np.stack([x, -x]))
save("stereo_f32_big_endian", np.stack([x, -x]).astype(">f4"))
save("stereo_f64_big_endian", np.stack([x, -x]).astype(">f8"))
save("stereo_fortran", np.asfortranarray(np.stack([x, -x, x])))
save("empty", np.zeros((2, 0)))
save("version2", x, version=(2, 0))
save("version3", x.astype("<f4"), version=(3, 0))
PY
# A Python 2 header: long integers in the shape.
/usr/bin/python3 - "$out/fuzz_npy_reader/python2_long.npy" <<'PY'
import sys, struct
header = b"{'descr': '<f8', 'fortran_order': False, 'shape': (1L, 2L), }"
header += b" " * (118 - len(header)) + b"\n"
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + struct.pack("<2d", 0.5, -0.5))
PY

# Audio: one tiny signal through every container and encoding fxc writes.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 -c "import numpy as np; np.save('$tmp/in.npy', np.sin(np.arange(32) / 3)[None, :].repeat(2, 0) * 0.5)"
printf 'input x\noutput x\n' > "$tmp/identity.fx"
for spec in wav:pcm8 wav:pcm16 wav:pcm24 wav:pcm32 wav:float wav:double wav:ulaw wav:alaw \
            aiff:pcm16 aiff:float flac:pcm16 flac:pcm24 ogg:vorbis ogg:opus; do
  ext=${spec%%:*} subtype=${spec#*:}
  "$fxc" run "$tmp/identity.fx" --target ref -i "$tmp/in.npy" --fs 48000 \
    -o "$out/fuzz_audio_reader/${subtype}.${ext}" --subtype "$subtype" >/dev/null 2>&1 ||
    echo "note: no $subtype in .$ext" >&2
done

# Kernel cache entries: byte 0 picks what is replaced; @...@ names what the target fills in.
c="$out/fuzz_cache_entry"
valid=$'fxc-kernel-cache 1\nobject_bytes @OBJECT_BYTES@\nobject_sha256 @OBJECT_SHA256@\ngraph eq\n--- key text ---\n@KEY_TEXT@'
printf '\x00%s' "$valid" > "$c/valid_meta"
printf '\x00%s' "${valid/@OBJECT_BYTES@/12}" > "$c/wrong_size"
printf '\x00%s' "${valid/@OBJECT_SHA256@/0000}" > "$c/wrong_checksum"
printf '\x00%s' "${valid/@KEY_TEXT@/fxc-kernel-cache 1}" > "$c/wrong_key_text"
printf '\x00fxc-kernel-cache 1\nobject_bytes 18446744073709551615\nobject_sha256\n' > "$c/huge_size"
printf '\x00fxc-kernel-cache 2\n' > "$c/unknown_format"
printf '\x00garbage' > "$c/garbage"
printf '\x01\x7fELF\x02\x01\x01' > "$c/object_replaced"
printf '\x02%s' "$valid" > "$c/object_missing"
printf '\x03%s' "$valid" > "$c/object_truncated"

/usr/bin/python3 - "$out/fuzz_kernels" <<'END'
import random, sys
r = random.Random(2024)
for i in range(32):
    open(f"{sys.argv[1]}/seed_{i:02d}.bin", "wb").write(bytes(r.randrange(256) for _ in range(512)))
END

# Dictionaries: every word outside comments in the seeds, for libFuzzer's -dict.
words() { sed 's/#.*//' "$@" | grep -ohE '[A-Za-z_][A-Za-z_0-9]*' | sort -u | sed 's/.*/"&"/'; }
words "$out"/fuzz_fx_parser/* > fuzz/fx.dict
words "$out"/fuzz_ir_parser/* > fuzz/ir.dict

du -sh "$out"
