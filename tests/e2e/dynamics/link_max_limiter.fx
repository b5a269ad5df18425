# A side-chain/link limiter case of the dynamics reference tests:
# scripts/gen_dynamics_reference.py writes this file and its expected output,
# tests/data/dynamics/link_max_limiter_*.npy (fs = 48 kHz; the inputs bind in order, x first).
graph link_max_limiter
input x : 2
output x | limiter(-9 dB, 20 ms, lookahead=1 ms, link=max)
