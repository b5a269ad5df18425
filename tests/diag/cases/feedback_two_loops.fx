# Two loops without a delay, each reported where it closes; the loop with a delay is fine.
input x
a = x + 0.5 * (a | tanh())
b = x - 0.25 * b
c = x + 0.5 * (c | delay(10 ms))
output a + b + c
