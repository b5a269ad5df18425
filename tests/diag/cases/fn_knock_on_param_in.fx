# A parameter named 'in' is one error, not a second one at each call for its missing argument.
fn boost(in, g = 2) {
  return in | gain(g)
}
input x
output x | boost()
