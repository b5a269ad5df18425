# Calls that do not fit their function: each error points at the call and at the definition.
input x : 2
fn echo(time = 250 ms, feedback = 0.5) {
  y = in + feedback * (y | delay(time))
  return y
}
fn gain2(s, g) {
  return g * s
}
a = x | echo(feedbak = 0.3)
b = gain2(x)
c = echo(10 ms)
d = x | gain2(2)
output a + b + c + d
