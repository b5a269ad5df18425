# A limiter case of the dynamics reference tests: scripts/gen_dynamics_reference.py writes
# this file and its expected outputs, tests/data/dynamics/limiter_lookahead_*.npy (fs = 48 kHz).
graph limiter_lookahead
input x : 2
output x | limiter(-9 dB, 20 ms, lookahead=1 ms)
