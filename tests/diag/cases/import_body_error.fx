# An error inside an imported function shows the imported line and its caret, with a note at the call.
import "std/delays.fx"
input x
output x | echo(0 ms)
