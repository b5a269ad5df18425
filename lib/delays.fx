# fxc standard library: delays with feedback.
# import "std/delays.fx". Each function processes the signal piped into it: x | echo(300 ms).

# An echo: the signal, then repeats every `time`, each `feedback` times the one before and
# darker by a lowpass at `damping` (y = x + feedback * lowpass(y delayed by time)). The filter
# is after the delay, so the loop compiles to one kernel (fuse-loops).
fn echo(time = 250 ms, feedback = 0.5, damping = 5 kHz) {
  y = in + feedback * (y | delay(time) | lowpass(damping))
  return y
}

# A ping-pong delay on a stereo signal: the echoes alternate left and right. The mean of the
# two channels, (L + R) / 2, goes into the left delay line, which feeds the right one, which
# feeds back into the left through a lowpass at `damping`. Returns the dry signal plus the
# echoes.
fn pingpong(time = 300 ms, feedback = 0.5, damping = 6 kHz) {
  mono = 0.5 * (in | sum_channels())
  left = (mono + feedback * (right | lowpass(damping))) | delay(time)
  right = left | delay(time)
  return in + [left, right]
}

# A feedback comb filter: y[n] = x[n] + g y[n - d] (d in samples or as a time).
fn comb(d, g) {
  y = in + g * (y | delay(d))
  return y
}

# Schroeder's allpass: y[n] = -g x[n] + x[n - d] + g y[n - d], flat in magnitude.
fn schroeder_allpass(d, g = 0.5) {
  past = w | delay(d)
  w = in + g * past
  return past - g * w
}
