# A syntax error in a 'return' is one error, not a second one saying the function has none.
fn boost(g) {
  return in | gain(g +)
}
input x
output x | boost(2)
