# fxc standard library: reverbs.
# import "std/reverb.fx". Each function processes the signal piped into it.

# ---- Freeverb (Jezar at Dreampoint, 2000, public domain) ----
# Eight lowpass-feedback combs in parallel, then four allpasses in series, with Jezar's
# published tuning: delays in samples (set for 44.1 kHz), fixed input gain 0.015, room size
# mapped to comb feedback 0.28 room + 0.7, damping 0.4 damp, allpass feedback 0.5.

# Jezar's comb: out = line[n - size]; store = (1 - damp) out + damp store[n - 1];
# line[n] = in + feedback store.
fn freeverb_comb(size, feedback, damp) {
  keep = 1 - damp
  pole = -1 * damp
  y = (in + feedback * (y | tf([keep], [1, pole]))) | delay(size)
  return y
}

# Jezar's allpass: out = line[n - size] - in; line[n] = in + feedback line[n - size].
fn freeverb_allpass(size, feedback = 0.5) {
  past = line | delay(size)
  line = in + feedback * past
  return past - in
}

# One Freeverb bank on each channel (Jezar's left bank; `spread` samples longer for his
# right one): 0.015 times the signal through the eight combs, summed, then the allpasses.
fn freeverb_mono(room = 0.5, damp = 0.5, spread = 0) {
  feedback = 0.28 * room + 0.7
  damping = 0.4 * damp
  c1 = 1116 + spread
  c2 = 1188 + spread
  c3 = 1277 + spread
  c4 = 1356 + spread
  c5 = 1422 + spread
  c6 = 1491 + spread
  c7 = 1557 + spread
  c8 = 1617 + spread
  a1 = 556 + spread
  a2 = 441 + spread
  a3 = 341 + spread
  a4 = 225 + spread
  x = 0.015 * in
  combs = (x | freeverb_comb(c1, feedback, damping)) + (x | freeverb_comb(c2, feedback, damping)) +
          (x | freeverb_comb(c3, feedback, damping)) + (x | freeverb_comb(c4, feedback, damping)) +
          (x | freeverb_comb(c5, feedback, damping)) + (x | freeverb_comb(c6, feedback, damping)) +
          (x | freeverb_comb(c7, feedback, damping)) + (x | freeverb_comb(c8, feedback, damping))
  return combs | freeverb_allpass(a1) | freeverb_allpass(a2) | freeverb_allpass(a3) | freeverb_allpass(a4)
}

# Jezar's stereo Freeverb: a stereo signal in, stereo out. Both banks take the sum of the two
# channels; the right bank's delays are 23 samples longer. `wet` and `dry` are Jezar's
# controls (scaled by 3 and 2), `width` spreads the wet signal between the channels.
fn freeverb(room = 0.5, damp = 0.5, wet = 0.3333333333333333, dry = 0, width = 1) {
  mono = in | sum_channels()
  left = mono | freeverb_mono(room, damp, 0)
  right = mono | freeverb_mono(room, damp, 23)
  wet1 = 3 * wet * (0.5 * width + 0.5)
  wet2 = 3 * wet * (0.5 - 0.5 * width)
  return [wet1 * left + wet2 * right, wet1 * right + wet2 * left] + 2 * dry * in
}

# ---- A feedback delay network (Jot and Chaigne, 1991) ----
# Four delay lines whose outputs, scaled by g (g < 1 sets the decay), are mixed by the
# Householder matrix I - (2/4) 1 1^T (lossless) and fed back with the input into every line.
# A mono signal in; out, the sum of the four lines' outputs.
fn fdn4(d1 = 1031, d2 = 1327, d3 = 1523, d4 = 1871, g = 0.9) {
  lines = [s[0] | delay(d1), s[1] | delay(d2), s[2] | delay(d3), s[3] | delay(d4)]
  s = [in, in, in, in] + g * (lines | mix([[0.5, -0.5, -0.5, -0.5], [-0.5, 0.5, -0.5, -0.5],
                                           [-0.5, -0.5, 0.5, -0.5], [-0.5, -0.5, -0.5, 0.5]]))
  return lines | sum_channels()
}
