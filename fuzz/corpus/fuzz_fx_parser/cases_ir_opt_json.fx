# RUN: fxc dump %s --emit ir-opt --format json
# REQUIRES: avx2
# The optimized IR as JSON, with a fused chain's origins.
graph json_opt
input x : 1

output x | butter(2, 1 kHz) | tanh() | delay(2)
