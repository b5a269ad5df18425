# RUN: fxc dump %s --emit ir --fs 44100
# Mixes (sums, differences, constant weights) and delays in samples, ms, s and zero samples.
graph mix_delay
input x : 2

d0 = x | delay(0)
d1 = x | delay(10 samples)
d2 = x | delay(1 ms)
d3 = x | delay(0.5 s)
output 0.25 * d0 + 0.5 * d1 - d2 + -3 dB * d3 - 0.1 * x
