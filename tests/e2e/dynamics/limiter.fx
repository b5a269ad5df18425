# A limiter case of the dynamics reference tests: scripts/gen_dynamics_reference.py writes
# this file and its expected outputs, tests/data/dynamics/limiter_*.npy (fs = 48 kHz).
graph limiter
input x : 2
output x | limiter(-10 dB, 50 ms)
