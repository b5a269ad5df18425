# Loop L1 (bench/loops_vs_faust.py): a stereo echo, 250 ms, feedback 0.5, with the Audio EQ
# Cookbook lowpass biquad at 3 kHz (Q = 1/sqrt(2)) inside the loop. 2 ch x 60 s at 48 kHz.
# The same arithmetic as std/delays.fx's echo(250 ms, 0.5, 3 kHz), written out, the filter
# after the delay (one fused kernel; from silence the same output as with it before).
graph loop_echo
input x : 2
y = x + 0.5 * (y | delay(250 ms) | lowpass(3 kHz))
output y
