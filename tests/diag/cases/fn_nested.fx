input x
fn outer(s) {
  fn inner(t) {
    return t
  }
  output s
  return s
}
output outer(x)
