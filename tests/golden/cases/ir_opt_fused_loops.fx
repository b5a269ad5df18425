# RUN: fxc dump %s --emit ir-opt --fs 48000 --channels 2
# REQUIRES: avx2
# Loops through one mix become one kernel each (fuse-loops): an echo whose filter follows the
# delay (the mix is read outside), and Jezar's allpass core (the line's sample is read
# outside); the cross-coupled pair and the filter before a delay run in blocks.
graph fused_loops
input x
echo = x + 0.5 * (echo | delay(10 ms) | lowpass(3 kHz))
past = line | delay(225)
line = x + 0.5 * past
a = x + 0.5 * (b | delay(7))
b = 0.5 * (a | delay(11))
before = x + 0.5 * (before | lowpass(2 kHz) | delay(13))
output echo + (past - x) + a + before
