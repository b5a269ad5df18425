# W4 (performance.md): TorchFX's profiling chain. 2 ch x 480000 samples at 48 kHz.
graph w4_profile
input x
output x | butter(4, 80 Hz, highpass) | butter(8, 12 kHz)
