# RUN: fxc dump %s --emit ir --fs 48000
# Raw coefficients (sos normalized by a0, tf, fir), every firwin window, and the pointwise
# stages, at 48 kHz.
graph raw
input x : 1

raw  = x | sos([[2, 1, 0, 2, -0.5, 0], [1, 0, -1, 1, 0, 0.25]]) | tf([0.5, 0.5], [1, -0.2]) |
       fir([0.25, 0.5, 0.25])
wins = x | firwin(5, 4 kHz) | firwin(5, 4 kHz, window=hann) | firwin(5, 4 kHz, window=blackman) |
       firwin(5, 4 kHz, window=boxcar) | firwin(5, 4 kHz, window=kaiser, beta=8) |
       firwin(7, [2 kHz, 6 kHz], pass_zero=false) | firwin(5, 10 kHz, pass_zero=false)
point = x | gain(0.5) | gain(-6 dB) | tanh() | clip(-0.8, 0.9)
output raw + wins + point
