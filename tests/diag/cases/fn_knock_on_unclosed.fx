# A body that is never closed ends before the first statement only a file can hold: one error
# there, with a note at its start; the statements after it are read as the file's.
fn boost(g) {
  return in | gain(g)
input x
output x | boost(2)
