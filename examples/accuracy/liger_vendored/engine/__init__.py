"""The language-model head of the training engine, on vendored Liger-Kernel ops."""
