input stereo : 2
input mono
# mono gets 1 channel when the graph is bound, which then no longer matches
output stereo + mono | gain(0.5)
