# RUN: fxc dump %s --emit ir --format dot --fs 48000 --channels 2
# A mix of a filtered and a delayed branch as Graphviz at 48 kHz (1 ms is 48 samples).
graph dot_48k
input x

output y = 0.5 * (x | cheby1(2, 1 dB, 3 kHz) | tanh()) - (x | delay(1 ms) | fir([0.5, 0.5]))
