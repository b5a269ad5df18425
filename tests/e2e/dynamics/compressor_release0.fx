# A compressor case of the dynamics reference tests: scripts/gen_dynamics_reference.py writes
# this file and its expected outputs, tests/data/dynamics/compressor_release0_*.npy (fs = 48 kHz).
graph compressor_release0
input x : 2
output x | compressor(-30 dB, 3, 3 ms, 0 ms)
