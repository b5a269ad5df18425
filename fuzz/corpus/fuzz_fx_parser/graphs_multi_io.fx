# Two stereo inputs and two outputs: a mix of two filtered inputs, and a difference.
graph multi_io
input a : 2
input b : 2

output mix  = a | butter(3, 5 kHz) + 0.5 * (b | cheby1(4, 1 dB, [500 Hz, 4 kHz], bandpass))
output diff = a - b | ellip(3, 0.5, 60, 2 kHz, highpass)
