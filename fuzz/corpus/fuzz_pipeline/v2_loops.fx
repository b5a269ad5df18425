# RUN: fxc dump %s --emit ir-opt --fs 48000 --channels 2 --print-after-all
# REQUIRES: avx2
# Two loops after every pass: an echo through a lowpass (a 250 ms feedback delay) and a comb
# whose 1 ms delay sets the blocks the whole graph runs in; feedback nodes keep their back
# edges through fusion and gain folding.
graph loops
input x
echo = x + 0.5 * (echo | lowpass(3 kHz) | delay(250 ms))
comb = x - 0.25 * (comb | gain(2) | delay(1 ms))
output echo + comb
