# W3 (performance.md): TorchFX's FIR benchmark chain. {1, 8} ch x {5, 60} s at 44.1 kHz.
graph w3_fir
input x
output x | firwin(101, 1000 Hz) | firwin(102, 5000 Hz) | firwin(103, 1500 Hz) | firwin(104, 1800 Hz) | firwin(105, 1850 Hz)
