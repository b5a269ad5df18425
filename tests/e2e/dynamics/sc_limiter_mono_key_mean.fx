# A side-chain/link limiter case of the dynamics reference tests:
# scripts/gen_dynamics_reference.py writes this file and its expected output,
# tests/data/dynamics/sc_limiter_mono_key_mean_*.npy (fs = 48 kHz; the inputs bind in order, x first).
graph sc_limiter_mono_key_mean
input x : 2
input key : 1
output x | limiter(-12 dB, 30 ms, lookahead=1 ms, key=key, link=mean)
