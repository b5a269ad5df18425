# RUN: fxc dump %s --emit ast --format dot
# The AST as Graphviz, before names are resolved.
graph ast_dot
input x
y = x | tanh() | clip(-1, 1)
output y
