# RUN: fxc dump %s --emit ir --fs 16000
# EXIT: 1
# Cutoffs at or above the Nyquist frequency of the bound rate are errors at the argument.
graph too_high
input x : 1
output x | lowpass(8 kHz) | butter(2, [1 kHz, 9 kHz], bandpass)
