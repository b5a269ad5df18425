# W6 (performance.md): W4's chain on 256 stereo signals of 1 s at 48 kHz, as one batch.
graph w6_many_files
input x
output x | butter(4, 80 Hz, highpass) | butter(8, 12 kHz)
