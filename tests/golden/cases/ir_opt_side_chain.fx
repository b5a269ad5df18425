# RUN: fxc dump %s --emit ir-opt --fs 48000
# REQUIRES: avx2
# A side-chain and a link lower to a gain and a multiply: the compressor makes its gain from the
# voice (dynamics with output_gain), the music is multiplied by it; the limiter's gain comes
# from the link of the channels (their largest |x|), and the music, delayed by the lookahead,
# is multiplied by it.
graph side_chain
input x : 2
input voice : 1
music = x | compressor(-30 dB, 4, 1 ms, 200 ms, key=voice)
output music | limiter(-1 dB, 50 ms, lookahead=1 ms, link=max)
