# An import that cannot be read is one error: the calls of the functions it would have given
# are not reported again as unknown stages.
import "no_such_library.fx"
input x
output x | eq(3) | lowpass(1 kHz)
