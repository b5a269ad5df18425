# RUN: fxc dump %s --emit ir --fs 44100
# Every Audio EQ Cookbook biquad at 44.1 kHz, with positional and keyword arguments and the
# default q of 1/sqrt(2).
graph biquads
input x : 1

output y = x | lowpass(1 kHz) | highpass(f0=50 Hz, q=0.5) | bandpass(2 kHz, 2) |
           notch(60 Hz, 10) | allpass(q=0.7, f0=700 Hz) | peaking(1 kHz, 1, 6 dB) |
           lowshelf(200 Hz, -3 dB) | highshelf(8 kHz, 4, 0.9)
