# W5 (performance.md): W4's chain on one long channel, 600 s at 44.1 kHz.
graph w5_long_mono
input x
output x | butter(4, 80 Hz, highpass) | butter(8, 12 kHz)
