# A loop's zero delay inside an imported function: the error at the body, a note at the call
# that gave the zero (there was none before 2026-11-29: with two calls, which one?).
import "std/delays.fx"
input x
a = x | comb(3, 0.5)
output a | comb(0, 0.5)
