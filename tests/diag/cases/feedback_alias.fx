# Names bound only to each other name no signal: there is nothing for the loop to carry.
input x
a = b
b = c
c = a
y = y
output a + x
