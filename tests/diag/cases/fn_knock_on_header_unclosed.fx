# A header error in a function whose body is never closed: the body ends before the next
# statement only a file holds (here another function), whose errors are still reported.
fn boost(a b) {
  return in | gain(a)
fn cut(g) {
  return in | gain(g)
}
input x
output x | cut(1) | lowpas(1 kHz)
