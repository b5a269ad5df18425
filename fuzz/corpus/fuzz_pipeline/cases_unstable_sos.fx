input x
output x | sos([[1, 0, 0, 1, -2.5, 1.5]])
