# fxc standard library: Linkwitz-Riley crossovers.
# import "std/crossover.fx". A Linkwitz-Riley filter of order 2n is a Butterworth filter of
# order n applied twice; the two bands at one frequency sum to an allpass (LR2's high band
# is inverted for that). Crossovers return their bands, lowest first:
#   low, mid, high = x | lr4_crossover3(200 Hz, 2 kHz)
# and each band goes through the allpasses of the frequencies it was not split at, so that
# the bands of a 3- or 4-band crossover also sum to an allpass.

# The general forms: n is the Butterworth order (1, 2 or 4 for LR2, LR4, LR8) and `sign`
# the high band's sign (-1 for LR2, 1 for LR4 and LR8).
fn lr_lowpass(f, n) {
  return in | butter(n, f) | butter(n, f)
}
fn lr_highpass(f, n, sign = 1) {
  return sign * (in | butter(n, f, highpass) | butter(n, f, highpass))
}
fn lr_allpass(f, n, sign = 1) {
  return (in | lr_lowpass(f, n)) + (in | lr_highpass(f, n, sign))
}
fn lr_crossover2(f, n, sign = 1) {
  return in | lr_lowpass(f, n), in | lr_highpass(f, n, sign)
}
fn lr_crossover3(f1, f2, n, sign = 1) {
  low = in | lr_lowpass(f1, n) | lr_allpass(f2, n, sign)
  rest = in | lr_highpass(f1, n, sign)
  return low, rest | lr_lowpass(f2, n), rest | lr_highpass(f2, n, sign)
}
fn lr_crossover4(f1, f2, f3, n, sign = 1) {
  low = in | lr_lowpass(f1, n) | lr_allpass(f2, n, sign) | lr_allpass(f3, n, sign)
  rest = in | lr_highpass(f1, n, sign)
  lowmid = rest | lr_lowpass(f2, n) | lr_allpass(f3, n, sign)
  upper = rest | lr_highpass(f2, n, sign)
  return low, lowmid, upper | lr_lowpass(f3, n), upper | lr_highpass(f3, n, sign)
}

# LR2 (12 dB/octave), LR4 (24 dB/octave) and LR8 (48 dB/octave).
fn lr2_lowpass(f) { return in | lr_lowpass(f, 1) }
fn lr2_highpass(f) { return in | lr_highpass(f, 1, -1) }
fn lr2_crossover2(f) { return in | lr_crossover2(f, 1, -1) }
fn lr2_crossover3(f1, f2) { return in | lr_crossover3(f1, f2, 1, -1) }
fn lr2_crossover4(f1, f2, f3) { return in | lr_crossover4(f1, f2, f3, 1, -1) }
fn lr4_lowpass(f) { return in | lr_lowpass(f, 2) }
fn lr4_highpass(f) { return in | lr_highpass(f, 2) }
fn lr4_crossover2(f) { return in | lr_crossover2(f, 2) }
fn lr4_crossover3(f1, f2) { return in | lr_crossover3(f1, f2, 2) }
fn lr4_crossover4(f1, f2, f3) { return in | lr_crossover4(f1, f2, f3, 2) }
fn lr8_lowpass(f) { return in | lr_lowpass(f, 4) }
fn lr8_highpass(f) { return in | lr_highpass(f, 4) }
fn lr8_crossover2(f) { return in | lr_crossover2(f, 4) }
fn lr8_crossover3(f1, f2) { return in | lr_crossover3(f1, f2, 4) }
fn lr8_crossover4(f1, f2, f3) { return in | lr_crossover4(f1, f2, f3, 4) }
