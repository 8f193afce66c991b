"""The vision tower of the serving and training engine."""
