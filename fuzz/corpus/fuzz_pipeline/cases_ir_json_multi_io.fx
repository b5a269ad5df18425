# RUN: fxc dump %s --emit ir --format json --fs 48000
# Two inputs and two outputs, as JSON at 48 kHz.
graph multi_io
input a : 2
input b : 2

output mix  = a | butter(1, 5 kHz) + 0.5 * b
output diff = a - b | delay(3)
