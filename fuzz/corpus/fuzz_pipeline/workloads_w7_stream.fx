# W7 (performance.md): W4's chain on 2 ch in blocks of 64, 256, 1024 samples at 48 kHz.
graph w7_stream
input x
output x | butter(4, 80 Hz, highpass) | butter(8, 12 kHz)
