# A envelope case of the dynamics reference tests: scripts/gen_dynamics_reference.py writes
# this file and its expected outputs, tests/data/dynamics/envelope_peak_*.npy (fs = 48 kHz).
graph envelope_peak
input x : 2
output x | envelope(1 ms, 20 ms)
