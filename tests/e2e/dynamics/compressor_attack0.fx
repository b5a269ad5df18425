# A compressor case of the dynamics reference tests: scripts/gen_dynamics_reference.py writes
# this file and its expected outputs, tests/data/dynamics/compressor_attack0_*.npy (fs = 48 kHz).
graph compressor_attack0
input x : 2
output x | compressor(-18 dB, 8, 0 ms, 30 ms, knee=12 dB)
