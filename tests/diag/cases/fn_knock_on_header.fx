# An error in a function's header is one error: its body is not read as the file's statements,
# and its calls are not unknown stages.
fn boost(a b) {
  y = in | gain(a)
  return y
}
input x
output x | boost(1)
