# An unknown stage suggests the nearest known name (the contract), also where the word only
# begins with one: 'butterworth' is 'butter', though more than a third of it away.
input x
output x | butterworth(2, 1 kHz)
