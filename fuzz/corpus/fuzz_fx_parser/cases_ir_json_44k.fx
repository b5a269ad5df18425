# RUN: fxc dump %s --emit ir --format json --fs 44100
# A small graph as JSON at 44.1 kHz: 1 ms is 44.1 samples, which rounds to 44.
graph json_44k
input x : 1
output y = x | highpass(100 Hz) | delay(1 ms) | clip(-0.5, 0.5)
