# RUN: fxc dump %s --emit ir-opt --fs 48000
# FIR stages in series convolve into one; on a float64 signal (as dumped here) below 176 taps
# they run directly (in time lanes), from 176 taps by FFT overlap-save (240 on float32). A
# fan-out point stops the fusion.
graph firs
input x : 1

short = x | fir([1, 2, 1]) | fir([1, -1]) | firwin(5, 6 kHz)
long  = x | firwin(201, 2 kHz) | firwin(151, 3 kHz, window=hann)
split = x | fir([0.5, 0.5])
output short
output long
output (split | fir([1, 0, -1])) + (split | fir([0.25, 0.25]))
