"""The language-model head of the training and serving engine."""
