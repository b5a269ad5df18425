# A function whose body reads `in` is a chain: called without a signal piped in, the error
# says so at its use, with a note at the function (it said only "a chain with no input").
fn echo(time = 250 ms, feedback = 0.5) {
  return in + feedback * (in | delay(time))
}
input x : 2
output echo(300 ms, 0.3)
