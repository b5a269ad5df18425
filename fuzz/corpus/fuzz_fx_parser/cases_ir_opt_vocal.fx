# RUN: fxc dump %s --emit ir-opt
# REQUIRES: avx2
# The vocal chain after every pass: the IIR stages and tanh fuse into one chain, the gains
# fold into the mix weights (0.7 * 10^(-3/20) = 0.4955...), and each chain has a strategy.
graph vocal
input x : 2

clean = x | butter(4, 80 Hz, highpass)
tone  = clean | peaking(3 kHz, 1.0, 4 dB) | highshelf(10 kHz, -2 dB)
wet   = tone | tanh() | gain(-3 dB)
output 0.7 * wet + 0.3 * (x | delay(5 ms))
