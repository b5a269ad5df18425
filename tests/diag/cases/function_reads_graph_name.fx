# A function's body does not see the graph's names: said as such, at a stage's argument (it
# read "found the word 'k'") and in an expression (a bare "unknown name").
input x
k = 2
fn f() { return in | gain(k) }
fn g() { return k * in }
output p = x | f()
output q = x | g()
