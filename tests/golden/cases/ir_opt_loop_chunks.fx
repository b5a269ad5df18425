# RUN: fxc dump %s --emit ir-opt --fs 48000 --channels 2 --dtype f32 --seconds 60
# REQUIRES: avx2
# A 250 ms echo on a long stereo signal: its loop stays unfused and runs in blocks of 12000
# samples, each split into time chunks that fill the lanes (choose_loop_chunks), where a fused
# kernel would run its two channels one sample after another. The 1 ms comb's blocks are too
# short for chunks: it is fused.
graph loop_chunks
input x
echo = x + 0.5 * (echo | delay(250 ms) | lowpass(3 kHz))
comb = x + 0.5 * (comb | delay(1 ms) | lowpass(3 kHz))
output echo
output comb
