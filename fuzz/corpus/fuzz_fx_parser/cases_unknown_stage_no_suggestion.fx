input x
output x | reverb(2 s)
