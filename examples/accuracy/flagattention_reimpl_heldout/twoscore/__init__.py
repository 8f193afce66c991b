"""Two-score ("piecewise") attention for the engine: each query scores a key
with one query/key pair when the key is near and another pair when it is at
least a threshold behind it, then one softmax over the row. Forward only.
Must not import the engine."""
