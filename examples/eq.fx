# A five-band mastering EQ: a low cut, two shelves and two bells, then a safety clip.
graph eq
input x : 2

fc      = 30 Hz in [20 Hz, 120 Hz]   # the low cut: a live parameter (fxc run --set fc=40Hz)
low_cut = highpass(fc, 0.7)
shelves = lowshelf(120 Hz, 2 dB) | highshelf(f0=8 kHz, gain=1.5 dB, q=0.6)
bells   = peaking(400 Hz, 1.4, -2.5 dB) |   # tame the boxiness
          peaking(2.5 kHz, q=2, gain=1 dB)  # a little presence

output y = x | low_cut | shelves | bells | gain(-1 dB) | clip(-1, 1)
