input left : 1
input stereo : 2
output left + stereo | gain(0.5)
