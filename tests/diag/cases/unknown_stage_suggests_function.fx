# An unknown stage's suggestion looks at the functions too, imported ones included ('ech'
# found no suggestion, and the list of stages left 'echo' out).
import "std/delays.fx"
input x
output x | ech(100 ms)
