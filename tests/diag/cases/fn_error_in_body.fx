# An error inside a function's body is reported there, with a note at each call.
input x : 2
fn bright(f) {
  return in | highshelf(f, 3 dB)
}
output x | bright(30 kHz) | bright(2 kHz)
