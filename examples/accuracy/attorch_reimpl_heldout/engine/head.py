"""The classifier head of the engine's encoder: a hidden projection, its
activation, the logit projection and the (log-)probabilities over classes.
Calls rowops; owns no kernels."""

import torch

import rowops.softmax as normalise
from rowops import activate_tensor as act


class ClassifierHead:
    """Weights of the head and the activation it was trained with."""

    def __init__(self, w_hidden, w_out, activation: str = "gelu"):
        self.w_hidden, self.w_out, self.activation = w_hidden, w_out, activation

    def __call__(self, features: torch.Tensor, log: bool = False) -> torch.Tensor:
        hidden = act(features @ self.w_hidden, self.activation)
        return normalise.softmax_rows(hidden @ self.w_out, log=log)
