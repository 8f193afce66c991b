"""The decoder's feed-forward layers of the training and serving engine."""
