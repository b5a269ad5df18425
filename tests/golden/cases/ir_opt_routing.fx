# RUN: fxc dump %s --emit ir-opt --fs 48000 --channels 2
# REQUIRES: avx2
# Channel routing after the passes: a split, a mid/side pair, a selection and a concatenation
# (select, matrix and concat nodes with the channel counts they make).
graph routing
input x
left, right = x
mid, side = x | ms_encode()
output wide = [left, side | highshelf(6 kHz, 3 dB), right]
output mono = x | sum_channels() | pan(0.25)
output back = [mid, side] | ms_decode()
