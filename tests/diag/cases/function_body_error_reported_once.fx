# A mistake in a function's body is reported once, with a note at each call (it was reported
# once per call).
fn f(a) {
  return in | gian(a)
}
input x
output a = x | f(2)
output b = x | f(3)
