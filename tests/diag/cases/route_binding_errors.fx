# Counts known only from the binding: reported with the node's location.
input x
p = x | pan(0.5)
s = x | swap()
output p + s
