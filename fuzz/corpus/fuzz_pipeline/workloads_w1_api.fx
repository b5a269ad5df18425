# W1 (performance.md): TorchFX's api benchmark chain. 8 ch x 120 s at 44.1 kHz; 15 sections.
graph w1_api
input x
output x | cheby1(4, 0.1 dB, 20 Hz, highpass) | cheby1(4, 0.1 dB, 60 Hz, highpass) | cheby1(4, 0.1 dB, 65 Hz, highpass) | butter(5, 5000 Hz) | butter(5, 4900 Hz) | butter(5, 4850 Hz)
